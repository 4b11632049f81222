package sso

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shardjob/shardjob/admin/auth"
)

// Rule maps one directory group to a role and, optionally, apps.
type Rule struct {
	// Group is an OIDC groups-claim value (compared exactly) or an LDAP
	// group DN (compared as a DN: case and the spaces around ',' and '='
	// do not matter).
	Group string `yaml:"group" json:"group"`
	// Source limits the rule to one directory: "oidc", "ldap" or empty
	// for both.
	Source string `yaml:"source" json:"source,omitempty"`
	// Role is admin, operator or viewer.
	Role string `yaml:"role" json:"role"`
	// Apps limits the members to these apps; empty: every app.
	Apps []string `yaml:"apps" json:"apps,omitempty"`
}

// Mapping is the list of rules of Config. A person gets the highest role
// of the rules their groups match, limited to the apps of the rules that
// give that role, together; one of those rules without apps gives every
// app. Rules of lower roles give nothing more: a user has one role, so
// "operator of search" and "viewer of every app" make an operator of
// search, never an operator of every app. Admins always have every app. A
// person no rule matches gets nothing.
type Mapping []Rule

// Grant is what a mapping gives a person.
type Grant struct {
	Role string
	// Apps the person is limited to, sorted; nil: every app.
	Apps []string
}

// Check reports the first wrong rule, saying which and how to fix it.
func (m Mapping) Check() error {
	for i, r := range m {
		where := fmt.Sprintf("mapping rule %d (group %q)", i+1, r.Group)
		switch {
		case strings.TrimSpace(r.Group) == "":
			return fmt.Errorf("mapping rule %d: group is empty; name an OIDC groups-claim value or an LDAP group DN", i+1)
		case !auth.ValidRole(r.Role):
			return fmt.Errorf("%s: role %q is not admin, operator or viewer", where, r.Role)
		case r.Source != "" && r.Source != SourceOIDC && r.Source != SourceLDAP:
			return fmt.Errorf("%s: source %q is not oidc, ldap or empty (both)", where, r.Source)
		}
		for _, a := range r.Apps {
			if strings.TrimSpace(a) == "" || strings.Contains(a, ",") {
				return fmt.Errorf("%s: app %q is empty or holds a comma; list one app per entry", where, a)
			}
		}
	}
	return nil
}

// Resolve gives the grant of a person of source with groups; ok is false
// when no rule matches.
func (m Mapping) Resolve(source string, groups []string) (g Grant, ok bool) {
	var matched []Rule
	for _, r := range m {
		if r.Source != "" && r.Source != source || !member(source, r.Group, groups) {
			continue
		}
		matched = append(matched, r)
		if !ok || auth.Allows(r.Role, g.Role) {
			g.Role = r.Role
		}
		ok = true
	}
	if !ok || g.Role == auth.RoleAdmin {
		return Grant{Role: g.Role}, ok
	}
	apps := map[string]bool{}
	for _, r := range matched {
		if r.Role != g.Role {
			continue
		}
		if len(r.Apps) == 0 {
			return Grant{Role: g.Role}, true
		}
		for _, a := range r.Apps {
			apps[a] = true
		}
	}
	for a := range apps {
		g.Apps = append(g.Apps, a)
	}
	slices.Sort(g.Apps)
	return g, true
}

// member reports whether group is among groups, compared as source does.
func member(source, group string, groups []string) bool {
	if source != SourceLDAP {
		return slices.Contains(groups, group)
	}
	want := NormalizeDN(group)
	for _, g := range groups {
		if NormalizeDN(g) == want {
			return true
		}
	}
	return false
}

// NormalizeDN writes an LDAP DN the way two spellings of it compare equal:
// lower case, no spaces around the ',' between its parts and around '='.
// Escaped characters (\, \=) are kept as they are.
func NormalizeDN(dn string) string {
	var b strings.Builder
	parts := splitUnescaped(strings.ToLower(dn), ',')
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		kv := splitUnescaped(p, '=')
		for j, s := range kv {
			if j > 0 {
				b.WriteByte('=')
			}
			b.WriteString(strings.TrimSpace(s))
		}
	}
	return b.String()
}

// splitUnescaped splits s at each sep not escaped by a backslash.
func splitUnescaped(s string, sep byte) []string {
	var out []string
	start, escaped := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case escaped:
			escaped = false
		case s[i] == '\\':
			escaped = true
		case s[i] == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
