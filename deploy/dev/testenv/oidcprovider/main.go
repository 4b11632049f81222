package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "oidcprovider:", err)
		os.Exit(1)
	}
}

// list is a flag that may be repeated or hold a comma-separated list.
type list []string

func (l *list) String() string { return strings.Join(*l, ",") }
func (l *list) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func run() error {
	var (
		addr       = flag.String("addr", "127.0.0.1:5556", "listen address, on a loopback IP")
		usersFile  = flag.String("users", "", "JSON file: [{username, password, subject, email, groups}]")
		clientID   = flag.String("client-id", "shardjob", "the client's id")
		secret     = flag.String("client-secret", "", "the client's secret (required)")
		dropOld    = flag.Bool("drop-old-keys", false, "a key rotation unpublishes the previous keys (default: kept in the JWKS)")
		lifetime   = flag.Duration("id-token-lifetime", 5*time.Minute, "lifetime of ID tokens")
		redirects  list
		postLogout list
	)
	flag.Var(&redirects, "redirect-uri", "a redirect URI of the client (repeat or comma-separate)")
	flag.Var(&postLogout, "post-logout-redirect-uri", "a post-logout redirect URI of the client (repeat or comma-separate)")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))

	if *secret == "" || len(redirects) == 0 || *usersFile == "" {
		return errors.New("-client-secret, -redirect-uri and -users are required")
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %q: a test provider listens on a loopback IP only", *addr)
	}
	data, err := os.ReadFile(*usersFile)
	if err != nil {
		return err
	}
	var users []user
	if err := json.Unmarshal(data, &users); err != nil {
		return fmt.Errorf("%s: %w", *usersFile, err)
	}
	st, err := newStorage(users, clientConfig{
		id: *clientID, secret: *secret, redirectURIs: redirects, postLogoutURIs: postLogout, idTokenLifetime: *lifetime,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", *usersFile, err)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("listen on %s: Address already in use", *addr)
		}
		return err
	}
	issuer := "http://" + ln.Addr().String()
	handler, err := newHandler(st, issuer, *dropOld, *lifetime)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("oidcprovider: ready on %s\n", issuer)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// newHandler is everything the listener serves.
func newHandler(st *storage, issuer string, dropOld bool, lifetime time.Duration) (http.Handler, error) {
	var cryptoKey [32]byte
	if _, err := rand.Read(cryptoKey[:]); err != nil {
		return nil, err
	}
	cfg := &op.Config{
		CryptoKey:                cryptoKey,
		DefaultLogoutRedirectURI: issuer + "/logged-out",
		CodeMethodS256:           true,
		GrantTypeRefreshToken:    true,
		SupportedScopes:          []string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail, oidc.ScopeOfflineAccess, "groups"},
		SupportedClaims: []string{"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "azp",
			"preferred_username", "email", "email_verified", "groups"},
	}
	issuerOf := func(bool) (op.IssuerFromRequest, error) {
		return func(r *http.Request) string {
			if misbehaviourFrom(r.Context()).Kind == badIssuer {
				return issuer + "/not-the-issuer"
			}
			return issuer
		}, nil
	}
	provider, err := op.NewProvider(cfg, st, issuerOf, op.WithAllowInsecure())
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/control/", control(st, dropOld, lifetime))
	mux.Handle("/login", login(st, func(ctx context.Context, id string) string {
		return op.AuthCallbackURL(provider)(op.ContextWithIssuer(ctx, issuer), id)
	}))
	mux.HandleFunc("GET /logged-out", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "You are signed out.")
	})
	mux.Handle(provider.TokenEndpoint().Relative(), tokenEndpoint(st, provider))
	mux.Handle("/", provider)
	return logRequests(mux), nil
}

var loginPage = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Sign in — test OIDC provider</title></head>
<body>
<h1>Sign in</h1>
{{if .Error}}<p id="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="authRequestID" value="{{.ID}}">
<label for="username">User name</label> <input id="username" name="username" autocomplete="username" value="{{.Username}}"><br>
<label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password"><br>
<button id="submit" type="submit">Sign in</button>
</form>
</body></html>
`))

// login serves the sign-in form of an authorization request and, when the
// password is right, sends the browser back to op's callback.
func login(st *storage, callback func(context.Context, string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := r.Form.Get("authRequestID")
		page := struct{ ID, Username, Error string }{ID: id}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.Method {
		case http.MethodGet:
			_ = loginPage.Execute(w, page)
		case http.MethodPost:
			page.Username = r.Form.Get("username")
			if err := st.login(id, page.Username, r.Form.Get("password")); err != nil {
				page.Error = err.Error()
				w.WriteHeader(http.StatusUnauthorized)
				_ = loginPage.Execute(w, page)
				return
			}
			http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
		default:
			http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
		}
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		slog.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.status)
	})
}
