package testenv_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/stretchr/testify/require"
)

// TestOIDCProvider starts the test provider and works its control API; the
// flows themselves are tested by admin/sso/oidcauth against it.
func TestOIDCProvider(t *testing.T) {
	t.Parallel()
	o := testenv.StartOIDCProvider(t, testenv.OIDCProviderConfig{RedirectURIs: []string{"http://127.0.0.1:1/cb"}})
	client := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	get := func(path string) string {
		resp, err := client.Get(o.Issuer + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		return string(b)
	}
	var disc struct {
		Issuer     string `json:"issuer"`
		EndSession string `json:"end_session_endpoint"`
	}
	require.NoError(t, json.Unmarshal([]byte(get("/.well-known/openid-configuration")), &disc))
	require.Equal(t, o.Issuer, disc.Issuer)
	require.Equal(t, o.Issuer+"/end_session", disc.EndSession)
	require.Equal(t, "shardjob", o.ClientID)
	require.NotEmpty(t, o.ClientSecret)

	login := get("/login?authRequestID=x")
	for _, id := range []string{`id="username"`, `id="password"`, `id="submit"`} {
		require.Contains(t, login, id, "the form a headless browser fills")
	}

	require.NoError(t, o.SetGroups("alice", "ops"))
	require.ErrorContains(t, o.SetGroups("nobody"), `no user "nobody"`)
	require.NoError(t, o.DisableUser("bob"))
	require.NoError(t, o.NextToken(testenv.TokenExpiredBy(30*time.Second)))

	s, err := o.State()
	require.NoError(t, err)
	require.Len(t, s.Kids, 1)
	first := s.Kids[0]
	kid, err := o.RotateKey(false)
	require.NoError(t, err)
	s, err = o.State()
	require.NoError(t, err)
	require.Equal(t, []string{kid, first}, s.Kids, "the old key stays published")
	kid2, err := o.RotateKey(true)
	require.NoError(t, err)
	s, err = o.State()
	require.NoError(t, err)
	require.Equal(t, []string{kid2}, s.Kids, "dropped")

	pid := o.PID()
	require.NoError(t, o.Kill())
	require.Zero(t, o.PID())
	require.NoError(t, o.Start())
	require.NotEqual(t, pid, o.PID())
	s, err = o.State()
	require.NoError(t, err)
	require.NotEqual(t, []string{kid2}, s.Kids, "a restarted provider has new keys")
}
