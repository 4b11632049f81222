package ops

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/sso"
	"github.com/shardjob/shardjob/admin/store"
)

// ErrUnavailable is the kind of refusal of a sign-in or a request that
// needs a directory that cannot be reached (503).
var ErrUnavailable = errors.New("directory unavailable")

// PendingSignInTTL is how long a begun OIDC sign-in may take to come back.
const PendingSignInTTL = 10 * time.Minute

// LDAPDirectory checks passwords and answers rechecks (admin/sso/ldapauth).
type LDAPDirectory interface {
	SignIn(ctx context.Context, username, password string) (sso.Identity, error)
	Lookup(ctx context.Context, subject string) (sso.Identity, error)
}

// OIDCProvider runs the authorization-code flow and answers rechecks
// with a refresh token (admin/sso/oidcauth).
type OIDCProvider interface {
	Begin(ctx context.Context) (authURL string, p sso.Pending, err error)
	Finish(ctx context.Context, p sso.Pending, state, code string) (sso.Identity, sso.Tokens, error)
	Refresh(ctx context.Context, refreshToken string) (sso.Identity, sso.Tokens, error)
	LogoutURL(ctx context.Context, idTokenHint, postLogoutRedirect string) (string, bool)
}

// Directories is single sign-on: the --sso-config file and the
// directories it configures.
type Directories struct {
	Config sso.Config
	// LDAP and OIDC: nil when not configured.
	LDAP LDAPDirectory
	OIDC OIDCProvider
	// Sealer seals the OIDC refresh tokens kept to recheck users;
	// required with OIDC.
	Sealer *sso.Sealer
}

func (s *Service) sso() *Directories { return s.cfg.SSO }

// SignInLDAP checks a user name and password with the LDAP directory and
// returns the platform's user, created at the first sign-in and given
// what the mapping says now. Refusals: ErrCredential (wrong name or
// password), ErrForbidden (no mapped group), ErrConflict (the name is a
// local user's), ErrUnavailable (the directory cannot be reached).
func (s *Service) SignInLDAP(ctx context.Context, username, password string) (store.User, error) {
	d := s.sso()
	if d == nil || d.LDAP == nil {
		return store.User{}, refuse(ErrCredential, "wrong user name or password", nil)
	}
	id, err := d.LDAP.SignIn(ctx, username, password)
	if err != nil {
		return store.User{}, directoryRefusal(err, "LDAP")
	}
	return s.applyIdentity(ctx, id, "")
}

// directoryRefusal is the refusal of a directory's error at sign-in.
func directoryRefusal(err error, which string) error {
	switch {
	case errors.Is(err, sso.ErrUnavailable):
		return refuse(ErrUnavailable, "the "+which+" directory cannot be reached ("+err.Error()+"); try again later, or sign in with a local account", nil)
	case errors.Is(err, sso.ErrBadCredentials), errors.Is(err, sso.ErrGone):
		if which == "LDAP" {
			return refuse(ErrCredential, "wrong user name or password", nil)
		}
		return refuse(ErrCredential, "sign-in refused: "+err.Error()+"; start again from the sign-in page", nil)
	}
	return err
}

// applyIdentity writes what a directory said of a person at sign-in:
// created at the first, mapped again at every one. sealedRefresh is kept
// to recheck an OIDC user ("" keeps the stored one).
func (s *Service) applyIdentity(ctx context.Context, id sso.Identity, refresh string) (store.User, error) {
	d := s.sso()
	now := s.cfg.Clock.Now()
	grant, ok := d.Config.Mapping.Resolve(id.Source, id.Groups)
	u, err := s.st.UserBySubject(ctx, id.Source, id.Subject)
	found := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.User{}, err
	}
	if !ok {
		reason := "none of your groups is mapped to a role"
		if found {
			if err := s.refuseUser(ctx, u, reason, id.Groups); err != nil {
				return store.User{}, err
			}
		}
		s.auditSignIn(ctx, u, id, "login.refused", map[string]any{"reason": reason, "groups": id.Groups})
		return store.User{}, refuse(ErrForbidden, fmt.Sprintf("%s (your groups: %s): ask an administrator to map one of them in the SSO configuration", reason, groupList(id.Groups)), nil)
	}
	if refresh != "" && d.Sealer != nil {
		refresh = d.Sealer.Seal(refresh)
	}
	w := store.SSOUser{Source: id.Source, Subject: id.Subject, Username: id.Username, Email: id.Email,
		Role: grant.Role, Apps: grant.Apps, CheckedAt: now.UnixMilli(), RefreshToken: refresh}
	if !found {
		newID, err := s.st.CreateSSOUser(ctx, w)
		if errors.Is(err, store.ErrConflict) {
			return store.User{}, refuse(ErrConflict, fmt.Sprintf("the user name %q is taken by another account of this platform: an administrator must rename or delete it before %q can sign in through %s", id.Username, id.Username, id.Source), nil)
		}
		if err != nil {
			return store.User{}, err
		}
		u, err = s.st.User(ctx, newID)
		if err != nil {
			return store.User{}, err
		}
		s.auditSignIn(ctx, u, id, "user.create", map[string]any{"source": id.Source, "subject": id.Subject, "role": grant.Role, "apps": appsOrAll(grant.Apps)})
		return u, nil
	}
	if err := s.remap(ctx, u, id, w); err != nil {
		return store.User{}, err
	}
	return s.st.User(ctx, u.ID)
}

// remap writes a new answer of the directory for user u and audits a
// change of role or apps.
func (s *Service) remap(ctx context.Context, u store.User, id sso.Identity, w store.SSOUser) error {
	err := s.st.ApplySSOUser(ctx, u.ID, w)
	if errors.Is(err, store.ErrConflict) {
		return refuse(ErrConflict, fmt.Sprintf("the directory renamed you to %q, a name another account of this platform holds: an administrator must rename or delete that account", id.Username), nil)
	}
	if err != nil {
		return err
	}
	if apps := strings.Join(w.Apps, ","); u.Role != w.Role || u.Apps != apps || u.Refused != "" {
		s.auditSignIn(ctx, u, id, "user.mapping", map[string]any{
			"role": map[string]string{"from": u.Role, "to": w.Role}, "apps": map[string]any{"from": appsOrAll(AppsOf(u)), "to": appsOrAll(w.Apps)},
			"groups": id.Groups, "was_refused": u.Refused,
		})
	}
	return nil
}

func (s *Service) refuseUser(ctx context.Context, u store.User, reason string, groups []string) error {
	if err := s.st.RefuseUser(ctx, u.ID, reason); err != nil {
		return err
	}
	s.auditSignIn(ctx, u, sso.Identity{Source: u.Source, Subject: u.Subject, Username: u.Username}, "user.refused", map[string]any{"reason": reason, "groups": groups})
	return nil
}

// auditSignIn records a directory event about user u (the person id
// when u is not yet a user): admins and the user may read it.
func (s *Service) auditSignIn(ctx context.Context, u store.User, id sso.Identity, action string, detail map[string]any) {
	name := u.Username
	if name == "" {
		name = id.Username
	}
	detail["source"], detail["subject"] = id.Source, id.Subject
	s.Audit(ctx, Actor{User: store.User{Username: name}}, store.AuditEntry{OwnerID: u.ID, Action: action, Object: userObject(name)}, detail)
}

func groupList(groups []string) string {
	if len(groups) == 0 {
		return "none"
	}
	return strings.Join(groups, "; ")
}

func appsOrAll(apps []string) any {
	if len(apps) == 0 {
		return "all"
	}
	return apps
}

// Recheck asks the directory again about a directory user whose last
// answer is older than Config.Recheck, at most one request at a time per
// user, and returns the user as they are now. Refusals: ErrCredential when
// the user is refused (the directory no longer knows them, or none of
// their groups is mapped: their sessions are ended), ErrUnavailable when
// the directory cannot be asked and the last answer is older than
// Recheck + RecheckGrace. Local users pass as they are.
func (s *Service) Recheck(ctx context.Context, u store.User) (store.User, error) {
	if u.Source == "" || u.Source == sso.SourceLocal {
		return u, nil
	}
	if u.Refused != "" {
		return u, refusedUser(u)
	}
	d := s.sso()
	if d == nil {
		return u, refuse(ErrCredential, fmt.Sprintf("user %s signs in through %s, which this admin is not configured for (--sso-config)", u.Username, u.Source), nil)
	}
	now := s.cfg.Clock.Now()
	every := d.Config.RecheckEvery()
	if now.UnixMilli()-u.CheckedAt < every.Milliseconds() && every > 0 {
		return u, nil
	}
	// After a failed attempt (recheck_at past the last answer), ask again
	// at most every recheckBackoff, so that a directory that is down does
	// not cost every request its timeout.
	if u.RecheckAt > u.CheckedAt && now.UnixMilli()-u.RecheckAt < recheckBackoff.Milliseconds() {
		return s.withinGrace(u, now, d, nil)
	}
	won, err := s.st.ClaimRecheck(ctx, u, now)
	if err != nil {
		return u, err
	}
	if !won {
		return u, nil // another request asks now; the last answer stands meanwhile
	}
	id, refresh, err := s.askDirectory(ctx, u, d)
	switch {
	case errors.Is(err, sso.ErrGone):
		if err := s.refuseUser(ctx, u, "the directory no longer knows you: "+err.Error(), nil); err != nil {
			return u, err
		}
		u.Refused = "the directory no longer knows you"
		return u, refusedUser(u)
	case err != nil:
		s.log.Warn("sso recheck failed", "user", u.Username, "source", u.Source, "err", err)
		return s.withinGrace(u, now, d, err)
	}
	if id.Subject != u.Subject && (u.Source != sso.SourceLDAP || sso.NormalizeDN(id.Subject) != sso.NormalizeDN(u.Subject)) {
		// A refresh must answer for the person it was issued to.
		reason := "the directory answered for another person"
		if err := s.refuseUser(ctx, u, reason+" ("+id.Subject+")", nil); err != nil {
			return u, err
		}
		u.Refused = reason
		return u, refusedUser(u)
	}
	grant, ok := d.Config.Mapping.Resolve(id.Source, id.Groups)
	if !ok {
		reason := "none of your groups is mapped to a role"
		if err := s.refuseUser(ctx, u, reason, id.Groups); err != nil {
			return u, err
		}
		u.Refused = reason
		return u, refusedUser(u)
	}
	if refresh != "" {
		refresh = d.Sealer.Seal(refresh)
	}
	w := store.SSOUser{Username: id.Username, Email: id.Email, Role: grant.Role, Apps: grant.Apps, CheckedAt: now.UnixMilli(), RefreshToken: refresh}
	if err := s.remap(ctx, u, id, w); err != nil {
		return u, err
	}
	return s.st.User(ctx, u.ID)
}

// recheckBackoff spaces the attempts to reach a directory that failed.
const recheckBackoff = 10 * time.Second

// withinGrace lets u through while their last answer is younger than
// Recheck + RecheckGrace, and refuses with ErrUnavailable after.
func (s *Service) withinGrace(u store.User, now time.Time, d *Directories, cause error) (store.User, error) {
	limit := d.Config.RecheckEvery() + d.Config.Grace()
	if now.UnixMilli()-u.CheckedAt <= limit.Milliseconds() {
		return u, nil
	}
	why := "it did not answer"
	if cause != nil {
		why = cause.Error()
	}
	return u, refuse(ErrUnavailable, fmt.Sprintf("your access could not be checked with the %s directory for %s (%s): try again later; local accounts are not affected",
		u.Source, now.Sub(time.UnixMilli(u.CheckedAt)).Round(time.Second), why), nil)
}

// askDirectory is the recheck of u by their directory: the identity now,
// and a new refresh token (OIDC) when one was issued.
func (s *Service) askDirectory(ctx context.Context, u store.User, d *Directories) (sso.Identity, string, error) {
	switch u.Source {
	case sso.SourceLDAP:
		if d.LDAP == nil {
			return sso.Identity{}, "", fmt.Errorf("LDAP is not configured (--sso-config): %w", sso.ErrGone)
		}
		id, err := d.LDAP.Lookup(ctx, u.Subject)
		return id, "", err
	case sso.SourceOIDC:
		if d.OIDC == nil {
			return sso.Identity{}, "", fmt.Errorf("OIDC is not configured (--sso-config): %w", sso.ErrGone)
		}
		sealed, err := s.st.UserRefreshToken(ctx, u.ID)
		if err != nil {
			return sso.Identity{}, "", err
		}
		token, err := d.Sealer.Open(sealed)
		if err != nil || token == "" {
			return sso.Identity{}, "", fmt.Errorf("no usable refresh token (sign in again): %w", sso.ErrGone)
		}
		id, tokens, err := d.OIDC.Refresh(ctx, token)
		return id, tokens.RefreshToken, err
	}
	return sso.Identity{}, "", fmt.Errorf("unknown source %q: %w", u.Source, sso.ErrGone)
}

func refusedUser(u store.User) error {
	return refuse(ErrCredential, "access of "+u.Username+" ended: "+u.Refused+"; sign in again once your directory groups give you access", nil)
}

// BeginOIDC starts an OIDC sign-in that comes back to the console path
// returnTo: it keeps the pending state and returns the provider's URL to
// send the browser to.
func (s *Service) BeginOIDC(ctx context.Context, returnTo string) (string, error) {
	d := s.sso()
	if d == nil || d.OIDC == nil {
		return "", refuse(ErrNotFound, "OIDC sign-in is not configured (--sso-config)", nil)
	}
	if err := CheckReturnPath(returnTo); err != nil {
		return "", err
	}
	authURL, p, err := d.OIDC.Begin(ctx)
	if err != nil {
		return "", directoryRefusal(err, "OIDC")
	}
	if err := s.st.SavePendingSignIn(ctx, auth.HashToken(p.State), store.PendingSignIn{Nonce: p.Nonce, Verifier: p.Verifier, ReturnTo: returnTo}, PendingSignInTTL); err != nil {
		return "", err
	}
	return authURL, nil
}

// FinishOIDC completes the OIDC sign-in of state with the provider's code:
// the user, and the console path to return to. A state serves once.
func (s *Service) FinishOIDC(ctx context.Context, state, code string) (store.User, string, error) {
	d := s.sso()
	if d == nil || d.OIDC == nil {
		return store.User{}, "", refuse(ErrNotFound, "OIDC sign-in is not configured (--sso-config)", nil)
	}
	if state == "" || code == "" {
		return store.User{}, "", refuse(ErrInvalid, "the provider's answer has no state or no code: start again from the sign-in page", nil)
	}
	p, err := s.st.TakePendingSignIn(ctx, auth.HashToken(state))
	if errors.Is(err, store.ErrNotFound) {
		return store.User{}, "", refuse(ErrInvalid, "this sign-in was used already, has expired ("+PendingSignInTTL.String()+") or was not begun here: start again from the sign-in page", nil)
	}
	if err != nil {
		return store.User{}, "", err
	}
	id, tokens, err := d.OIDC.Finish(ctx, sso.Pending{State: state, Nonce: p.Nonce, Verifier: p.Verifier}, state, code)
	if err != nil {
		s.auditSignIn(ctx, store.User{}, sso.Identity{Source: sso.SourceOIDC, Username: "(unknown)"}, "login.failed", map[string]any{"reason": err.Error()})
		return store.User{}, "", directoryRefusal(err, "OIDC")
	}
	u, err := s.applyIdentity(ctx, id, tokens.RefreshToken)
	if err != nil {
		return store.User{}, "", err
	}
	return u, p.ReturnTo, nil
}

// OIDCLogoutURL is where to send the browser of an OIDC user who signs out
// so that the provider ends its session too; false when it offers none.
func (s *Service) OIDCLogoutURL(ctx context.Context, u store.User, postLogout string) (string, bool) {
	d := s.sso()
	if d == nil || d.OIDC == nil || u.Source != sso.SourceOIDC {
		return "", false
	}
	return d.OIDC.LogoutURL(ctx, "", postLogout)
}

// consolePaths are the console's own routes a sign-in may return to: the
// page itself, with a route after '#'.
var consolePaths = []string{"/", "/index.html"}

// CheckReturnPath accepts the console's own paths only ("/", "/#/jobs/7"):
// no other host, scheme or path, so that the sign-in cannot be used to
// redirect elsewhere (an open redirect).
func CheckReturnPath(p string) error {
	u, err := url.Parse(p)
	bad := err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.RawQuery != "" || !slices.Contains(consolePaths, u.Path) ||
		strings.ContainsAny(p, "\\\r\n\t") || strings.HasPrefix(p, "//")
	if bad {
		return refuse(ErrInvalid, fmt.Sprintf("return path %q is not a page of this console: use / or /#/<page>", p), nil)
	}
	return nil
}
