package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// OIDCProviderPkg is the main package of the test OIDC provider (see its
// doc.go): zitadel/oidc's op with an in-memory storage and a control API.
const OIDCProviderPkg = "github.com/shardjob/shardjob/deploy/dev/testenv/oidcprovider"

const (
	oidcStartTimeout = 30 * time.Second
	oidcStopTimeout  = 10 * time.Second
)

// OIDCUser is a user of the test provider.
type OIDCUser struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Subject  string   `json:"subject"`
	Email    string   `json:"email,omitempty"`
	Groups   []string `json:"groups"`
}

// OIDCProviderConfig configures StartOIDCProvider. Zero fields take the
// defaults given.
type OIDCProviderConfig struct {
	// Users who can sign in (default DefaultOIDCUsers).
	Users []OIDCUser
	// ClientID of the one registered client (default "shardjob").
	ClientID string
	// ClientSecret (default: random).
	ClientSecret string
	// RedirectURIs registered for the client; at least one is required.
	RedirectURIs []string
	// PostLogoutRedirectURIs accepted at end_session.
	PostLogoutRedirectURIs []string
	// DropOldKeys makes RotateKey unpublish the previous keys by default
	// (default: they stay in the JWKS).
	DropOldKeys bool
	// IDTokenLifetime (default 5m).
	IDTokenLifetime time.Duration
}

// DefaultOIDCUsers are the users of a provider started without Users.
var DefaultOIDCUsers = []OIDCUser{
	{Username: "alice", Password: "alice-pw", Subject: "sub-alice", Email: "alice@example.org", Groups: []string{"platform", "ops"}},
	{Username: "bob", Password: "bob-pw", Subject: "sub-bob", Email: "bob@example.org", Groups: []string{"auditors"}},
}

// OIDCProvider is a test OpenID Connect provider run as a process of its
// own on 127.0.0.1, owned by one test. It speaks discovery, JWKS, the
// authorization-code flow with PKCE, refresh and end_session; its login
// page is a form with the fields username and password. Stop, Kill and
// Start restart it on the same port, but its state (keys, tokens, changed
// groups) is in memory and starts anew.
type OIDCProvider struct {
	// Issuer is the provider's URL, http://127.0.0.1:port.
	Issuer       string
	ClientID     string
	ClientSecret string

	port int
	srv  *server
	http *http.Client
}

// StartOIDCProvider builds the provider (once per test process: the test
// package calls Main from TestMain) and starts it for the calling test on a
// free port; it returns when the discovery document is served. The process
// is stopped when the test ends, and the end of its log shown if the test
// failed.
func StartOIDCProvider(t testing.TB, cfg OIDCProviderConfig) *OIDCProvider {
	t.Helper()
	if len(cfg.RedirectURIs) == 0 {
		t.Fatal("testenv.StartOIDCProvider: OIDCProviderConfig.RedirectURIs is empty: register the relying party's callback")
	}
	bin := BuildBinary(t, OIDCProviderPkg)
	o := startPrivate(t, "the OIDC provider", "sjt-oidc-", func(dir string) (*OIDCProvider, *server, error) {
		o, err := newOIDCProvider(dir, bin, cfg)
		if o == nil {
			return nil, nil, err
		}
		return o, o.srv, err
	})
	t.Cleanup(o.http.CloseIdleConnections)
	return o
}

func newOIDCProvider(dir, bin string, cfg OIDCProviderConfig) (*OIDCProvider, error) {
	if cfg.Users == nil {
		cfg.Users = DefaultOIDCUsers
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "shardjob"
	}
	if cfg.ClientSecret == "" {
		cfg.ClientSecret = rand.Text()
	}
	if cfg.IDTokenLifetime == 0 {
		cfg.IDTokenLifetime = 5 * time.Minute
	}
	users, err := json.Marshal(cfg.Users)
	if err != nil {
		return nil, err
	}
	usersPath := filepath.Join(dir, "users.json")
	if err := os.WriteFile(usersPath, users, 0o600); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "oidcprovider.log")
	o := &OIDCProvider{
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		http:         &http.Client{Timeout: 10 * time.Second},
	}
	o.srv = &server{
		name:         "oidcprovider",
		addr:         o.Addr,
		logPath:      logPath,
		startTimeout: oidcStartTimeout,
		stopTimeout:  oidcStopTimeout,
		spec: func() procSpec {
			args := []string{
				"-addr", o.Addr(), "-users", usersPath,
				"-client-id", cfg.ClientID, "-client-secret", cfg.ClientSecret,
				"-id-token-lifetime", cfg.IDTokenLifetime.String(),
				"-drop-old-keys=" + strconv.FormatBool(cfg.DropOldKeys),
			}
			for _, u := range cfg.RedirectURIs {
				args = append(args, "-redirect-uri", u)
			}
			for _, u := range cfg.PostLogoutRedirectURIs {
				args = append(args, "-post-logout-redirect-uri", u)
			}
			return procSpec{name: "oidcprovider", path: bin, args: args, logPath: logPath}
		},
		ready: func(ctx context.Context) error {
			return o.call(ctx, http.MethodGet, "/.well-known/openid-configuration", nil, nil)
		},
	}
	for attempt := 1; ; attempt++ {
		if o.port, err = freePort(); err != nil {
			return nil, err
		}
		o.Issuer = "http://" + o.Addr()
		err = o.srv.start()
		var se *StartError
		if errors.As(err, &se) && se.addrInUse() && attempt < 3 {
			continue // another process took the port between FreePort and bind
		}
		return o, err
	}
}

// Addr returns "127.0.0.1:port".
func (o *OIDCProvider) Addr() string { return "127.0.0.1:" + strconv.Itoa(o.port) }

// PID returns the pid of the running provider, or 0.
func (o *OIDCProvider) PID() int { return o.srv.pid() }

// Stop ends the provider with SIGTERM (SIGKILL after 10s, with an error).
func (o *OIDCProvider) Stop() error { return o.srv.stop() }

// Kill sends SIGKILL and waits until the process is gone.
func (o *OIDCProvider) Kill() error { return o.srv.kill() }

// Start starts a stopped provider again on the same port, with new keys and
// the users of its configuration.
func (o *OIDCProvider) Start() error { return o.srv.start() }

// SetGroups replaces the groups of a user; the next ID token (sign-in or
// refresh) carries them.
func (o *OIDCProvider) SetGroups(username string, groups ...string) error {
	if groups == nil {
		groups = []string{}
	}
	return o.control("/control/groups", map[string]any{"username": username, "groups": groups}, nil)
}

// DisableUser disables a user: sign-in is refused and so is a refresh of
// their tokens (invalid_grant).
func (o *OIDCProvider) DisableUser(username string) error {
	return o.control("/control/disable", map[string]any{"username": username}, nil)
}

// RotateKey makes a new key sign the ID tokens and publishes it in the
// JWKS; the previous keys stay published unless dropOld. It returns the new
// key id.
func (o *OIDCProvider) RotateKey(dropOld bool) (string, error) {
	var out struct {
		Kid string `json:"kid"`
	}
	err := o.control("/control/rotate", map[string]any{"drop_old": dropOld}, &out)
	return out.Kid, err
}

// OIDCState is what GET /control/state tells.
type OIDCState struct {
	// Kids are the published key ids, the signing one first.
	Kids []string `json:"kids"`
	// Logouts counts the RP-initiated logouts the provider carried out.
	Logouts int `json:"logouts"`
}

// State returns the provider's keys and logout count.
func (o *OIDCProvider) State() (OIDCState, error) {
	var s OIDCState
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s, o.call(ctx, http.MethodGet, "/control/state", nil, &s)
}

// Misbehaviour is something wrong with the next ID token the provider
// issues (at the next request to its token endpoint: code exchange or
// refresh).
type Misbehaviour struct {
	kind string
	by   time.Duration
}

// The misbehaviours. Those the provider cannot have zitadel's op produce
// (wrong audience: op always adds the client id; tampered) it produces by
// rewriting op's token response; see the provider's control.go.
var (
	TokenExpired       = Misbehaviour{kind: "expired"}        // expired 10 minutes ago
	TokenUnknownKey    = Misbehaviour{kind: "unknown-key"}    // signed by a key not in the JWKS, under its own kid
	TokenForged        = Misbehaviour{kind: "forged"}         // signed by another key under the current kid
	TokenTampered      = Misbehaviour{kind: "tampered"}       // groups rewritten after signing
	TokenWrongAudience = Misbehaviour{kind: "wrong-audience"} // aud and azp are another client; validly signed
	TokenWrongIssuer   = Misbehaviour{kind: "wrong-issuer"}   // iss is not the issuer
	TokenWrongNonce    = Misbehaviour{kind: "wrong-nonce"}    // nonce is not the authorization request's
)

// TokenExpiredBy is an ID token that expired d ago.
func TokenExpiredBy(d time.Duration) Misbehaviour { return Misbehaviour{kind: "expired", by: d} }

// TokenClockOff is an ID token made as if the provider's clock were d ahead
// of ours (negative: behind): iat, auth_time and exp move by d.
func TokenClockOff(d time.Duration) Misbehaviour { return Misbehaviour{kind: "clock", by: d} }

func (m Misbehaviour) String() string {
	if m.by != 0 {
		return m.kind + " by " + m.by.String()
	}
	return m.kind
}

// NextToken makes the next ID token misbehave as m.
func (o *OIDCProvider) NextToken(m Misbehaviour) error {
	body := map[string]any{"misbehaviour": m.kind}
	if m.by != 0 {
		body["by"] = m.by.String()
	}
	return o.control("/control/next-token", body, nil)
}

func (o *OIDCProvider) control(path string, in, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return o.call(ctx, http.MethodPost, path, in, out)
}

// call sends in as JSON and decodes the answer into out.
func (o *OIDCProvider) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, o.Issuer+path, body)
	if err != nil {
		return err
	}
	resp, err := o.http.Do(req)
	if err != nil {
		return fmt.Errorf("testenv: oidcprovider %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("testenv: oidcprovider %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
