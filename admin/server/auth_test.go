package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/sso"
	"github.com/shardjob/shardjob/admin/store"
)

// TestAuthConfigDirectories: no file is local users only; password sign-in
// off without a directory is refused before start; a wrong file names the
// setting; a file builds the directories it configures, sealing refresh
// tokens only with OIDC.
func TestAuthConfigDirectories(t *testing.T) {
	t.Parallel()
	const secret = "0123456789abcdef-executor-secret"
	d, err := AuthConfig{}.directories(secret, nil)
	require.NoError(t, err)
	require.Nil(t, d)

	_, err = AuthConfig{NoPasswordSignIn: true, BreakGlassUser: "admin"}.directories(secret, nil)
	var se *SettingError
	require.True(t, errors.As(err, &se))
	require.Equal(t, "auth-local", se.Setting)
	require.ErrorContains(t, err, "nobody but the break-glass user could sign in")

	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	_, err = AuthConfig{SSOConfigFile: write("bad.yaml", "ldap:\n  url: ldap://127.0.0.1:1\nmapping:\n  - {group: g, role: viewer}\n")}.directories(secret, nil)
	require.True(t, errors.As(err, &se))
	require.Equal(t, "sso-config", se.Setting)
	require.ErrorContains(t, err, "ldap.user_base is empty")

	rule := "mapping:\n  - {group: g, role: viewer}\n"
	d, err = AuthConfig{SSOConfigFile: write("ldap.yaml", "ldap:\n  url: ldap://127.0.0.1:1\n  user_base: dc=x\n"+rule)}.directories(secret, nil)
	require.NoError(t, err)
	require.NotNil(t, d.LDAP)
	require.Nil(t, d.OIDC)
	require.Nil(t, d.Sealer)

	d, err = AuthConfig{SSOConfigFile: write("oidc.yaml", "oidc:\n  issuer: http://127.0.0.1:1\n  client_id: c\n  redirect_url: http://127.0.0.1:2/cb\n"+rule)}.directories(secret, nil)
	require.NoError(t, err)
	require.NotNil(t, d.OIDC)
	require.NotNil(t, d.Sealer)
	require.Nil(t, d.LDAP)
}

// TestAuditSSOSettings: the sign-in settings are audited when they change
// (the first configuration, a changed mapping, SSO turned off), not at
// every start, and never with a secret.
func TestAuditSSOSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "db")})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	_, err = st.Migrate(ctx)
	require.NoError(t, err)
	entries := func() []store.AuditEntry {
		es, err := st.AuditLog(ctx, 0, 10, store.AuditScope{All: true}, store.AuditFilter{Action: "sso.config"})
		require.NoError(t, err)
		return es
	}
	require.NoError(t, auditSSOSettings(ctx, st, AuthConfig{}, nil, "a1"))
	require.Empty(t, entries(), "never configured: nothing to say")

	recheck := time.Minute
	d := &ops.Directories{Config: sso.Config{
		LDAP:    &sso.LDAPConfig{URL: "ldap://127.0.0.1:1", UserBase: "dc=x", BindPassword: "the-secret"},
		Mapping: sso.Mapping{{Group: "cn=ops,dc=x", Role: "operator"}}, Recheck: &recheck,
	}}
	require.NoError(t, auditSSOSettings(ctx, st, AuthConfig{}, d, "a1"))
	require.NoError(t, auditSSOSettings(ctx, st, AuthConfig{}, d, "a2"))
	es := entries()
	require.Len(t, es, 1, "the same settings again: not audited again")
	require.Equal(t, "admin a1", es[0].Actor)
	require.Contains(t, es[0].Detail, `"group":"cn=ops,dc=x"`)
	require.NotContains(t, es[0].Detail, "the-secret")

	d.Config.Mapping = append(d.Config.Mapping, sso.Rule{Group: "cn=boss,dc=x", Role: "admin"})
	require.NoError(t, auditSSOSettings(ctx, st, AuthConfig{}, d, "a2"))
	require.NoError(t, auditSSOSettings(ctx, st, AuthConfig{}, nil, "a2"))
	es = entries()
	require.Len(t, es, 3)
	require.Contains(t, es[1].Detail, "cn=boss,dc=x")
	require.Contains(t, es[0].Detail, `"enabled":false`)
}
