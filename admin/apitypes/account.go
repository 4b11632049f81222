package apitypes

import "time"

// LoginRequest is the body of POST /login.
type LoginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// LoginResponse is the answer of POST /login: the session token, its CSRF
// token, and who signed in.
type LoginResponse struct {
	Token    string `json:"token"`
	CSRF     string `json:"csrf"`
	Username string `json:"username"`
	Role     string `json:"role"`
}

// APIKeyView is an API key as the API lists it (never the secret).
type APIKeyView struct {
	ID         int64      `json:"id"`
	User       string     `json:"user"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	RoleCap    string     `json:"role_cap,omitempty"`
	State      string     `json:"state"` // active, expired or revoked
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// ParentID is the API key that created this one (null: created from a
	// console session); revoking the parent revokes this one.
	ParentID *int64 `json:"parent_id"`
}

// APIKeyRequest is the body of POST /api-keys (and of its old name POST
// /tokens).
type APIKeyRequest struct {
	// Name tells the key apart ("ci deploy", "laptop"); required.
	Name string `json:"name"`
	// Role caps the key below the caller's role; empty: no cap (the
	// caller's role), or the caller's current role when the caller itself
	// authenticated with an API key.
	Role string `json:"role"`
	// ExpiresInDays, 1-3650; 0: the key does not expire. Absent: it does
	// not expire either, unless the caller authenticated with an API key
	// that expires: then the new key expires with it.
	ExpiresInDays *int `json:"expires_in_days"`
}

// CreatedAPIKey is the answer to a creation: the only time the secret is
// shown. (Its JSON key "token" is the old name of the API key, kept for
// existing scripts.)
type CreatedAPIKey struct {
	Key    APIKeyView `json:"token"`
	Secret string     `json:"secret"`
	Note   string     `json:"note"`
}

// APIKeyList is the answer of GET /api-keys (JSON key "tokens": the old
// name, kept for existing scripts).
type APIKeyList struct {
	Keys []APIKeyView `json:"tokens"`
}

// RevokedAPIKey is the answer of DELETE /api-keys/{id}: the key as it is
// now, whether this request revoked it (false: it was revoked already) and
// the keys created with it that were revoked with it.
type RevokedAPIKey struct {
	Key         APIKeyView `json:"token"`
	Revoked     bool       `json:"revoked"`
	AlsoRevoked []int64    `json:"also_revoked"`
}

// UserList is the answer of GET /users.
type UserList struct {
	Users []UserView `json:"users"`
}

// UserView is a console user (never the password hash).
type UserView struct {
	ID        int64     `json:"id"`
	Username  string    `json:"username"`
	Role      string    `json:"role"`
	Apps      []string  `json:"apps"` // apps the user is limited to; empty: every app
	CreatedAt time.Time `json:"created_at"`
	// Source is where the user signs in: local, oidc or ldap. The role and
	// apps of a directory user come from the SSO mapping.
	Source string `json:"source"`
	// Email of a directory user, when the directory gives one.
	Email string `json:"email,omitempty"`
	// Refused says why a directory user's access ended ("" when it has not).
	Refused string `json:"refused,omitempty"`
}

// SSOInfo is the answer of GET /sso: how people sign in here.
type SSOInfo struct {
	// Password: local users sign in with a password (--auth-local);
	// when false only the break-glass user may.
	Password bool `json:"password"`
	// LDAP: the password form also takes directory (LDAP) accounts.
	LDAP bool `json:"ldap"`
	// OIDC is the OpenID Connect provider, when configured.
	OIDC *SSOProvider `json:"oidc,omitempty"`
}

// SSOProvider is an OIDC provider of the sign-in page: its button label
// and where the button goes (add ?return=/#/page to come back there).
type SSOProvider struct {
	Name     string `json:"name"`
	LoginURL string `json:"login_url"`
}

// LogoutResponse is the answer of POST /logout; LogoutURL, when set, is
// the provider's page that ends the OIDC session too (RP-initiated
// logout): send the browser there.
type LogoutResponse struct {
	OK        bool   `json:"ok"`
	LogoutURL string `json:"logout_url,omitempty"`
}

// UserRequest is the body of POST /users.
type UserRequest struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Role     string   `json:"role"`
	Apps     []string `json:"apps"` // optional: limit the user to these apps
}

// UserUpdate is the body of PUT /users/{id}: only the fields sent change.
type UserUpdate struct {
	Role     *string   `json:"role"`
	Password *string   `json:"password"`
	Apps     *[]string `json:"apps"` // [] lifts the limit
}

// PasswordChange is the body of POST /me/password.
type PasswordChange struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// AuditView is one audit log entry.
type AuditView struct {
	ID     int64     `json:"id"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	Object string    `json:"object"`
	Detail string    `json:"detail"`
	// App is the app of the object ("" for users, API keys and the platform).
	App string `json:"app"`
	// APIKeyID and APIKeyName are the API key the actor acted with; absent
	// for a console session or a login. (JSON keys of the old name.)
	APIKeyID   *int64 `json:"token_id,omitempty"`
	APIKeyName string `json:"token_name,omitempty"`
}

// AuditQuery selects a page of the audit log (GET /audit's query).
type AuditQuery struct {
	// Before is the id of the last entry of the previous page; 0: the
	// newest.
	Before int64
	// Limit is the page size, 1-500; otherwise 100.
	Limit int
	// Actor is a user name; Action and Object are prefixes ("token.",
	// "job/5"). At most 255 bytes each.
	Actor, Action, Object string
	// From and To bound the entries' time, [From, To); nil: unbounded.
	From, To *time.Time
}

// AuditPage is the answer of GET /audit: entries newest first, and the id
// to pass as before for the next page when the page is full.
type AuditPage struct {
	Entries    []AuditView `json:"entries"`
	NextBefore *int64      `json:"next_before,omitempty"`
}
