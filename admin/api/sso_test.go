package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/sso"
	"github.com/shardjob/shardjob/admin/sso/ldapauth"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// fakeLDAP is an LDAP directory in memory for the sign-in rules of the API
// (the real one, against slapd, is admin/sso/ldapauth's and the SSO
// end-to-end test's): people with passwords and groups, and a switch that
// makes it unreachable.
type fakeLDAP struct {
	mu     sync.Mutex
	people map[string]fakePerson // by user name
	down   bool
}

type fakePerson struct {
	password string
	groups   []string
}

func (f *fakeLDAP) dn(name string) string { return "uid=" + name + ",ou=people,dc=example,dc=org" }

func (f *fakeLDAP) SignIn(_ context.Context, username, password string) (sso.Identity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return sso.Identity{}, fmt.Errorf("dial 127.0.0.1:1: connection refused: %w", sso.ErrUnavailable)
	}
	p, ok := f.people[username]
	if !ok || password == "" || p.password != password {
		return sso.Identity{}, fmt.Errorf("invalid credentials: %w", sso.ErrBadCredentials)
	}
	return sso.Identity{Source: sso.SourceLDAP, Subject: f.dn(username), Username: username, Groups: p.groups}, nil
}

func (f *fakeLDAP) Lookup(_ context.Context, subject string) (sso.Identity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return sso.Identity{}, fmt.Errorf("dial: %w", sso.ErrUnavailable)
	}
	for name, p := range f.people {
		if f.dn(name) == subject {
			return sso.Identity{Source: sso.SourceLDAP, Subject: subject, Username: name, Groups: p.groups}, nil
		}
	}
	return sso.Identity{}, fmt.Errorf("entry %s: %w", subject, sso.ErrGone)
}

func (f *fakeLDAP) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

const (
	opsGroup    = "cn=ops,ou=groups,dc=example,dc=org"
	viewerGroup = "cn=viewers,ou=groups,dc=example,dc=org"
)

// ssoEnv serves the API with LDAP sign-in through dir, the mapping ops →
// operator of billing, viewers → viewer, recheck every minute, grace 5
// minutes, on a manual clock.
func ssoEnv(t *testing.T, st *store.Store, dir *fakeLDAP, clk *clock.Manual, edit func(*api.Config)) *env {
	var ldap ops.LDAPDirectory
	if dir != nil {
		ldap = dir
	}
	recheck, grace := time.Minute, 5*time.Minute
	cfg := api.Config{Store: st, ExecutorSecret: protocol.NewSecret(), Clock: clk, SSO: &ops.Directories{
		Config: sso.Config{Recheck: &recheck, RecheckGrace: &grace, Mapping: sso.Mapping{
			{Group: opsGroup, Role: "operator", Apps: []string{"billing"}},
			{Group: viewerGroup, Role: "viewer"},
		}},
		LDAP: ldap,
	}}
	if edit != nil {
		edit(&cfg)
	}
	h, err := api.New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{t: t, st: st, srv: srv, secret: cfg.ExecutorSecret}
}

func signIn(e *env, name, password string) (int, map[string]any) {
	var out map[string]any
	code := e.call("POST", "/api/v1/login", "", map[string]string{"username": name, "password": password}, &out)
	return code, out
}

// TestLDAPSignInMapsGroups: the first sign-in creates the user with the
// mapping's role and apps, the password form stays the way in, a wrong
// password and an unmapped person are refused with reasons, and the
// directory being down is a 503 that local users do not see.
func TestLDAPSignInMapsGroups(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		dir := &fakeLDAP{people: map[string]fakePerson{
			"ann": {password: "ann-pw", groups: []string{"CN=Ops, OU=Groups,DC=example,DC=org"}},
			"bob": {password: "bob-pw", groups: []string{"cn=sales,ou=groups,dc=example,dc=org"}},
		}}
		e := ssoEnv(t, st, dir, clock.NewManual(time.Now()), nil)
		e.user("root", "admin")

		code, out := signIn(e, "ann", "ann-pw")
		require.Equal(t, http.StatusOK, code, out)
		require.Equal(t, "operator", out["role"])
		var me map[string]any
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", out["token"].(string), nil, &me))
		require.Equal(t, "ldap", me["source"])
		require.Equal(t, []any{"billing"}, me["apps"])

		code, out = signIn(e, "ann", "wrong")
		require.Equal(t, http.StatusUnauthorized, code)
		require.Equal(t, "wrong user name or password", out["error"])
		code, out = signIn(e, "nobody", "x")
		require.Equal(t, http.StatusUnauthorized, code, "an unknown name is the same answer")
		require.Equal(t, "wrong user name or password", out["error"])

		code, out = signIn(e, "bob", "bob-pw")
		require.Equal(t, http.StatusForbidden, code)
		require.Contains(t, out["error"], "none of your groups is mapped to a role (your groups: cn=sales,ou=groups,dc=example,dc=org)")

		dir.set(func() { dir.down = true })
		code, out = signIn(e, "ann", "ann-pw")
		require.Equal(t, http.StatusServiceUnavailable, code)
		require.Contains(t, out["error"], "the LDAP directory cannot be reached")
		require.Contains(t, out["error"], "sign in with a local account")
		code, _ = signIn(e, "root", "password-root")
		require.Equal(t, http.StatusOK, code, "a local (break-glass) user signs in while the directory is down")

		// The users list says where each signs in; an admin cannot set a
		// directory user's role (the mapping does).
		root := e.token("root")
		var users struct {
			Users []map[string]any `json:"users"`
		}
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/users", root, nil, &users))
		sources := map[string]any{}
		for _, u := range users.Users {
			sources[u["username"].(string)] = u["source"]
		}
		require.Equal(t, map[string]any{"ann": "ldap", "root": "local"}, sources)
		ann, err := st.UserByName(context.Background(), "ann")
		require.NoError(t, err)
		var refusal map[string]any
		require.Equal(t, http.StatusConflict, e.call("PUT", fmt.Sprintf("/api/v1/users/%d", ann.ID), root, map[string]any{"role": "admin"}, &refusal))
		require.Contains(t, refusal["error"], "come from the SSO mapping")

		var audit struct {
			Entries []map[string]any `json:"entries"`
		}
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/audit?object=user/ann", root, nil, &audit))
		actions := []string{}
		for _, a := range audit.Entries {
			actions = append(actions, a["action"].(string))
		}
		require.Subset(t, actions, []string{"user.create", "login", "login.failed"})
	})
}

// annSignedIn serves the API (SQLite) with an LDAP directory in which ann
// is in the ops group, and signs her in: her session token.
func annSignedIn(t *testing.T) (*env, *fakeLDAP, *clock.Manual, string) {
	st := storetest.Open(t, "sqlite")
	dir := &fakeLDAP{people: map[string]fakePerson{"ann": {password: "ann-pw", groups: []string{opsGroup}}}}
	clk := clock.NewManual(time.Now())
	e := ssoEnv(t, st, dir, clk, nil)
	code, out := signIn(e, "ann", "ann-pw")
	require.Equal(t, http.StatusOK, code, out)
	return e, dir, clk, out["token"].(string)
}

// TestDirectoryUserLosesAccessAtNextRequest: with recheck due, a person
// removed from their mapped groups is refused at their next request, by
// session and by API key, their sessions end; a person the directory no
// longer knows likewise; a sign-in that maps them again restores access.
// A role change in the directory follows at the next recheck.
func TestDirectoryUserLosesAccessAtNextRequest(t *testing.T) {
	t.Parallel()
	e, dir, clk, session := annSignedIn(t)
	var key struct {
		Key string `json:"secret"`
	}
	require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/api-keys", session, map[string]any{"name": "ci"}, &key), "a directory user creates API keys")

	// Within the recheck interval the directory is not asked.
	dir.set(func() { dir.people["ann"] = fakePerson{password: "ann-pw", groups: []string{viewerGroup}} })
	var me map[string]any
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", session, nil, &me))
	require.Equal(t, "operator", me["role"])
	clk.Advance(61 * time.Second)
	var answer map[string]any
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", key.Key, nil, &answer), "%v", answer)
	me = answer
	require.Equal(t, "viewer", me["role"], "the directory's new groups apply at the next request after the interval")

	clk.Advance(61 * time.Second)
	dir.set(func() { dir.people["ann"] = fakePerson{password: "ann-pw", groups: []string{"cn=former,dc=org"}} })
	var refusal map[string]any
	require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/jobs", key.Key, nil, &refusal))
	require.Contains(t, refusal["error"], "access of ann ended: none of your groups is mapped to a role")
	require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/me", session, nil, &refusal))
	require.Equal(t, "session expired or unknown: log in again", refusal["error"], "the session ended")

	code, _ := signIn(e, "ann", "ann-pw")
	require.Equal(t, http.StatusForbidden, code, "still unmapped")
	dir.set(func() { dir.people["ann"] = fakePerson{password: "ann-pw", groups: []string{opsGroup}} })
	code, out := signIn(e, "ann", "ann-pw")
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs", key.Key, nil, &refusal), "mapped again: the API key works again: %v", refusal)

	// Deleted from the directory.
	clk.Advance(61 * time.Second)
	dir.set(func() { delete(dir.people, "ann") })
	require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/me", out["token"].(string), nil, &refusal))
	require.Contains(t, refusal["error"], "the directory no longer knows you")
}

// TestDirectoryDownKeepsAccessForTheGrace: when the directory cannot be
// asked at a recheck the last answer stands for recheck + grace, then
// requests are refused with 503 until it answers again.
func TestDirectoryDownKeepsAccessForTheGrace(t *testing.T) {
	t.Parallel()
	e, dir, clk, tok := annSignedIn(t)
	dir.set(func() { dir.down = true })
	clk.Advance(3 * time.Minute)
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", tok, nil, nil), "3 minutes after the last answer: within 1m + 5m")
	clk.Advance(4 * time.Minute)
	var refusal map[string]any
	require.Equal(t, http.StatusServiceUnavailable, e.call("GET", "/api/v1/me", tok, nil, &refusal))
	require.Contains(t, refusal["error"], "your access could not be checked with the ldap directory for 7m0s")
	dir.set(func() { dir.down = false })
	clk.Advance(11 * time.Second) // past the backoff between attempts
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", tok, nil, nil), "the directory answers again")
}

// TestPasswordSignInOff: with --auth-local=false only the break-glass
// user signs in with a password; the refusal is said only to whoever knows
// the password; directory users sign in as before.
func TestPasswordSignInOff(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, "sqlite")
	dir := &fakeLDAP{people: map[string]fakePerson{"ann": {password: "ann-pw", groups: []string{opsGroup}}}}
	e := ssoEnv(t, st, dir, clock.NewManual(time.Now()), func(c *api.Config) {
		c.NoPasswordSignIn, c.BreakGlassUser = true, "root"
	})
	e.user("root", "admin")
	e.user("carl", "operator")
	code, out := signIn(e, "carl", "password-carl")
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, out["error"], "password sign-in is turned off on this platform (--auth-local=false)")
	code, out = signIn(e, "carl", "wrong")
	require.Equal(t, http.StatusUnauthorized, code, "a wrong password does not learn that password sign-in is off for carl")
	require.Equal(t, "wrong user name or password", out["error"])
	code, _ = signIn(e, "ROOT", "password-root")
	require.Equal(t, http.StatusOK, code, "the break-glass user, any case")
	code, _ = signIn(e, "ann", "ann-pw")
	require.Equal(t, http.StatusOK, code)
	var info map[string]any
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/sso", "", nil, &info))
	require.Equal(t, map[string]any{"password": false, "ldap": true}, info)
}

// fakeOIDC is a provider in memory for the API's OIDC routes (the real
// flow, against a provider process and in Chromium, is
// admin/sso/oidcauth's and the SSO end-to-end test's).
type fakeOIDC struct {
	mu     sync.Mutex
	issued map[string]sso.Pending // code → the pending sign-in it answers
	who    sso.Identity
}

func (f *fakeOIDC) Begin(context.Context) (string, sso.Pending, error) {
	p := sso.Pending{State: "state-" + randomish(), Nonce: "nonce", Verifier: "verifier"}
	return "https://id.example.com/auth?state=" + p.State, p, nil
}

func (f *fakeOIDC) Finish(_ context.Context, p sso.Pending, state, code string) (sso.Identity, sso.Tokens, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	want, ok := f.issued[code]
	if !ok || want.State != state || p.State != state || p.Verifier != "verifier" || p.Nonce != "nonce" {
		return sso.Identity{}, sso.Tokens{}, fmt.Errorf("code exchange refused: %w", sso.ErrBadCredentials)
	}
	return f.who, sso.Tokens{RefreshToken: "refresh-1"}, nil
}

func (f *fakeOIDC) Refresh(_ context.Context, token string) (sso.Identity, sso.Tokens, error) {
	if token != "refresh-1" {
		return sso.Identity{}, sso.Tokens{}, fmt.Errorf("invalid_grant: %w", sso.ErrGone)
	}
	return f.who, sso.Tokens{}, nil
}

func (f *fakeOIDC) LogoutURL(context.Context, string, string) (string, bool) {
	return "https://id.example.com/logout", true
}

var counter struct {
	sync.Mutex
	n int
}

func randomish() string {
	counter.Lock()
	defer counter.Unlock()
	counter.n++
	return fmt.Sprint(counter.n)
}

// TestOIDCRoutes: the sign-in redirects to the provider, the callback
// starts a session and returns to the page the sign-in began from, a state
// serves once, a return path outside the console is refused (no open
// redirect), a user name a local user holds is refused, and logout names
// the provider's logout page.
func TestOIDCRoutes(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, "sqlite")
	prov := &fakeOIDC{issued: map[string]sso.Pending{}, who: sso.Identity{Source: sso.SourceOIDC, Subject: "sub-1", Username: "olga", Groups: []string{"platform"}}}
	sealer, err := sso.NewSealer([]byte("0123456789abcdef0123"))
	require.NoError(t, err)
	clk := clock.NewManual(time.Now())
	e := ssoEnv(t, st, nil, clk, func(c *api.Config) {
		c.SSO.OIDC, c.SSO.Sealer = prov, sealer
		c.SSO.Config.OIDC = &sso.OIDCConfig{Name: "Company", RedirectURL: "https://jobs.example.com/api/v1/sso/oidc/callback"}
		c.SSO.Config.Mapping = append(c.SSO.Config.Mapping, sso.Rule{Group: "platform", Role: "admin"})
	})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) redirect {
		resp, err := noFollow.Get(e.srv.URL + path)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return redirect{status: resp.StatusCode, location: resp.Header.Get("Location"), cookies: resp.Cookies()}
	}
	begin := func(ret string) string {
		resp := get("/api/v1/sso/oidc/login?return=" + url.QueryEscape(ret))
		require.Equal(t, http.StatusFound, resp.status)
		loc, err := url.Parse(resp.location)
		require.NoError(t, err)
		require.Equal(t, "id.example.com", loc.Host)
		state := loc.Query().Get("state")
		prov.mu.Lock()
		prov.issued["code-"+state] = sso.Pending{State: state}
		prov.mu.Unlock()
		return state
	}
	state := begin("/#/jobs/7")
	resp := get("/api/v1/sso/oidc/callback?state=" + state + "&code=code-" + state)
	require.Equal(t, http.StatusFound, resp.status)
	require.Equal(t, "/#/jobs/7", resp.location)
	var session string
	for _, c := range resp.cookies {
		if c.Name == api.SessionCookie {
			session = c.Value
		}
	}
	require.NotEmpty(t, session)
	var me map[string]any
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", session, nil, &me))
	require.Equal(t, map[string]any{"username": "olga", "role": "admin", "apps": []any{}, "source": "oidc"}, me)
	sealed, err := st.UserRefreshToken(context.Background(), mustUser(t, st, "olga").ID)
	require.NoError(t, err)
	require.NotContains(t, sealed, "refresh-1", "the refresh token is stored sealed")

	// The same state again: refused, back to the sign-in page with why.
	resp = get("/api/v1/sso/oidc/callback?state=" + state + "&code=code-" + state)
	require.Equal(t, http.StatusFound, resp.status)
	require.True(t, strings.HasPrefix(resp.location, "/?sso_error="), resp.location)
	require.Contains(t, errorOf(t, resp), "this sign-in was used already")

	// The provider's own refusal.
	resp = get("/api/v1/sso/oidc/callback?error=access_denied&error_description=user+cancelled")
	require.Equal(t, "the provider refused the sign-in: access_denied (user cancelled)", errorOf(t, resp))

	// No open redirect.
	for _, bad := range []string{"//evil.example", "https://evil.example/", "/\\evil.example", "/api/v1/jobs", "/?x=1"} {
		resp = get("/api/v1/sso/oidc/login?return=" + url.QueryEscape(bad))
		require.Equal(t, http.StatusFound, resp.status)
		require.Contains(t, errorOf(t, resp), "is not a page of this console", bad)
	}

	// A user name a local account holds.
	e.user("root", "admin")
	prov.who = sso.Identity{Source: sso.SourceOIDC, Subject: "sub-2", Username: "root", Groups: []string{"platform"}}
	state = begin("/")
	resp = get("/api/v1/sso/oidc/callback?state=" + state + "&code=code-" + state)
	require.Contains(t, errorOf(t, resp), `the user name "root" is taken by another account`)

	var logout map[string]any
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/logout", session, nil, &logout))
	require.Equal(t, "https://id.example.com/logout", logout["logout_url"])

	// A refresh that answers for another person ends the access.
	state = begin("/")
	prov.who = sso.Identity{Source: sso.SourceOIDC, Subject: "sub-1", Username: "olga", Groups: []string{"platform"}}
	resp = get("/api/v1/sso/oidc/callback?state=" + state + "&code=code-" + state)
	require.Equal(t, "/", resp.location)
	for _, c := range resp.cookies {
		if c.Name == api.SessionCookie {
			session = c.Value
		}
	}
	prov.who.Subject = "sub-someone-else"
	clk.Advance(61 * time.Second)
	var refusal map[string]any
	require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/me", session, nil, &refusal))
	require.Contains(t, refusal["error"], "access of olga ended: the directory answered for another person")
	var info map[string]any
	require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/sso", "", nil, &info))
	require.Equal(t, map[string]any{"password": true, "ldap": false, "oidc": map[string]any{"name": "Company", "login_url": "/api/v1/sso/oidc/login"}}, info)
}

// redirect is what a route that redirects answered.
type redirect struct {
	status   int
	location string
	cookies  []*http.Cookie
}

func errorOf(t *testing.T, resp redirect) string {
	t.Helper()
	loc, err := url.Parse(resp.location)
	require.NoError(t, err)
	return loc.Query().Get("sso_error")
}

func mustUser(t *testing.T, st *store.Store, name string) store.User {
	t.Helper()
	u, err := st.UserByName(context.Background(), name)
	require.NoError(t, err)
	return u
}

// TestLDAPAgainstSlapd: sign-in through a real slapd (testenv), then the
// server killed: the directory's accounts get a 503 that says so, a local
// break-glass admin still signs in, and after a restart the directory's
// accounts sign in again.
func TestLDAPAgainstSlapd(t *testing.T) {
	t.Parallel()
	ann := testenv.LDAPUser{UID: "ann", Password: "ann-directory-pw", Groups: []string{"ops"}}
	slapd := testenv.StartLDAP(t, ann)
	dir, err := ldapauth.New(sso.LDAPConfig{URL: slapd.URL, StartTLS: true, CAFile: slapd.CAFile, BindDN: slapd.ServiceDN,
		BindPassword: slapd.ServicePassword, UserBase: slapd.UserBase, Timeout: 2 * time.Second}, nil)
	require.NoError(t, err)
	st := storetest.Open(t, "sqlite")
	e := ssoEnv(t, st, nil, clock.NewManual(time.Now()), func(c *api.Config) {
		c.SSO.LDAP = dir
		c.SSO.Config.Mapping = sso.Mapping{{Group: slapd.GroupDN("ops"), Role: "operator"}}
		c.NoPasswordSignIn, c.BreakGlassUser = true, "root"
	})
	e.user("root", "admin")
	code, out := signIn(e, "ann", "ann-directory-pw")
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, "operator", out["role"])
	code, _ = signIn(e, "ann", "not-her-password")
	require.Equal(t, http.StatusUnauthorized, code)

	require.NoError(t, slapd.Kill())
	code, out = signIn(e, "ann", "ann-directory-pw")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, out["error"], "the LDAP directory cannot be reached")
	code, _ = signIn(e, "root", "password-root")
	require.Equal(t, http.StatusOK, code, "the break-glass admin while the directory is down")

	require.NoError(t, slapd.Start())
	code, out = signIn(e, "ann", "ann-directory-pw")
	require.Equal(t, http.StatusOK, code, out)
}
