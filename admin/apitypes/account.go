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

// TokenView is an API token as the API lists it (never the secret).
type TokenView struct {
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
	// ParentID is the token that created this one (null: created from a
	// console session); revoking the parent revokes this one.
	ParentID *int64 `json:"parent_id"`
}

// TokenRequest is the body of POST /tokens.
type TokenRequest struct {
	// Name tells the token apart ("ci deploy", "laptop"); required.
	Name string `json:"name"`
	// Role caps the token below the caller's role; empty: no cap (the
	// caller's role), or the caller's current role when the caller itself
	// authenticated with a token.
	Role string `json:"role"`
	// ExpiresInDays, 1-3650; 0: the token does not expire. Absent: it does
	// not expire either, unless the caller authenticated with a token that
	// expires: then the new token expires with it.
	ExpiresInDays *int `json:"expires_in_days"`
}

// CreatedToken is the answer to a creation: the only time the secret is shown.
type CreatedToken struct {
	Token  TokenView `json:"token"`
	Secret string    `json:"secret"`
	Note   string    `json:"note"`
}

// UserView is a console user (never the password hash).
type UserView struct {
	ID        int64     `json:"id"`
	Username  string    `json:"username"`
	Role      string    `json:"role"`
	Apps      []string  `json:"apps"` // apps the user is limited to; empty: every app
	CreatedAt time.Time `json:"created_at"`
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
	// App is the app of the object ("" for users, tokens and the platform).
	App string `json:"app"`
	// TokenID and TokenName are the API token the actor acted with; absent
	// for a console session or a login.
	TokenID   *int64 `json:"token_id,omitempty"`
	TokenName string `json:"token_name,omitempty"`
}
