package xxljob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/xxljob"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

const (
	tokenA = "token-of-app-a-0001"
	tokenB = "token-of-app-b-0002"
)

// registryAdmin serves the XXL-JOB admin API of a Service on st, with
// apps "a" and "b", without a prober (registrations stay live for
// LostAfter, 6s).
func registryAdmin(t *testing.T, st *store.Store, allowed ...string) string {
	t.Helper()
	svc, err := xxljob.New(xxljob.Config{
		Tokens: map[string]string{"a": tokenA, "b": tokenB}, AllowedHosts: allowed, RequestTimeout: 2 * time.Second,
	}, st)
	require.NoError(t, err)
	t.Cleanup(svc.Close)
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	return srv.URL
}

// register posts a registry call as a holder of token would.
func register(t *testing.T, adminURL, token, app, address string) xxljob.ReturnT {
	t.Helper()
	data, err := json.Marshal(xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: app, RegistryValue: address})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, adminURL+"/api/registry", bytes.NewReader(data))
	require.NoError(t, err)
	req.Header.Set(xxljob.TokenHeader, token)
	c := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var rt xxljob.ReturnT
	require.NoError(t, json.NewDecoder(res.Body).Decode(&rt))
	return rt
}

func executorsAt(t *testing.T, st *store.Store, address string) []store.Executor {
	t.Helper()
	all, err := st.Executors(context.Background())
	require.NoError(t, err)
	var out []store.Executor
	for _, e := range all {
		if strings.TrimRight(e.Address, "/") == strings.TrimRight(address, "/") {
			out = append(out, e)
		}
	}
	return out
}

// TestRegistryAddressBelongsToOneApp: a holder of one app's token cannot
// register the address of another app's executor (M5), nor the address of
// any other live executor, XXL-JOB or shardjob; the address is free again
// once its executor deregisters.
func TestRegistryAddressBelongsToOneApp(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		url := registryAdmin(t, st)
		fb := newFakeExecutor(t, url, "b", tokenB)

		// App a's token holder claims the address of b's executor before b
		// registered: b's executor does not take a's token, so the
		// registration is refused and the address stays free for b.
		rt := register(t, url, tokenA, "a", fb.Address())
		require.Equal(t, 500, rt.Code, "a registration of another app's executor's address is refused")
		require.Contains(t, rt.Message(), "refused app a's access token")
		require.Empty(t, executorsAt(t, st, fb.Address()))
		rt, err := fb.Register(tokenB)
		require.NoError(t, err)
		require.Equal(t, 200, rt.Code, rt.Message())

		// Registered, the address is b's: a's claim is refused again.
		rt = register(t, url, tokenA, "a", fb.Address())
		require.Equal(t, 500, rt.Code)
		require.Contains(t, rt.Message(), "address of another live executor")
		require.Contains(t, rt.Message(), "belongs to one app at a time")
		// Even an executor that takes both tokens has one app at a time.
		fb.AcceptAlso(tokenA)
		rt = register(t, url, tokenA, "a", fb.Address())
		require.Equal(t, 500, rt.Code)
		require.Contains(t, rt.Message(), "address of another live executor")
		ex := executorsAt(t, st, fb.Address())
		require.Len(t, ex, 1)
		require.Equal(t, "b", ex[0].App)
		ref, err := st.ExecutorProtocol(ctx, fb.Address())
		require.NoError(t, err)
		require.Equal(t, "b", ref.App, "pushes to the address still go to app b's executor")

		// Removed, the address is free.
		rt, err = fb.RegisterRemove()
		require.NoError(t, err)
		require.Equal(t, 200, rt.Code, rt.Message())
		rt = register(t, url, tokenA, "a", fb.Address())
		require.Equal(t, 200, rt.Code, rt.Message())
		ref, err = st.ExecutorProtocol(ctx, fb.Address())
		require.NoError(t, err)
		require.Equal(t, "a", ref.App)

		// The address of a live shardjob executor is not an XXL-JOB
		// executor's (it would route the shardjob executor's pushes as
		// XXL-JOB run calls), with or without the trailing slash.
		fs := newFakeExecutor(t, url, "a", tokenA)
		_, err = st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "sj-1", App: "a", Address: strings.TrimRight(fs.Address(), "/"), Capacity: 1})
		require.NoError(t, err)
		rt, err = fs.Register(tokenA)
		require.NoError(t, err)
		require.Equal(t, 500, rt.Code)
		require.Contains(t, rt.Message(), "address of another live executor")
		ref, err = st.ExecutorProtocol(ctx, strings.TrimRight(fs.Address(), "/"))
		require.NoError(t, err)
		require.Equal(t, store.ProtocolShardjob, ref.Protocol)
	})
}

// TestRegistryRefusesBadAddresses: a registry value must be an http(s)
// base URL on a host the operator allows (L7); the check holds for names
// too, on the address they connect to.
func TestRegistryRefusesBadAddresses(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, sqlfiles.SQLite)
	url := registryAdmin(t, st) // the default: loopback and private networks
	for value, want := range map[string]string{
		"ftp://10.0.0.5:9999/":               "must be an http:// or https:// base URL",
		"10.0.0.5:9999":                      "must be an http:// or https:// base URL",
		"http://user:pw@127.0.0.1:9999/":     "must be an http:// or https:// base URL",
		"http://127.0.0.1:9999/?x=1":         "must be an http:// or https:// base URL",
		"http:///nohost":                     "must be an http:// or https:// base URL",
		"http://169.254.169.254/":            "--xxljob-allowed-hosts",
		"http://8.8.8.8:9999/":               "--xxljob-allowed-hosts",
		"http://0.0.0.0:9999/":               "--xxljob-allowed-hosts",
		"http://[fe80::1%25eth0]:9999/":      "--xxljob-allowed-hosts",
		"http://100.64.0.1:9999/":            "--xxljob-allowed-hosts",
		"http://" + strings.Repeat("h", 121): "at most 120 characters",
	} {
		rt := register(t, url, tokenA, "a", value)
		require.Equal(t, 500, rt.Code, value)
		require.Contains(t, rt.Message(), want, value)
	}
	execs, err := st.Executors(context.Background())
	require.NoError(t, err)
	require.Empty(t, execs, "nothing registered")

	// Only the executors' network allowed: a loopback executor is refused,
	// by IP at once and by name when the admin connects.
	narrow := registryAdmin(t, st, "10.0.0.0/8")
	f := newFakeExecutor(t, narrow, "a", tokenA)
	rt, err := f.Register(tokenA)
	require.NoError(t, err)
	require.Equal(t, 500, rt.Code)
	require.Contains(t, rt.Message(), "is outside 10.0.0.0/8")
	byName := strings.Replace(f.Address(), "127.0.0.1", "localhost", 1)
	rt = register(t, narrow, tokenA, "a", byName)
	require.Equal(t, 500, rt.Code)
	require.Contains(t, rt.Message(), "--xxljob-allowed-hosts")
	require.Zero(t, f.Beats(), "the admin never called it")

	// A host name the operator lists is allowed whatever it resolves to.
	named := registryAdmin(t, st, "10.0.0.0/8", "localhost")
	rt = register(t, named, tokenA, "a", byName)
	require.Equal(t, 200, rt.Code, rt.Message())
	require.Equal(t, 1, f.Beats(), "the registration was confirmed by a beat")
}

// TestRegistryErrorsDoNotRevealApps: an app without a token and a wrong
// token get the same answer.
func TestRegistryErrorsDoNotRevealApps(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, sqlfiles.SQLite)
	url := registryAdmin(t, st)
	f := newFakeExecutor(t, url, "a", tokenA)
	unknownApp := register(t, url, tokenA, "ghost", f.Address())
	wrongToken := register(t, url, "not-the-token-of-a", "a", f.Address())
	require.Equal(t, 500, unknownApp.Code)
	require.Equal(t, unknownApp, wrongToken, "same answer for an unknown app and a wrong token")
	require.Contains(t, wrongToken.Message(), "--xxljob-tokens")
	require.Zero(t, f.Beats())
}

func TestParseAllowedHosts(t *testing.T) {
	t.Parallel()
	def, err := xxljob.ParseAllowedHosts([]string{" ", ""})
	require.NoError(t, err)
	require.Equal(t, strings.Join(xxljob.DefaultAllowedHosts, ","), def.String(), "none given: the default")
	got, err := xxljob.ParseAllowedHosts([]string{"10.20.0.0/16", "fd00::/8", "Exec-1.Example.COM.", "[::1]"})
	require.NoError(t, err)
	require.Equal(t, "10.20.0.0/16,fd00::/8,exec-1.example.com,[::1]", got.String())
	for _, bad := range []string{"http://10.0.0.5", "10.0.0.0/33", "::ffff:10.0.0.0/104", "exec:9999", "a b", "*", "1.2.3"} {
		_, err := xxljob.ParseAllowedHosts([]string{bad})
		require.Error(t, err, bad)
	}
	_, err = xxljob.New(xxljob.Config{AllowedHosts: []string{"10.0.0.0/33"}}, &store.Store{})
	require.ErrorContains(t, err, "--xxljob-allowed-hosts")
}
