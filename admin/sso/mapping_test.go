package sso

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	m := Mapping{
		{Group: "cn=ops,ou=groups,dc=example,dc=org", Role: "operator", Apps: []string{"billing"}},
		{Group: "cn=ops-search,ou=groups,dc=example,dc=org", Role: "viewer", Apps: []string{"search", "billing"}},
		{Group: "platform", Source: "oidc", Role: "admin"},
		{Group: "auditors", Role: "viewer"},
		{Group: "cn=ops-2", Role: "operator", Apps: []string{"reports"}},
		{Group: "cn=ops-all", Role: "operator"},
		{Group: "cn=platform,ou=groups,dc=example,dc=org", Source: "ldap", Role: "admin", Apps: []string{"ignored"}},
	}
	cases := []struct {
		name   string
		source string
		groups []string
		want   Grant
		ok     bool
	}{
		{"no group", SourceLDAP, nil, Grant{}, false},
		{"unmapped groups", SourceOIDC, []string{"sales", "cn=ops"}, Grant{}, false},
		{"one rule", SourceLDAP, []string{"cn=ops,ou=groups,dc=example,dc=org"}, Grant{Role: "operator", Apps: []string{"billing"}}, true},
		{"a DN spelled otherwise", SourceLDAP, []string{"CN=Ops, OU=Groups ,DC=example,DC=org"}, Grant{Role: "operator", Apps: []string{"billing"}}, true},
		{"OIDC values are exact", SourceOIDC, []string{"CN=Ops, OU=Groups ,DC=example,DC=org"}, Grant{}, false},
		{"the highest role, with its own rules' apps only", SourceLDAP, []string{"cn=ops-search,ou=groups,dc=example,dc=org", "cn=ops,ou=groups,dc=example,dc=org"},
			Grant{Role: "operator", Apps: []string{"billing"}}, true},
		{"a lower role's every app does not widen a higher role", SourceOIDC, []string{"auditors", "cn=ops,ou=groups,dc=example,dc=org"},
			Grant{Role: "operator", Apps: []string{"billing"}}, true},
		{"rules of the same role: apps together", SourceOIDC, []string{"cn=ops,ou=groups,dc=example,dc=org", "cn=ops-2"},
			Grant{Role: "operator", Apps: []string{"billing", "reports"}}, true},
		{"a rule of the top role without apps gives every app", SourceOIDC, []string{"cn=ops-all", "cn=ops,ou=groups,dc=example,dc=org"},
			Grant{Role: "operator"}, true},
		{"a viewer of every app", SourceOIDC, []string{"auditors"}, Grant{Role: "viewer"}, true},
		{"source limits a rule", SourceLDAP, []string{"platform"}, Grant{}, false},
		{"admin has every app", SourceLDAP, []string{"cn=platform,ou=groups,dc=example,dc=org", "cn=ops,ou=groups,dc=example,dc=org"}, Grant{Role: "admin"}, true},
		{"oidc admin", SourceOIDC, []string{"platform"}, Grant{Role: "admin"}, true},
	}
	for _, c := range cases {
		got, ok := m.Resolve(c.source, c.groups)
		require.Equal(t, c.ok, ok, c.name)
		require.Equal(t, c.want, got, c.name)
	}
}

func TestMappingCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rule Rule
		want string
	}{
		{Rule{Role: "admin"}, "group is empty"},
		{Rule{Group: "g", Role: "root"}, `role "root" is not admin, operator or viewer`},
		{Rule{Group: "g", Role: "viewer", Source: "saml"}, `source "saml"`},
		{Rule{Group: "g", Role: "viewer", Apps: []string{"a,b"}}, "holds a comma"},
	} {
		require.ErrorContains(t, Mapping{c.rule}.Check(), c.want)
	}
	require.NoError(t, Mapping{{Group: "g", Role: "viewer", Apps: []string{"a"}}}.Check())
}

func TestNormalizeDN(t *testing.T) {
	t.Parallel()
	require.Equal(t, "cn=a b,ou=x,dc=org", NormalizeDN(" CN = A b , OU=x,DC=Org "))
	require.Equal(t, `cn=a\,b,dc=org`, NormalizeDN(`cn=a\,b, dc=org`), "an escaped comma stays inside its part")
	require.NotEqual(t, NormalizeDN(`cn=a\,b,dc=org`), NormalizeDN(`cn=a,b,dc=org`))
}

func FuzzResolve(f *testing.F) {
	f.Add("cn=ops,dc=org", "CN=ops, DC=org", "ldap")
	f.Add("ops", "ops", "oidc")
	f.Fuzz(func(t *testing.T, rule, group, source string) {
		m := Mapping{{Group: rule, Role: "operator", Apps: []string{"a"}}}
		g, ok := m.Resolve(source, []string{group})
		if ok && (g.Role != "operator" || len(g.Apps) != 1) {
			t.Fatalf("grant %+v", g)
		}
		if ok && source != SourceLDAP && rule != group {
			t.Fatalf("%q matched %q outside LDAP", group, rule)
		}
		if NormalizeDN(NormalizeDN(group)) != NormalizeDN(group) {
			t.Fatalf("NormalizeDN(%q) is not stable", group)
		}
	})
}
