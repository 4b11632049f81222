package sso

import (
	"errors"
	"time"
)

// Sources of users. Local users have a password in the platform database;
// the others sign in through their directory.
const (
	SourceLocal = "local"
	SourceOIDC  = "oidc"
	SourceLDAP  = "ldap"
)

// Identity is what a directory says about a person at sign-in or at a
// recheck.
type Identity struct {
	// Source is SourceOIDC or SourceLDAP.
	Source string
	// Subject identifies the person in the directory for good: the OIDC
	// "sub" claim (with the issuer, which Config fixes), the LDAP entry's
	// DN. The platform's user is found by (Source, Subject).
	Subject string
	// Username is the name the console shows and the audit log records
	// (OIDC: the configured claim, preferred_username by default; LDAP:
	// the user name attribute, uid or sAMAccountName).
	Username string
	// Email, when the directory gives one.
	Email string
	// Groups are the person's groups as the mapping names them: values of
	// the OIDC groups claim, LDAP group DNs.
	Groups []string
}

// Errors of the directories. The providers wrap them with what happened.
var (
	// ErrBadCredentials: the directory refused the user name and password
	// (LDAP) or the sign-in response (OIDC: state, nonce, token checks).
	ErrBadCredentials = errors.New("sign-in refused")
	// ErrUnavailable: the directory could not be asked (down, timeout, TLS
	// error). A recheck that fails this way keeps the last answer for
	// Config.RecheckGrace.
	ErrUnavailable = errors.New("directory unavailable")
	// ErrGone: the directory no longer knows the person (LDAP entry gone,
	// OIDC refresh refused): their access ends.
	ErrGone = errors.New("no longer in the directory")
)

// Pending is an OIDC sign-in begun: the random state, nonce and PKCE
// verifier the callback is checked with. The admin keeps it in the
// platform database by the hash of State until the callback takes it,
// once.
type Pending struct {
	State, Nonce string
	// Verifier is the PKCE code verifier.
	Verifier string
}

// Tokens are what an OIDC provider answered besides the identity.
type Tokens struct {
	// IDToken is the raw ID token (the hint of an RP-initiated logout).
	IDToken string
	// RefreshToken rechecks the user later; empty when none was issued.
	RefreshToken string
	// Expiry is when the ID token expires.
	Expiry time.Time
}
