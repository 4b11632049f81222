package server

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
