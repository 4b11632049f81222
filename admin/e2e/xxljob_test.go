package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/internal/testenv"
	harness "github.com/shardjob/shardjob/internal/testenv/cluster"
)

// TestStandaloneTakesXXLJobTokens: standalone mode (what `make run` starts)
// takes the XXL-JOB tokens file as serve does. An XXL-JOB executor that
// registers with its app's token is accepted and listed; one with a wrong
// token is refused and not listed.
func TestStandaloneTakesXXLJobTokens(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildBinary(t, harness.AdminPkg)
	const app, token = "orders", "orders-token-6f1c2a"

	// The flag and its environment variable are offered.
	help, _ := exec.Command(bin, "standalone", "-h").CombinedOutput()
	require.Contains(t, string(help), "-xxljob-tokens")
	require.Contains(t, string(help), "SHARDJOB_XXLJOB_TOKENS")
	require.Contains(t, string(help), "-xxljob-allowed-hosts")

	dir := t.TempDir()
	tokens := filepath.Join(dir, "xxljob-tokens.json")
	require.NoError(t, os.WriteFile(tokens, []byte(`{"`+app+`": "`+token+`"}`), 0o600))
	port := testenv.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	p := harness.StartStandalone(t, filepath.Join(dir, "data"), port, "--no-demo", "--xxljob-tokens", tokens)
	c := p.Login(t)

	// An XXL-JOB executor of the app: it answers the admin's beat (which
	// confirms a registration) only with the app's token.
	xe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get(xxljob.TokenHeader) != token {
			_, _ = w.Write([]byte(`{"code":500,"msg":"The access token is wrong."}`))
			return
		}
		_, _ = w.Write([]byte(`{"code":200,"msg":null}`))
	}))
	t.Cleanup(xe.Close)

	register := func(tok string) xxljob.ReturnT {
		t.Helper()
		body, err := json.Marshal(xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: app, RegistryValue: xe.URL + "/"})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, base+"/api/registry", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(xxljob.TokenHeader, tok)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		var rt xxljob.ReturnT
		require.NoError(t, json.NewDecoder(res.Body).Decode(&rt))
		return rt
	}
	listed := func() []ExecutorEntry {
		t.Helper()
		var out struct{ Executors []ExecutorEntry }
		code, err := c.Do(http.MethodGet, "/api/v1/executors", nil, &out)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		return out.Executors
	}

	rt := register("not-the-token-of-orders")
	require.Equal(t, 500, rt.Code, "a wrong token is refused")
	require.Contains(t, rt.Message(), "access token is wrong")
	require.Empty(t, listed(), "a refused executor is not registered")

	rt = register(token)
	require.Equal(t, xxljob.CodeSuccess, rt.Code, rt.Message())
	ex := listed()
	require.Len(t, ex, 1, "the executor registered with its app's token")
	require.Equal(t, app, ex[0].App)
	require.Equal(t, "xxljob", ex[0].Protocol)
	require.Equal(t, "online", ex[0].State)
}

// ExecutorEntry is an entry of GET /api/v1/executors.
type ExecutorEntry struct {
	ID       int64  `json:"id"`
	App      string `json:"app"`
	State    string `json:"state"`
	Protocol string `json:"protocol"`
}
