package sso

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const sample = `
oidc:
  name: Company
  issuer: https://id.example.com/realms/main
  client_id: shardjob
  client_secret_file: SECRET
  redirect_url: https://jobs.example.com/api/v1/sso/oidc/callback
ldap:
  url: ldaps://ad.example.com:636
  bind_dn: cn=svc,dc=example,dc=com
  user_base: ou=people,dc=example,dc=com
  user_filter: (sAMAccountName={username})
  username_attribute: sAMAccountName
mapping:
  - group: platform
    role: admin
  - group: cn=ops,ou=groups,dc=example,dc=com
    role: operator
    apps: [billing]
recheck: 0s
`

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secretFile, []byte("s3cret\n"), 0o600))
	path := filepath.Join(dir, "sso.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(sample, "SECRET", secretFile)), 0o600))
	env := map[string]string{EnvLDAPBindPassword: "bindpw"}
	c, err := Load(path, func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "s3cret", c.OIDC.ClientSecret)
	require.Equal(t, "bindpw", c.LDAP.BindPassword)
	require.Equal(t, []string{"profile", "email"}, c.OIDC.Scopes)
	require.Equal(t, DefaultGroupsClaim, c.OIDC.GroupsClaim)
	require.Equal(t, time.Minute, c.OIDC.ClockSkew)
	require.Equal(t, "(member={dn})", c.LDAP.GroupFilter)
	require.Equal(t, 5*time.Second, c.LDAP.Timeout)
	require.Equal(t, time.Duration(0), c.RecheckEvery(), "0s is kept: every request")
	require.Equal(t, DefaultRecheckGrace, c.Grace())
	require.Len(t, c.Mapping, 2)

	// Without the environment's password, a bind DN is refused.
	_, err = Load(path, func(string) string { return "" })
	require.ErrorContains(t, err, "ldap.bind_dn is set but no password")
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	const ldap = "ldap:\n  url: ldap://127.0.0.1:389\n  user_base: dc=x\n"
	const rule = "mapping:\n  - {group: g, role: viewer}\n"
	for _, c := range []struct{ yaml, want string }{
		{"", "the file is empty"},
		{rule, "neither oidc nor ldap"},
		{ldap, "mapping is empty"},
		{ldap + rule + "colour: blue\n", "colour"},
		{ldap + "mapping:\n  - {group: g, role: boss}\n", `role "boss"`},
		{"ldap:\n  url: http://x\n  user_base: dc=x\n" + rule, "write ldap://host:389"},
		{"ldap:\n  url: ldaps://x\n  start_tls: true\n  user_base: dc=x\n" + rule, "choose one"},
		{"ldap:\n  url: ldap://x\n" + rule, "ldap.user_base is empty"},
		{"ldap:\n  url: ldap://x\n  user_base: dc=x\n  user_filter: (uid=bob)\n" + rule, "does not contain {username}"},
		{"oidc:\n  issuer: http://id.example.com\n  client_id: c\n  redirect_url: https://x/cb\n" + rule, "use https"},
		{"oidc:\n  issuer: https://id.example.com\n  redirect_url: https://x/cb\n" + rule, "client_id is empty"},
		{"oidc:\n  issuer: https://id\n  client_id: c\n  redirect_url: https://x/cb\n  clock_skew: 1h\n" + rule, "clock_skew"},
		{ldap + rule + "recheck: 2h\n", "recheck 2h0m0s"},
	} {
		_, err := Parse([]byte(c.yaml))
		require.ErrorContains(t, err, c.want, c.yaml)
	}
	// http on loopback is accepted (a provider in a test).
	_, err := Parse([]byte("oidc:\n  issuer: http://127.0.0.1:5556\n  client_id: c\n  redirect_url: http://localhost:8080/cb\n" + rule))
	require.NoError(t, err)
}

// TestDocumentedExampleParses: the worked example of docs/configuration.md
// ("Single sign-on file") is a file the admin accepts, with the meaning the
// text gives it.
func TestDocumentedExampleParses(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	require.NoError(t, err)
	text := string(doc)
	start := strings.Index(text, "### Single sign-on file")
	require.GreaterOrEqual(t, start, 0, "the section is there")
	block := text[start:]
	open := strings.Index(block, "```yaml\n")
	require.GreaterOrEqual(t, open, 0, "the section has a YAML example")
	block = block[open+len("```yaml\n"):]
	end := strings.Index(block, "```")
	require.GreaterOrEqual(t, end, 0, "the example is closed")
	block = block[:end]
	c, err := Parse([]byte(block))
	require.NoError(t, err)
	require.Equal(t, "Company SSO", c.OIDC.Name)
	require.Equal(t, "sAMAccountName", c.LDAP.UsernameAttribute)
	g, ok := c.Mapping.Resolve(SourceLDAP, []string{"CN=Batch Operators,OU=Groups,DC=corp,DC=example,DC=com", "cn=engineering,ou=groups,dc=corp,dc=example,dc=com"})
	require.True(t, ok)
	require.Equal(t, Grant{Role: "operator", Apps: []string{"search"}}, g, "operator of search and viewer of every app: operator of search")
	g, ok = c.Mapping.Resolve(SourceOIDC, []string{"billing-ops"})
	require.True(t, ok)
	require.Equal(t, Grant{Role: "operator", Apps: []string{"billing", "billing-reports"}}, g)
	require.Equal(t, 10*time.Minute, c.Grace())
}
