package testenv_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// ldapConn connects to url (StartTLS first when startTLS) trusting the
// fixture's CA, and binds as dn unless dn is empty.
func ldapConn(t *testing.T, l *testenv.LDAP, url string, startTLS bool, dn, password string) *ldap.Conn {
	t.Helper()
	pem, err := os.ReadFile(l.CAFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pem))
	tc := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	c, err := ldap.DialURL(url, ldap.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}), ldap.DialWithTLSConfig(tc))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	c.SetTimeout(5 * time.Second)
	if startTLS {
		require.NoError(t, c.StartTLS(tc))
	}
	if dn != "" {
		require.NoError(t, c.Bind(dn, password))
	}
	return c
}

// memberOf reads the memberOf values of dn as the service account; nil
// when the entry does not exist.
func memberOf(t *testing.T, c *ldap.Conn, dn string) []string {
	t.Helper()
	res, err := c.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{"memberOf"}, nil))
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return nil
	}
	require.NoError(t, err)
	require.Len(t, res.Entries, 1)
	return res.Entries[0].GetAttributeValues("memberOf")
}

func TestLDAPFixture(t *testing.T) {
	t.Parallel()
	alice := testenv.LDAPUser{UID: "alice", Password: "alice-pw", Mail: "alice@example.org", Groups: []string{"ops", "devs"}}
	bob := testenv.LDAPUser{UID: "bob", Password: "bob-pw", OU: "contractors", Groups: []string{"devs"}}
	start := time.Now()
	l := testenv.StartLDAP(t, alice, bob)
	t.Logf("slapd started and loaded in %s (pid %d)", time.Since(start).Round(time.Millisecond), l.PID())
	require.Equal(t, "uid=bob,ou=contractors,ou=people,dc=example,dc=org", l.UserDN(bob))

	svc := ldapConn(t, l, l.URL, false, l.ServiceDN, l.ServicePassword)
	require.ElementsMatch(t, []string{l.GroupDN("ops"), l.GroupDN("devs")}, memberOf(t, svc, l.UserDN(alice)))
	require.Equal(t, []string{l.GroupDN("devs")}, memberOf(t, svc, l.UserDN(bob)))

	// The service account finds users, reads no password, writes nothing.
	res, err := svc.Search(ldap.NewSearchRequest(l.UserBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(uid=*)", []string{"uid", "mail", "userPassword"}, nil))
	require.NoError(t, err)
	require.Len(t, res.Entries, 2)
	for _, e := range res.Entries {
		require.Empty(t, e.GetAttributeValues("userPassword"))
	}
	mod := ldap.NewModifyRequest(l.UserDN(alice), nil)
	mod.Replace("mail", []string{"mallory@example.org"})
	require.True(t, ldap.IsErrorWithCode(svc.Modify(mod), ldap.LDAPResultInsufficientAccessRights))

	// Anonymous clients read nothing.
	anon := ldapConn(t, l, l.URL, false, "", "")
	res, err = anon.Search(ldap.NewSearchRequest(l.UserBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(uid=*)", nil, nil))
	if err == nil {
		require.Empty(t, res.Entries)
	}

	// Users bind with their password, over StartTLS and LDAPS too.
	ldapConn(t, l, l.URL, true, l.UserDN(alice), "alice-pw")
	ldapConn(t, l, l.LDAPSURL, false, l.UserDN(bob), "bob-pw")
	wrong := ldapConn(t, l, l.URL, false, "", "")
	require.True(t, ldap.IsErrorWithCode(wrong.Bind(l.UserDN(alice), "bob-pw"), ldap.LDAPResultInvalidCredentials))

	// Group changes show in memberOf.
	require.NoError(t, l.RemoveFromGroup(alice, "devs"))
	require.Equal(t, []string{l.GroupDN("ops")}, memberOf(t, svc, l.UserDN(alice)))
	require.ErrorContains(t, l.RemoveFromGroup(alice, "ops"), "requires attribute 'member'", "the last member stays")
	require.NoError(t, l.AddToGroup(alice, "devs"))
	require.Len(t, memberOf(t, svc, l.UserDN(alice)), 2)
	require.Error(t, l.RemoveFromGroup(bob, "ops"), "bob is not in ops")
	require.NoError(t, l.DeleteUser(bob))
	require.Nil(t, memberOf(t, svc, l.UserDN(bob)))

	// Kill, start: the data survived.
	pid := l.PID()
	require.NoError(t, l.Kill())
	require.Zero(t, l.PID())
	_, err = ldap.DialURL(l.URL, ldap.DialWithDialer(&net.Dialer{Timeout: time.Second}))
	require.Error(t, err, "nothing listens after Kill")
	require.NoError(t, l.Start())
	require.NotEqual(t, pid, l.PID())
	svc = ldapConn(t, l, l.URL, false, l.ServiceDN, l.ServicePassword)
	require.Len(t, memberOf(t, svc, l.UserDN(alice)), 2)

	require.NoError(t, l.Restart())
	ldapConn(t, l, l.LDAPSURL, false, l.UserDN(alice), "alice-pw")
}
