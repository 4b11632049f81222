package ldapauth_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/sso"
	"github.com/shardjob/shardjob/admin/sso/ldapauth"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testenv.Wrap(m))
}

// The people of the test directories. bob is in both of alice's groups,
// so that she can leave either (a groupOfNames keeps one member).
var (
	alice = testenv.LDAPUser{UID: "alice", Password: "alice-pw", Mail: "alice@example.org", Groups: []string{"ops", "devs"}}
	bob   = testenv.LDAPUser{UID: "bob", Password: "bob-pw", Groups: []string{"devs", "ops"}}
	carol = testenv.LDAPUser{UID: "carol"} // no password: nobody can bind as her
	twinA = testenv.LDAPUser{UID: "twin", Password: "twin-pw", OU: "staff"}
	twinB = testenv.LDAPUser{UID: "twin", Password: "twin-pw", OU: "contractors"}
)

// config is the configuration for l: plain LDAP, the service account,
// memberOf groups, mail.
func config(l *testenv.LDAP) sso.LDAPConfig {
	return sso.LDAPConfig{
		URL:            l.URL,
		CAFile:         l.CAFile,
		BindDN:         l.ServiceDN,
		BindPassword:   l.ServicePassword,
		UserBase:       l.UserBase,
		EmailAttribute: "mail",
		Timeout:        2 * time.Second,
	}
}

func newDirectory(t *testing.T, cfg sso.LDAPConfig) *ldapauth.Directory {
	t.Helper()
	d, err := ldapauth.New(cfg, nil)
	require.NoError(t, err)
	return d
}

func aliceIdentity(l *testenv.LDAP, groups ...string) sso.Identity {
	id := sso.Identity{Source: sso.SourceLDAP, Subject: l.UserDN(alice), Username: "alice", Email: "alice@example.org"}
	for _, g := range groups {
		id.Groups = append(id.Groups, l.GroupDN(g))
	}
	return id
}

// requireRefused checks that err wraps want, and only want of the sso
// errors, and that its text has each of says.
func requireRefused(t *testing.T, err, want error, says ...string) {
	t.Helper()
	require.ErrorIs(t, err, want)
	for _, other := range []error{sso.ErrBadCredentials, sso.ErrUnavailable, sso.ErrGone} {
		if !errors.Is(want, other) {
			require.NotErrorIs(t, err, other)
		}
	}
	for _, s := range says {
		require.ErrorContains(t, err, s)
	}
}

// TestLDAPSignIn runs the checks that change nothing against one server.
func TestLDAPSignIn(t *testing.T) {
	t.Parallel()
	l := testenv.StartLDAP(t, alice, bob, carol, twinA, twinB)
	ctx := context.Background()

	t.Run("memberOf", func(t *testing.T) {
		t.Parallel()
		d := newDirectory(t, config(l))
		id, err := d.SignIn(ctx, "alice", "alice-pw")
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "devs", "ops"), id)

		// uid matches case-insensitively; the name is the directory's.
		id, err = d.SignIn(ctx, "ALICE", "alice-pw")
		require.NoError(t, err)
		require.Equal(t, "alice", id.Username)

		id, err = d.Lookup(ctx, l.UserDN(alice))
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "devs", "ops"), id)
	})

	t.Run("group search", func(t *testing.T) {
		t.Parallel()
		cfg := config(l)
		cfg.GroupBase = l.GroupBase
		d := newDirectory(t, cfg)
		id, err := d.SignIn(ctx, "alice", "alice-pw")
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "devs", "ops"), id)

		cfg.GroupFilter = "(&(member={dn})(cn=o*))"
		d = newDirectory(t, cfg)
		id, err = d.SignIn(ctx, "alice", "alice-pw")
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "ops"), id)
		id, err = d.Lookup(ctx, l.UserDN(alice))
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "ops"), id)
	})

	t.Run("wrong password", func(t *testing.T) {
		t.Parallel()
		d := newDirectory(t, config(l))
		_, err := d.SignIn(ctx, "alice", "bob-pw")
		requireRefused(t, err, sso.ErrBadCredentials, "refused the password of "+l.UserDN(alice), "Invalid Credentials")
		require.NotContains(t, err.Error(), "bob-pw")
		_, err = d.SignIn(ctx, "carol", "anything")
		requireRefused(t, err, sso.ErrBadCredentials, "refused the password")
	})

	t.Run("unknown user", func(t *testing.T) {
		t.Parallel()
		_, err := newDirectory(t, config(l)).SignIn(ctx, "mallory", "alice-pw")
		requireRefused(t, err, sso.ErrBadCredentials, "no entry under "+l.UserBase+" matches (uid=mallory)")
	})

	t.Run("empty password refused without connecting", func(t *testing.T) {
		t.Parallel()
		_, err := newDirectory(t, config(l)).SignIn(ctx, "alice", "")
		requireRefused(t, err, sso.ErrBadCredentials, "empty password")
		// Nothing listens here: the refusal comes before any connection.
		cfg := config(l)
		cfg.URL = "ldap://127.0.0.1:" + closedPort(t)
		_, err = newDirectory(t, cfg).SignIn(ctx, "alice", "")
		requireRefused(t, err, sso.ErrBadCredentials, "empty password")
		_, err = newDirectory(t, cfg).SignIn(ctx, "", "alice-pw")
		requireRefused(t, err, sso.ErrBadCredentials, "empty user name")
	})

	t.Run("injection in the user name", func(t *testing.T) {
		t.Parallel()
		d := newDirectory(t, config(l))
		for _, name := range []string{"*", "alice)(uid=*", "*)(|(uid=*", "a*", "alice)(|(uid=bob)", `alice\2a`, "alice\x00", "(uid=alice)"} {
			for _, pw := range []string{"alice-pw", "bob-pw"} {
				_, err := d.SignIn(ctx, name, pw)
				// Escaped, the name matches no entry: neither several
				// (which "*" would) nor another user's.
				requireRefused(t, err, sso.ErrBadCredentials, "no entry under")
			}
		}
	})

	t.Run("two entries match", func(t *testing.T) {
		t.Parallel()
		_, err := newDirectory(t, config(l)).SignIn(ctx, "twin", "twin-pw")
		requireRefused(t, err, sso.ErrBadCredentials, "more than one entry", "ambiguous")
	})

	t.Run("StartTLS", func(t *testing.T) {
		t.Parallel()
		cfg := config(l)
		cfg.StartTLS = true
		id, err := newDirectory(t, cfg).SignIn(ctx, "alice", "alice-pw")
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "devs", "ops"), id)

		cfg.CAFile = ""
		_, err = newDirectory(t, cfg).SignIn(ctx, "alice", "alice-pw")
		requireRefused(t, err, sso.ErrUnavailable, "StartTLS", "certificate signed by unknown authority", "ldap.ca_file")
	})

	t.Run("LDAPS", func(t *testing.T) {
		t.Parallel()
		cfg := config(l)
		cfg.URL = l.LDAPSURL
		id, err := newDirectory(t, cfg).SignIn(ctx, "alice", "alice-pw")
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "devs", "ops"), id)

		cfg.CAFile = ""
		d := newDirectory(t, cfg)
		_, err = d.SignIn(ctx, "alice", "alice-pw")
		requireRefused(t, err, sso.ErrUnavailable, "TLS handshake", "certificate signed by unknown authority",
			`certificate (subject "CN=localhost", issuer "CN=shardjob test CA for slapd")`, "ldap.ca_file")
		_, err = d.Lookup(ctx, l.UserDN(alice))
		requireRefused(t, err, sso.ErrUnavailable, "certificate signed by unknown authority")
	})

	t.Run("service account refused", func(t *testing.T) {
		t.Parallel()
		cfg := config(l)
		cfg.BindPassword = "wrong"
		d := newDirectory(t, cfg)
		_, err := d.SignIn(ctx, "alice", "alice-pw")
		requireRefused(t, err, sso.ErrUnavailable, "bind as the service account", "check ldap.bind_dn "+l.ServiceDN)
		_, err = d.Lookup(ctx, l.UserDN(alice))
		requireRefused(t, err, sso.ErrUnavailable, "check ldap.bind_dn")
	})

	t.Run("Lookup of what is not a user", func(t *testing.T) {
		t.Parallel()
		d := newDirectory(t, config(l))
		for _, subject := range []string{"", "not a dn", l.ServiceDN, l.UserBase, "uid=nobody," + l.UserBase} {
			_, err := d.Lookup(ctx, subject)
			requireRefused(t, err, sso.ErrGone)
		}
	})
}

// closedPort returns a port on 127.0.0.1 nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	return port
}

func TestLDAPGroupRemovalShowsInLookup(t *testing.T) {
	t.Parallel()
	l := testenv.StartLDAP(t, alice, bob)
	ctx := context.Background()
	byMemberOf := newDirectory(t, config(l))
	cfg := config(l)
	cfg.GroupBase = l.GroupBase
	bySearch := newDirectory(t, cfg)

	for _, d := range []*ldapauth.Directory{byMemberOf, bySearch} {
		id, err := d.SignIn(ctx, "alice", "alice-pw")
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "devs", "ops"), id)
	}
	require.NoError(t, l.RemoveFromGroup(alice, "ops"))
	for _, d := range []*ldapauth.Directory{byMemberOf, bySearch} {
		id, err := d.Lookup(ctx, l.UserDN(alice))
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "devs"), id)
		id, err = d.SignIn(ctx, "alice", "alice-pw")
		require.NoError(t, err)
		require.Equal(t, aliceIdentity(l, "devs"), id)
	}
}

func TestLDAPDeletedUserIsGone(t *testing.T) {
	t.Parallel()
	l := testenv.StartLDAP(t, alice, bob)
	ctx := context.Background()
	d := newDirectory(t, config(l))
	_, err := d.Lookup(ctx, l.UserDN(alice))
	require.NoError(t, err)

	require.NoError(t, l.DeleteUser(alice))
	_, err = d.Lookup(ctx, l.UserDN(alice))
	requireRefused(t, err, sso.ErrGone, l.UserDN(alice)+" does not exist")
	_, err = d.SignIn(ctx, "alice", "alice-pw")
	requireRefused(t, err, sso.ErrBadCredentials, "no entry")
	id, err := d.Lookup(ctx, l.UserDN(bob))
	require.NoError(t, err, "bob stays")
	require.Equal(t, "bob", id.Username)
}

func TestLDAPServerKilled(t *testing.T) {
	t.Parallel()
	l := testenv.StartLDAP(t, alice, bob)
	ctx := context.Background()
	cfg := config(l)
	d := newDirectory(t, cfg)
	_, err := d.SignIn(ctx, "alice", "alice-pw")
	require.NoError(t, err)

	require.NoError(t, l.Kill())
	start := time.Now()
	_, err = d.SignIn(ctx, "alice", "alice-pw")
	requireRefused(t, err, sso.ErrUnavailable, l.URL+": connect:", "connection refused")
	_, err = d.Lookup(ctx, l.UserDN(alice))
	requireRefused(t, err, sso.ErrUnavailable, "connection refused")
	require.Less(t, time.Since(start), cfg.Timeout, "a dead server is known at once")

	require.NoError(t, l.Start())
	_, err = d.SignIn(ctx, "alice", "alice-pw")
	require.NoError(t, err, "the next call after the restart works: no connection is kept")
}

// silentServer accepts connections and never answers, like a server that
// hangs; it stops when the test ends.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

func TestLDAPTimeout(t *testing.T) {
	t.Parallel()
	addr := silentServer(t)
	cfg := sso.LDAPConfig{URL: "ldap://" + addr, UserBase: "ou=people,dc=example,dc=org", BindDN: "cn=svc", BindPassword: "pw", Timeout: 300 * time.Millisecond}
	for _, mode := range []string{"ldap", "ldaps", "starttls"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			c := cfg
			switch mode {
			case "ldaps":
				c.URL = "ldaps://" + addr
			case "starttls":
				c.StartTLS = true
			}
			d := newDirectory(t, c)
			start := time.Now()
			_, err := d.SignIn(context.Background(), "alice", "alice-pw")
			took := time.Since(start)
			requireRefused(t, err, sso.ErrUnavailable, "no answer within 300ms")
			require.GreaterOrEqual(t, took, c.Timeout)
			require.Less(t, took, 5*c.Timeout)
		})
	}
	t.Run("context deadline", func(t *testing.T) {
		t.Parallel()
		c := cfg
		c.Timeout = time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := newDirectory(t, c).Lookup(ctx, "uid=alice,ou=people,dc=example,dc=org")
		requireRefused(t, err, sso.ErrUnavailable)
		require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
		require.Less(t, time.Since(start), 5*time.Second)
	})
	t.Run("context canceled", func(t *testing.T) {
		t.Parallel()
		c := cfg
		c.Timeout = time.Minute
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := newDirectory(t, c).SignIn(ctx, "alice", "alice-pw")
		requireRefused(t, err, sso.ErrUnavailable)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestLDAPNewRefuses(t *testing.T) {
	t.Parallel()
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600))
	ok := sso.LDAPConfig{URL: "ldaps://ldap.example.org", UserBase: "ou=people,dc=example,dc=org"}
	_, err := ldapauth.New(ok, nil)
	require.NoError(t, err)
	for _, c := range []struct {
		change func(*sso.LDAPConfig)
		want   string
	}{
		{func(c *sso.LDAPConfig) { c.URL = "http://ldap.example.org" }, "write ldap://host:389"},
		{func(c *sso.LDAPConfig) { c.StartTLS = true }, "choose one"},
		{func(c *sso.LDAPConfig) { c.UserBase = "" }, "user_base is empty"},
		{func(c *sso.LDAPConfig) { c.UserBase = "people" }, "is not a DN"},
		{func(c *sso.LDAPConfig) { c.UserFilter = "(uid=alice)" }, "does not contain {username}"},
		{func(c *sso.LDAPConfig) { c.CAFile = filepath.Join(t.TempDir(), "missing.pem") }, "no such file"},
		{func(c *sso.LDAPConfig) { c.CAFile = notPEM }, "holds no PEM certificate"},
	} {
		cfg := ok
		c.change(&cfg)
		_, err := ldapauth.New(cfg, nil)
		require.ErrorContains(t, err, c.want)
	}
}
