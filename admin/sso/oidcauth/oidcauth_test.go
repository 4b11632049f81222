package oidcauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/sso"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// The console as the provider knows it. Nothing listens there: the test's
// browser stops at the redirect and reads state and code from it.
const (
	console  = "http://127.0.0.1:9"
	redirect = console + callbackPath
)

// rig is a test provider process and a relying party configured for it.
type rig struct {
	op *testenv.OIDCProvider
	p  *Provider
}

func newRig(t *testing.T) *rig {
	t.Helper()
	op := testenv.StartOIDCProvider(t, testenv.OIDCProviderConfig{
		RedirectURIs:           []string{redirect},
		PostLogoutRedirectURIs: []string{console + "/"},
	})
	p := New(sso.OIDCConfig{
		Issuer:       op.Issuer,
		ClientID:     op.ClientID,
		ClientSecret: op.ClientSecret,
		RedirectURL:  redirect,
	}, quiet())
	t.Cleanup(p.Close)
	return &rig{op: op, p: p}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// authorize is the browser's part: Begin, the provider's login form, and
// the redirect back with state and code.
func (r *rig) authorize(t *testing.T, username, password string) (pending Pending, state, code string) {
	t.Helper()
	authURL, pending, err := r.p.Begin(ctxFor(t))
	require.NoError(t, err)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirect) {
			return http.ErrUseLastResponse // back at the console: stop here
		}
		return nil
	}}
	defer browser.CloseIdleConnections()

	resp, err := browser.Get(authURL)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(page))
	require.Contains(t, string(page), `id="username"`, "the login form")
	id := resp.Request.URL.Query().Get("authRequestID")
	require.NotEmpty(t, id, resp.Request.URL.String())

	resp, err = browser.PostForm(r.op.Issuer+"/login", url.Values{"authRequestID": {id}, "username": {username}, "password": {password}})
	require.NoError(t, err)
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode, string(page))
	back, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, redirect, back.Scheme+"://"+back.Host+back.Path)
	return pending, back.Query().Get("state"), back.Query().Get("code")
}

// signIn is a whole sign-in of alice.
func (r *rig) signIn(t *testing.T) (sso.Identity, Tokens, error) {
	t.Helper()
	pending, state, code := r.authorize(t, "alice", "alice-pw")
	return r.p.Finish(ctxFor(t), pending, state, code)
}

func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	authURL, pending, err := r.p.Begin(ctxFor(t))
	require.NoError(t, err)
	q := mustQuery(t, authURL)
	require.Equal(t, "S256", q.Get("code_challenge_method"))
	require.Equal(t, pending.State, q.Get("state"))
	require.Equal(t, pending.Nonce, q.Get("nonce"))
	require.Equal(t, "openid profile email offline_access", q.Get("scope"), "offline_access: the provider offers it")
	require.NotContains(t, authURL, pending.Verifier, "only the challenge travels")
	require.Len(t, pending.State, 43)

	id, tokens, err := r.signIn(t)
	require.NoError(t, err)
	require.Equal(t, sso.Identity{Source: sso.SourceOIDC, Subject: "sub-alice", Username: "alice", Email: "alice@example.org",
		Groups: []string{"platform", "ops"}}, id)
	require.NotEmpty(t, tokens.IDToken)
	require.NotEmpty(t, tokens.RefreshToken)
	require.WithinDuration(t, time.Now().Add(5*time.Minute), tokens.Expiry, time.Minute)

}

func TestOIDCRefusedResponses(t *testing.T) {
	t.Parallel()
	r := newRig(t)

	t.Run("wrong PKCE verifier", func(t *testing.T) {
		pending, state, code := r.authorize(t, "alice", "alice-pw")
		pending.Verifier = random()
		_, _, err := r.p.Finish(ctxFor(t), pending, state, code)
		require.ErrorIs(t, err, sso.ErrBadCredentials)
		require.ErrorContains(t, err, "invalid_grant")
		require.ErrorContains(t, err, "code_verifier")
	})
	t.Run("state of another sign-in", func(t *testing.T) {
		pending, _, code := r.authorize(t, "alice", "alice-pw")
		_, state2, _ := r.authorize(t, "alice", "alice-pw")
		_, _, err := r.p.Finish(ctxFor(t), pending, state2, code)
		require.ErrorIs(t, err, sso.ErrBadCredentials)
		require.ErrorContains(t, err, "the state of the provider's response is not the one")
	})
	t.Run("replayed callback", func(t *testing.T) {
		pending, state, code := r.authorize(t, "alice", "alice-pw")
		_, _, err := r.p.Finish(ctxFor(t), pending, state, code)
		require.NoError(t, err)
		// The caller deleted the Pending: a replay finds none.
		_, _, err = r.p.Finish(ctxFor(t), Pending{}, state, code)
		require.ErrorIs(t, err, sso.ErrBadCredentials)
		require.ErrorContains(t, err, "no sign-in is pending")
		// Even with the Pending kept by mistake, the code is spent.
		_, _, err = r.p.Finish(ctxFor(t), pending, state, code)
		require.ErrorIs(t, err, sso.ErrBadCredentials)
		require.ErrorContains(t, err, "invalid_grant")
	})
}

// TestOIDCMisbehavingTokens: ID tokens that must be refused, each made by
// the provider process at the token endpoint of a real code flow.
func TestOIDCMisbehavingTokens(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, c := range []struct {
		bad  testenv.Misbehaviour
		want string // "" accepted
	}{
		{testenv.TokenExpired, "the ID token expired at"},
		{testenv.TokenExpiredBy(2 * time.Minute), "the ID token expired at"},
		{testenv.TokenExpiredBy(30 * time.Second), ""}, // within the clock skew (1m)
		{testenv.TokenClockOff(2 * time.Minute), "later than now by more than the allowed clock skew"},
		{testenv.TokenClockOff(30 * time.Second), ""},
		{testenv.TokenClockOff(-30 * time.Second), ""},
		{testenv.TokenUnknownKey, "signature does not verify"},
		{testenv.TokenForged, "signature does not verify"},
		{testenv.TokenTampered, "signature does not verify"},
		{testenv.TokenWrongAudience, "issued for another client"},
		{testenv.TokenWrongIssuer, "issued by another provider"},
		{testenv.TokenWrongNonce, "nonce is not the one"},
	} {
		t.Run(c.bad.String(), func(t *testing.T) {
			pending, state, code := r.authorize(t, "alice", "alice-pw")
			require.NoError(t, r.op.NextToken(c.bad))
			id, _, err := r.p.Finish(ctxFor(t), pending, state, code)
			if c.want == "" {
				require.NoError(t, err)
				require.Equal(t, "sub-alice", id.Subject)
				return
			}
			t.Logf("refused: %v", err)
			require.ErrorIs(t, err, sso.ErrBadCredentials)
			require.ErrorContains(t, err, c.want)
			require.Empty(t, id.Subject)
		})
	}
	// And the next one is fine again.
	_, _, err := r.signIn(t)
	require.NoError(t, err)
}

func TestOIDCKeyRotation(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, _, err := r.signIn(t) // the RP now holds the first key
	require.NoError(t, err)
	for _, drop := range []bool{false, true} {
		kid, err := r.op.RotateKey(drop)
		require.NoError(t, err)
		_, tokens, err := r.signIn(t)
		require.NoError(t, err, "a token of the new key %s verifies without restarting the RP (drop old: %v)", kid, drop)
		require.Equal(t, kid, headerKid(t, tokens.IDToken))
	}
}

func TestOIDCRefresh(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, tokens, err := r.signIn(t)
	require.NoError(t, err)

	require.NoError(t, r.op.SetGroups("alice", "auditors"))
	id, fresh, err := r.p.Refresh(ctxFor(t), tokens.RefreshToken)
	require.NoError(t, err)
	require.Equal(t, "sub-alice", id.Subject)
	require.Equal(t, []string{"auditors"}, id.Groups, "the groups of now")
	require.NotEmpty(t, fresh.IDToken)
	require.NotEqual(t, tokens.RefreshToken, fresh.RefreshToken, "the provider rotates refresh tokens")

	_, _, err = r.p.Refresh(ctxFor(t), tokens.RefreshToken)
	require.ErrorIs(t, err, sso.ErrGone, "a spent refresh token")

	require.NoError(t, r.op.SetGroups("alice"))
	id, fresh, err = r.p.Refresh(ctxFor(t), fresh.RefreshToken)
	require.NoError(t, err)
	require.Empty(t, id.Groups, "removed from every group: the mapping refuses the next request")

	require.NoError(t, r.op.NextToken(testenv.TokenExpired))
	_, _, err = r.p.Refresh(ctxFor(t), fresh.RefreshToken)
	require.ErrorIs(t, err, sso.ErrBadCredentials, "a refreshed ID token is verified too")

	_, tokens, err = r.signIn(t)
	require.NoError(t, err)
	require.NoError(t, r.op.DisableUser("alice"))
	_, _, err = r.p.Refresh(ctxFor(t), tokens.RefreshToken)
	require.ErrorIs(t, err, sso.ErrGone)
	require.ErrorContains(t, err, "invalid_grant")
	require.NotErrorIs(t, err, sso.ErrUnavailable)

	_, _, err = r.p.Refresh(ctxFor(t), "")
	require.ErrorIs(t, err, sso.ErrGone)
}

// TestOIDCProviderDown: discovery is lazy and tried again; a provider that
// is gone is ErrUnavailable, not a refusal.
func TestOIDCProviderDown(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	require.NoError(t, r.op.Kill())
	_, _, err := r.p.Begin(ctxFor(t))
	require.ErrorIs(t, err, sso.ErrUnavailable)
	require.ErrorContains(t, err, "discovery document "+r.op.Issuer+"/.well-known/openid-configuration could not be read")
	_, ok := r.p.LogoutURL(ctxFor(t), "", "")
	require.False(t, ok)

	require.NoError(t, r.op.Start())
	_, tokens, err := r.signIn(t)
	require.NoError(t, err, "discovery was tried again")

	require.NoError(t, r.op.Kill())
	_, _, err = r.p.Refresh(ctxFor(t), tokens.RefreshToken)
	require.ErrorIs(t, err, sso.ErrUnavailable)
	require.NotErrorIs(t, err, sso.ErrGone)
	require.ErrorContains(t, err, "the OIDC provider "+r.op.Issuer+" could not be reached for the refresh")
	require.ErrorContains(t, err, "connection refused")
	t.Logf("unavailable: %v", err)
}

func TestOIDCLogoutURL(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	_, tokens, err := r.signIn(t)
	require.NoError(t, err)
	logout, ok := r.p.LogoutURL(ctxFor(t), tokens.IDToken, "")
	require.True(t, ok)
	q := mustQuery(t, logout)
	require.Equal(t, tokens.IDToken, q.Get("id_token_hint"))
	require.Equal(t, console+"/", q.Get("post_logout_redirect_uri"), "derived from the redirect URL")
	require.Equal(t, r.op.ClientID, q.Get("client_id"))

	// The provider accepts it and sends the browser back.
	browser := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer browser.CloseIdleConnections()
	resp, err := browser.Get(logout)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, console+"/", resp.Header.Get("Location"))
	s, err := r.op.State()
	require.NoError(t, err)
	require.Equal(t, 1, s.Logouts)
	_, _, err = r.p.Refresh(ctxFor(t), tokens.RefreshToken)
	require.ErrorIs(t, err, sso.ErrGone, "the provider ended the session's refresh tokens")
}

// TestOIDCNoEndSession: a provider whose discovery offers no
// end_session_endpoint (served here by a stub: the test provider always
// offers one).
func TestOIDCNoEndSession(t *testing.T) {
	t.Parallel()
	issuer := stubProvider(t, "http://127.0.0.1:9/keys", nil)
	p := New(sso.OIDCConfig{Issuer: issuer, ClientID: "c", RedirectURL: redirect}, quiet())
	defer p.Close()
	_, ok := p.LogoutURL(ctxFor(t), "hint", "")
	require.False(t, ok)
	authURL, _, err := p.Begin(ctxFor(t))
	require.NoError(t, err)
	require.Equal(t, "openid profile email", mustQuery(t, authURL).Get("scope"), "no offline_access when not offered")
}

func TestOIDCNew(t *testing.T) {
	t.Parallel()
	p := New(sso.OIDCConfig{Issuer: "http://127.0.0.1:9", ClientID: "c", RedirectURL: "https://jobs.example.com/base" + callbackPath}, quiet())
	require.Equal(t, sso.DefaultClockSkew, p.cfg.ClockSkew)
	require.Equal(t, "https://jobs.example.com/base/", p.postLogout)
	require.Equal(t, sso.MaxClockSkew, New(sso.OIDCConfig{ClockSkew: time.Hour}, quiet()).cfg.ClockSkew)
	require.Equal(t, "https://x/", consoleRoot("https://x/elsewhere"))

	dir := t.TempDir()
	bad := New(sso.OIDCConfig{Issuer: "https://id.example.com", CAFile: dir + "/missing.pem"}, quiet())
	_, _, err := bad.Begin(ctxFor(t))
	require.ErrorIs(t, err, sso.ErrUnavailable)
	require.ErrorContains(t, err, "oidc.ca_file")
}

func TestOIDCIdentityClaims(t *testing.T) {
	t.Parallel()
	p := New(sso.OIDCConfig{GroupsClaim: "roles", UsernameClaim: "upn"}, quiet())
	id, err := p.identity("s", map[string]any{"roles": "ops", "email": "e@x"})
	require.NoError(t, err)
	require.Equal(t, sso.Identity{Source: sso.SourceOIDC, Subject: "s", Username: "e@x", Email: "e@x", Groups: []string{"ops"}}, id,
		"a single group as a string; the user name falls back to email")
	id, err = p.identity("s", map[string]any{"roles": []any{"a", "b"}, "upn": "u"})
	require.NoError(t, err)
	require.Equal(t, "u", id.Username)
	require.Equal(t, []string{"a", "b"}, id.Groups)
	id, err = p.identity("s", nil)
	require.NoError(t, err)
	require.Equal(t, "s", id.Username, "then to sub")
	_, err = p.identity("s", map[string]any{"roles": []any{"a", 1.0}})
	require.ErrorIs(t, err, sso.ErrBadCredentials)
	require.ErrorContains(t, err, `claim "roles" (oidc.groups_claim): element 1 is a float64`)
	_, err = p.identity("", nil)
	require.True(t, errors.Is(err, sso.ErrBadCredentials))
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Query()
}

// headerKid is the kid of a JWT's header.
func headerKid(t *testing.T, jwt string) string {
	t.Helper()
	var header struct {
		Kid string `json:"kid"`
	}
	require.NoError(t, decodeSegment(strings.Split(jwt, ".")[0], &header))
	return header.Kid
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// TestOIDCKeysUnreachable: a token whose key must be fetched while the
// provider's jwks_uri does not answer is ErrUnavailable, not a forgery.
// The provider is a stub here (its token endpoint serves a token signed
// in the test), because the test provider cannot stop serving its keys
// between the code exchange and the verification.
func TestOIDCKeysUnreachable(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens at its address any more
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	require.NoError(t, err)
	pending := Pending{State: random(), Nonce: random(), Verifier: random()}

	issuer := stubProvider(t, gone.URL+"/keys", func(issuer string) string {
		claims, err := json.Marshal(map[string]any{"iss": issuer, "aud": "c", "sub": "s", "nonce": pending.Nonce,
			"iat": time.Now().Unix(), "exp": time.Now().Add(time.Minute).Unix()})
		require.NoError(t, err)
		jws, err := signer.Sign(claims)
		require.NoError(t, err)
		token, err := jws.CompactSerialize()
		require.NoError(t, err)
		return token
	})
	p := New(sso.OIDCConfig{Issuer: issuer, ClientID: "c", ClientSecret: "s", RedirectURL: redirect}, quiet())
	defer p.Close()
	_, _, err = p.Finish(ctxFor(t), pending, pending.State, "code")
	require.ErrorIs(t, err, sso.ErrUnavailable)
	require.NotErrorIs(t, err, sso.ErrBadCredentials)
	require.ErrorContains(t, err, "signing keys (jwks_uri) could not be fetched")
}

// stubProvider serves a discovery document without end_session_endpoint,
// naming jwks, and a token endpoint answering with the ID token idToken
// makes (called once, before the server starts). It returns the issuer.
func stubProvider(t *testing.T, jwks string, idToken func(issuer string) string) string {
	t.Helper()
	var token string // written before the server starts, read by its handlers
	srv := httptest.NewUnstartedServer(nil)
	issuer := "http://" + srv.Listener.Addr().String()
	if idToken != nil {
		token = idToken(issuer)
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/token" {
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "id_token": token})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "authorization_endpoint": issuer + "/auth",
			"token_endpoint": issuer + "/token", "jwks_uri": jwks, "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return issuer
}
