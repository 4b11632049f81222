package oidcauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/shardjob/shardjob/admin/sso"
)

// Finish completes a sign-in: state and code are the parameters of the
// provider's redirect to Config.RedirectURL, pending what Begin gave for
// it. It exchanges the code (with the PKCE verifier), verifies the ID token
// and returns who signed in. A response that fails a check wraps
// sso.ErrBadCredentials, saying which; a provider that cannot be reached
// wraps sso.ErrUnavailable.
func (p *Provider) Finish(ctx context.Context, pending Pending, state, code string) (sso.Identity, Tokens, error) {
	switch {
	case pending.State == "" || pending.Nonce == "" || pending.Verifier == "":
		return refuse("no sign-in is pending for this response (it expired or was used already); sign in again")
	case subtle.ConstantTimeCompare([]byte(state), []byte(pending.State)) != 1:
		return refuse("the state of the provider's response is not the one of the sign-in that was started; sign in again")
	case code == "":
		return refuse("the provider's response holds no authorization code")
	}
	d, err := p.discover(ctx)
	if err != nil {
		return sso.Identity{}, Tokens{}, err
	}
	tok, err := d.oauth.Exchange(p.withClient(ctx), code, oauth2.VerifierOption(pending.Verifier))
	if err != nil {
		return sso.Identity{}, Tokens{}, p.tokenError("the exchange of the authorization code", err, sso.ErrBadCredentials, true)
	}
	return p.verify(ctx, d, tok, pending.Nonce)
}

// Refresh asks the provider again about a signed-in user with their
// refresh token: the periodic recheck. The new ID token is verified as at
// sign-in (without a nonce), and its Identity has the groups the provider
// gives now; the caller checks that its Subject is the user's. Tokens
// holds the new refresh token (or the same one, when the provider does
// not rotate them). A refused refresh (invalid_grant: the user was
// disabled, the token revoked) wraps sso.ErrGone; a provider that cannot
// be asked wraps sso.ErrUnavailable; a new ID token that fails a check
// wraps sso.ErrBadCredentials.
func (p *Provider) Refresh(ctx context.Context, refreshToken string) (sso.Identity, Tokens, error) {
	if refreshToken == "" {
		return sso.Identity{}, Tokens{}, fmt.Errorf("%w: no refresh token was kept at sign-in (the provider gave none: allow offline_access or refresh tokens for the client); sign in again", sso.ErrGone)
	}
	d, err := p.discover(ctx)
	if err != nil {
		return sso.Identity{}, Tokens{}, err
	}
	tok, err := d.oauth.TokenSource(p.withClient(ctx), &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err != nil {
		return sso.Identity{}, Tokens{}, p.tokenError("the refresh", err, sso.ErrGone, false)
	}
	return p.verify(ctx, d, tok, "")
}

// refuse is a sign-in refused for reason.
func refuse(format string, args ...any) (sso.Identity, Tokens, error) {
	return sso.Identity{}, Tokens{}, fmt.Errorf("%w: %s", sso.ErrBadCredentials, fmt.Sprintf(format, args...))
}

// verify checks the ID token of a token response and reads the identity
// from it; nonce is "" for a refresh.
func (p *Provider) verify(ctx context.Context, d *discovered, tok *oauth2.Token, nonce string) (sso.Identity, Tokens, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return refuse("the provider's token response holds no ID token (is the openid scope allowed for the client?)")
	}
	idt, err := d.verifier.Verify(p.withClient(ctx), raw)
	if err != nil {
		return p.verifyError(err)
	}
	skew := p.cfg.ClockSkew
	now := time.Now()
	if idt.IssuedAt.After(now.Add(skew)) {
		return refuse("the ID token was issued at %s, later than now by more than the allowed clock skew (%s); check the clocks of the provider and of this host",
			idt.IssuedAt.UTC().Format(time.RFC3339), skew)
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return refuse("the ID token's claims cannot be read: %v", err)
	}
	if nbf, ok := claims["nbf"].(float64); ok && time.Unix(int64(nbf), 0).After(now.Add(skew)) {
		return refuse("the ID token is not valid before %s, later than now by more than the allowed clock skew (%s)",
			time.Unix(int64(nbf), 0).UTC().Format(time.RFC3339), skew)
	}
	if azp, _ := claims["azp"].(string); len(idt.Audience) > 1 && azp != p.cfg.ClientID {
		return refuse("the ID token names several audiences and its authorized party (azp) %q is not this client (%q)", azp, p.cfg.ClientID)
	}
	if nonce != "" && subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return refuse("the ID token's nonce is not the one of the sign-in that was started (a token of another sign-in, or replayed)")
	}
	if idt.AccessTokenHash != "" && tok.AccessToken != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return refuse("the access token does not match the ID token's at_hash: %v", err)
		}
	}
	id, err := p.identity(idt.Subject, claims)
	if err != nil {
		return sso.Identity{}, Tokens{}, err
	}
	return id, Tokens{IDToken: raw, RefreshToken: tok.RefreshToken, Expiry: idt.Expiry}, nil
}

// verifyError says why go-oidc refused an ID token. go-oidc flattens the
// error of a failed key fetch into text ("fetching keys"); that case is the
// provider being unavailable, not a bad token.
func (p *Provider) verifyError(err error) (sso.Identity, Tokens, error) {
	var expired *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &expired):
		return refuse("the ID token expired at %s, more than the allowed clock skew (%s) ago; check the clocks of the provider and of this host if this repeats",
			expired.Expiry.UTC().Format(time.RFC3339), p.cfg.ClockSkew)
	case strings.Contains(msg, "fetching keys"):
		return sso.Identity{}, Tokens{}, fmt.Errorf("%w: the OIDC provider's signing keys (jwks_uri) could not be fetched: %w", sso.ErrUnavailable, err)
	case strings.Contains(msg, "failed to verify signature"):
		return refuse("the ID token's signature does not verify with any key the provider publishes (forged, or signed by a key it does not publish): %v", err)
	case strings.Contains(msg, "different provider"):
		return refuse("the ID token was issued by another provider than oidc.issuer %q: %v", p.cfg.Issuer, err)
	case strings.Contains(msg, "expected audience"):
		return refuse("the ID token was issued for another client than oidc.client_id %q: %v", p.cfg.ClientID, err)
	}
	return refuse("the ID token did not verify: %v", err)
}

// identity reads who the claims describe.
func (p *Provider) identity(sub string, claims map[string]any) (sso.Identity, error) {
	if sub == "" {
		return sso.Identity{}, fmt.Errorf("%w: the ID token has no subject (sub)", sso.ErrBadCredentials)
	}
	groups, err := stringList(claims[p.cfg.GroupsClaim])
	if err != nil {
		return sso.Identity{}, fmt.Errorf("%w: the ID token's claim %q (oidc.groups_claim): %w", sso.ErrBadCredentials, p.cfg.GroupsClaim, err)
	}
	email, _ := claims["email"].(string)
	username, _ := claims[p.cfg.UsernameClaim].(string)
	if username == "" {
		username = email
	}
	if username == "" {
		username = sub
	}
	return sso.Identity{Source: sso.SourceOIDC, Subject: sub, Username: username, Email: email, Groups: groups}, nil
}

// stringList reads a claim that is absent, a string or a list of strings.
func stringList(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("element %d is a %T, not a string", i, e)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("it is a %T, not a string or a list of strings", v)
}
