// Package oidcauth signs people in through an OpenID Connect provider: the
// authorization-code flow with PKCE (S256), state and nonce, on
// coreos/go-oidc (discovery, JWKS, ID token signature, issuer, audience and
// expiry) and golang.org/x/oauth2 (authorization URL, code exchange,
// refresh). It holds no session and no HTTP handler: the admin's API stores
// what Begin returns and calls Finish from its callback.
//
// # Sign-in
//
//  1. Begin returns the provider's authorization URL and a Pending: a
//     random state, nonce and PKCE verifier (256 bits each). The caller
//     keeps the Pending server-side, keyed by a hash of State, with a short
//     lifetime, and sends the browser to the URL.
//  2. The provider sends the browser back to Config.RedirectURL with state
//     and code. The caller looks the Pending up by the hash of the state it
//     received and deletes it before anything else: a state is good for
//     one try, so a replayed callback finds nothing (replay protection lives
//     there, in the caller's store).
//  3. Finish compares the state with Pending.State (constant time), exchanges
//     the code with the verifier, verifies the ID token (signature against
//     the provider's JWKS, issuer, audience = client id, expiry and issue
//     time within Config.ClockSkew either way, nonce = Pending.Nonce, at_hash
//     when present) and returns the Identity and the Tokens.
//
// # Recheck
//
// Refresh uses the refresh token (asked for with offline_access when the
// provider offers it) and verifies the new ID token the same way, without a
// nonce; its Identity carries the groups the provider gives now. The caller
// checks that the Subject is still the signed-in user's. A refusal by the
// provider (invalid_grant: user disabled, token revoked) is sso.ErrGone;
// a provider that cannot be asked is sso.ErrUnavailable.
//
// # Errors
//
// A sign-in response that fails a check wraps sso.ErrBadCredentials with
// the reason in words ("the ID token expired at …"); a provider that does
// not answer, or answers with a server error, wraps sso.ErrUnavailable.
//
// # Discovery
//
// New does no I/O. The discovery document is fetched at the first call that
// needs it and kept once it was read; when it fails (the provider is down
// while the admin starts) the next call tries again. One call discovers at
// a time; the others wait for it (bounded by the HTTP client's timeouts). Keys are fetched from
// jwks_uri when a token names a key id not seen yet, so a key rotation at
// the provider needs no restart.
package oidcauth
