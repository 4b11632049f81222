package oidcauth

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/shardjob/shardjob/admin/sso"
)

// Timeouts of the HTTP client that talks to the provider.
const (
	dialTimeout    = 5 * time.Second
	headerTimeout  = 10 * time.Second
	requestTimeout = 15 * time.Second
)

// callbackPath ends Config.RedirectURL; the console's root is before it.
const callbackPath = "/api/v1/sso/oidc/callback"

// Provider is one OpenID Connect provider as the admin uses it. It is safe
// for concurrent use.
type Provider struct {
	cfg        sso.OIDCConfig
	log        *slog.Logger
	client     *http.Client
	caErr      error  // reading Config.CAFile failed: every call says so
	postLogout string // where end_session sends the browser back by default

	mu sync.Mutex // serializes discovery
	d  *discovered
}

// discovered is what the discovery document gave.
type discovered struct {
	verifier   *oidc.IDTokenVerifier
	oauth      oauth2.Config
	endSession string // "" when the provider offers no RP-initiated logout
}

// New returns the Provider of cfg, filling the defaults of sso.Config the
// same way (a zero ClockSkew is DefaultClockSkew; more than MaxClockSkew is
// cut to it). It does no network I/O: discovery happens at the first call
// that needs it. log may be nil (slog.Default).
func New(cfg sso.OIDCConfig, log *slog.Logger) *Provider {
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "oidc", "issuer", cfg.Issuer)
	if cfg.Scopes == nil {
		cfg.Scopes = []string{"profile", "email"}
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = sso.DefaultGroupsClaim
	}
	if cfg.UsernameClaim == "" {
		cfg.UsernameClaim = sso.DefaultUsernameClaim
	}
	switch {
	case cfg.ClockSkew == 0:
		cfg.ClockSkew = sso.DefaultClockSkew
	case cfg.ClockSkew < 0:
		cfg.ClockSkew = 0
	case cfg.ClockSkew > sso.MaxClockSkew:
		log.Warn("oidc: clock_skew is more than the maximum; using the maximum", "clock_skew", cfg.ClockSkew, "max", sso.MaxClockSkew)
		cfg.ClockSkew = sso.MaxClockSkew
	}
	p := &Provider{cfg: cfg, log: log, postLogout: cfg.PostLogoutRedirectURL}
	if p.postLogout == "" {
		p.postLogout = consoleRoot(cfg.RedirectURL)
	}
	p.client, p.caErr = newHTTPClient(cfg.CAFile)
	if p.caErr != nil {
		log.Error("oidc: ca_file cannot be used; sign-in through this provider fails until it is fixed", "err", p.caErr)
	}
	return p
}

// consoleRoot is the console's URL derived from the callback URL: the
// sign-in page a signed-out person lands on.
func consoleRoot(redirect string) string {
	if root, ok := strings.CutSuffix(redirect, callbackPath); ok {
		return root + "/"
	}
	u, err := url.Parse(redirect)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + "/"
}

// newHTTPClient is a client with timeouts that trusts the system's CAs and
// those of caFile.
func newHTTPClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = dialTimeout
	tr.ResponseHeaderTimeout = headerTimeout
	tr.IdleConnTimeout = 30 * time.Second
	client := &http.Client{Transport: tr, Timeout: requestTimeout}
	if caFile == "" {
		return client, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return client, fmt.Errorf("oidc.ca_file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return client, fmt.Errorf("oidc.ca_file %s holds no PEM certificate", caFile)
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return client, nil
}

// Close releases the idle connections to the provider. The Provider stays
// usable.
func (p *Provider) Close() { p.client.CloseIdleConnections() }

// withClient makes go-oidc and oauth2 use the Provider's HTTP client.
func (p *Provider) withClient(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, p.client)
}

// discover returns the discovery document's endpoints, fetching it if no
// earlier call succeeded.
func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	if p.caErr != nil {
		return nil, fmt.Errorf("%w: %w", sso.ErrUnavailable, p.caErr)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.d != nil {
		return p.d, nil
	}
	op, err := oidc.NewProvider(p.withClient(ctx), p.cfg.Issuer)
	if err != nil {
		p.log.Warn("oidc: discovery failed; tried again at the next sign-in", "err", err)
		return nil, fmt.Errorf("%w: the OIDC provider's discovery document %s/.well-known/openid-configuration could not be read: %w",
			sso.ErrUnavailable, strings.TrimSuffix(p.cfg.Issuer, "/"), err)
	}
	var meta struct {
		EndSession   string   `json:"end_session_endpoint"`
		Scopes       []string `json:"scopes_supported"`
		AuthMethods  []string `json:"token_endpoint_auth_methods_supported"`
		PKCEMethods  []string `json:"code_challenge_methods_supported"`
		ResponseType []string `json:"response_types_supported"`
	}
	if err := op.Claims(&meta); err != nil {
		return nil, fmt.Errorf("%w: the OIDC provider's discovery document: %w", sso.ErrUnavailable, err)
	}
	if len(meta.PKCEMethods) > 0 && !slices.Contains(meta.PKCEMethods, "S256") {
		p.log.Warn("oidc: the provider does not list PKCE S256 among its code_challenge_methods_supported; sending it anyway", "methods", meta.PKCEMethods)
	}
	scopes := []string{oidc.ScopeOpenID}
	for _, s := range p.cfg.Scopes {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if slices.Contains(meta.Scopes, oidc.ScopeOfflineAccess) && !slices.Contains(scopes, oidc.ScopeOfflineAccess) {
		scopes = append(scopes, oidc.ScopeOfflineAccess)
	}
	endpoint := op.Endpoint()
	endpoint.AuthStyle = authStyle(p.cfg.ClientSecret, meta.AuthMethods)
	skew := p.cfg.ClockSkew
	p.d = &discovered{
		// Expiry is checked against a clock moved back by the skew: a token
		// is accepted up to ClockSkew after its exp. iat and nbf are checked
		// in verify, the other way.
		verifier: op.Verifier(&oidc.Config{ClientID: p.cfg.ClientID, Now: func() time.Time { return time.Now().Add(-skew) }}),
		oauth: oauth2.Config{
			ClientID:     p.cfg.ClientID,
			ClientSecret: p.cfg.ClientSecret,
			Endpoint:     endpoint,
			RedirectURL:  p.cfg.RedirectURL,
			Scopes:       scopes,
		},
		endSession: meta.EndSession,
	}
	p.log.Info("oidc: provider discovered", "scopes", scopes, "end_session", meta.EndSession != "")
	return p.d, nil
}

// authStyle is how the client authenticates at the token endpoint: set
// once, because oauth2's probing would send a failed exchange a second
// time and report the second answer.
func authStyle(secret string, methods []string) oauth2.AuthStyle {
	switch {
	case secret == "":
		return oauth2.AuthStyleInParams // a public client: client_id in the form, PKCE only
	case len(methods) == 0 || slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader // the default of the spec
	case slices.Contains(methods, "client_secret_post"):
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

// Pending is a sign-in in progress, from Begin to Finish. Its three values
// are random, 256 bits each. The caller keeps it server-side, keyed by a
// hash of State, and deletes it when the callback comes (before calling
// Finish): each Pending is good for one Finish, which is what makes a
// replayed callback fail. It must never reach the browser.
type Pending = sso.Pending

// Begin starts a sign-in: it returns the provider's authorization URL (code
// flow, state, nonce, PKCE S256 challenge; scopes openid, Config.Scopes and
// offline_access when the provider offers it) and the Pending to keep.
func (p *Provider) Begin(ctx context.Context) (authURL string, pending Pending, err error) {
	d, err := p.discover(ctx)
	if err != nil {
		return "", Pending{}, err
	}
	pending = Pending{State: random(), Nonce: random(), Verifier: random()}
	authURL = d.oauth.AuthCodeURL(pending.State, oidc.Nonce(pending.Nonce), oauth2.S256ChallengeOption(pending.Verifier))
	return authURL, pending, nil
}

// random is 256 random bits, base64url (43 characters, a valid PKCE
// verifier).
func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Tokens are what the caller keeps of a sign-in for the recheck and the
// logout.
type Tokens = sso.Tokens

// LogoutURL is the provider's end_session_endpoint with id_token_hint,
// post_logout_redirect_uri (postLogoutRedirect, else
// Config.PostLogoutRedirectURL, else the console's root) and client_id.
// ok is false when the provider offers no RP-initiated logout, or its
// discovery document cannot be read now: the caller then only ends its own
// session.
func (p *Provider) LogoutURL(ctx context.Context, idTokenHint, postLogoutRedirect string) (string, bool) {
	d, err := p.discover(ctx)
	if err != nil || d.endSession == "" {
		return "", false
	}
	u, err := url.Parse(d.endSession)
	if err != nil {
		p.log.Warn("oidc: end_session_endpoint is not a URL", "end_session_endpoint", d.endSession, "err", err)
		return "", false
	}
	q := u.Query()
	if idTokenHint != "" {
		q.Set("id_token_hint", idTokenHint)
	}
	if postLogoutRedirect == "" {
		postLogoutRedirect = p.postLogout
	}
	if postLogoutRedirect != "" {
		q.Set("post_logout_redirect_uri", postLogoutRedirect)
	}
	q.Set("client_id", p.cfg.ClientID)
	u.RawQuery = q.Encode()
	return u.String(), true
}

// tokenError says why a request to the token endpoint failed: refused
// (wrapped in refused) when the provider answered invalid_grant, the
// provider unavailable when it did not answer or answered a server error,
// and otherwise (invalid_client and the like: the configuration) refused
// for a sign-in, unavailable for a refresh.
func (p *Provider) tokenError(what string, err error, refused error, signIn bool) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return fmt.Errorf("%w: the OIDC provider %s could not be reached for %s: %w", sso.ErrUnavailable, p.cfg.Issuer, what, err)
	}
	reason := re.ErrorCode
	if re.ErrorDescription != "" {
		reason += ": " + re.ErrorDescription
	}
	status := 0
	if re.Response != nil {
		status = re.Response.StatusCode
	}
	if reason == "" {
		reason = fmt.Sprintf("HTTP %d %.200s", status, strings.TrimSpace(string(re.Body)))
	}
	switch {
	case status >= 500:
		return fmt.Errorf("%w: the OIDC provider %s failed %s (%s)", sso.ErrUnavailable, p.cfg.Issuer, what, reason)
	case re.ErrorCode == "invalid_grant":
		return fmt.Errorf("%w: the OIDC provider refused %s (%s)", refused, what, reason)
	case signIn:
		return fmt.Errorf("%w: the OIDC provider refused %s (%s); check oidc.client_id and the client secret", sso.ErrBadCredentials, what, reason)
	}
	return fmt.Errorf("%w: the OIDC provider refused %s (%s); check oidc.client_id and the client secret", sso.ErrUnavailable, what, reason)
}
