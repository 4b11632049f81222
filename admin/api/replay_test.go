package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// sharedDatabase opens n stores on one fresh, migrated database of the
// dialect, as n admin replicas do.
func sharedDatabase(t testing.TB, dialect string, n int) []*store.Store {
	t.Helper()
	ctx := context.Background()
	dsn := storetest.EmptyDSN(t, dialect)
	out := make([]*store.Store, n)
	for i := range out {
		st, err := store.Open(ctx, store.Config{Driver: dialect, DSN: dsn})
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		_, err = st.Migrate(ctx)
		require.NoError(t, err)
		out[i] = st
	}
	return out
}

// replica serves the API of one admin replica.
func replica(t testing.TB, cfg api.Config) *httptest.Server {
	t.Helper()
	h, err := api.New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// signedRequest is an executor request as it crossed the wire: it can be
// sent again, byte for byte, to any replica.
type signedRequest struct {
	path   string
	header http.Header
	body   []byte
}

func sign(t testing.TB, secret, path string, msg any) signedRequest {
	t.Helper()
	body, err := json.Marshal(msg)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, "http://admin"+path, bytes.NewReader(body))
	require.NoError(t, err)
	protocol.Sign(req, secret, body, time.Now())
	return signedRequest{path: path, header: req.Header, body: body}
}

func (r signedRequest) sendTo(t testing.TB, srv *httptest.Server) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+r.path, bytes.NewReader(r.body))
	require.NoError(t, err)
	req.Header = r.header.Clone()
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(out)
}

// TestExecutorRequestReplayedToAnotherReplicaIsRefused: two admin replicas
// on one database. A signed executor request that one replica accepted is
// refused as a replay by the other (and by itself) within the clock window:
// the nonces are recorded in the database, not in each replica's memory.
func TestExecutorRequestReplayedToAnotherReplicaIsRefused(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			stores := sharedDatabase(t, dialect, 2)
			secret := protocol.NewSecret()
			var replicas []*httptest.Server
			for _, st := range stores {
				replicas = append(replicas, replica(t, api.Config{Store: st, ExecutorSecret: secret, Nonces: store.NewNonces(st, nil, nil)}))
			}
			a, b := replicas[0], replicas[1]

			hb := sign(t, secret, protocol.PathHeartbeat, protocol.HeartbeatRequest{
				InstanceID: "i-1", App: "billing", Address: "http://127.0.0.1:9", Capacity: 1, Handlers: []string{"h"}})
			code, out := hb.sendTo(t, a)
			require.Equal(t, http.StatusOK, code, out)
			code, out = hb.sendTo(t, b)
			require.Equal(t, http.StatusUnauthorized, code, "a heartbeat replayed to another replica: %s", out)
			require.Contains(t, out, "nonce already used")
			code, _ = hb.sendTo(t, a)
			require.Equal(t, http.StatusUnauthorized, code, "replayed to the same replica")

			res := sign(t, secret, protocol.PathResults, protocol.ResultsRequest{InstanceID: "i-1",
				Results: []protocol.SlotResult{{Token: 4242, Status: protocol.SlotSucceeded}}})
			code, out = res.sendTo(t, b)
			require.Equal(t, http.StatusOK, code, out)
			code, out = res.sendTo(t, a)
			require.Equal(t, http.StatusUnauthorized, code, "results replayed to another replica: %s", out)
			require.Contains(t, out, "nonce already used")

			// Each accepted request left one row, kept past its window and
			// then purged.
			var rows int
			require.NoError(t, stores[0].DB().GetContext(ctx, &rows, `SELECT COUNT(*) FROM executor_nonce`))
			require.Equal(t, 2, rows)
			n := store.NewNonces(stores[1], nil, nil)
			purged, err := n.Purge(ctx, time.Now(), 100)
			require.NoError(t, err)
			require.Zero(t, purged, "not expired yet")
			purged, err = n.Purge(ctx, time.Now().Add(time.Minute), 1)
			require.NoError(t, err)
			require.EqualValues(t, 1, purged, "at most the limit")
			purged, err = n.Purge(ctx, time.Now().Add(time.Minute), 100)
			require.NoError(t, err)
			require.EqualValues(t, 1, purged)
		})
	}
}

type failingNonces struct{}

func (failingNonces) Claim(context.Context, string, time.Time) (bool, error) {
	return false, errors.New("connection refused")
}

// TestNonceStoreFailureIs503: a request that cannot be checked for a replay
// is refused, as the admin's fault (503, the executor retries), not the
// executor's (401).
func TestNonceStoreFailureIs503(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, sqlfiles.SQLite)
	secret := protocol.NewSecret()
	srv := replica(t, api.Config{Store: st, ExecutorSecret: secret, Nonces: failingNonces{}})
	hb := sign(t, secret, protocol.PathHeartbeat, protocol.HeartbeatRequest{InstanceID: "i-1", App: "billing", Address: "http://127.0.0.1:9"})
	code, out := hb.sendTo(t, srv)
	require.Equal(t, http.StatusServiceUnavailable, code, out)
	require.Contains(t, out, "retry")
	execs, err := st.Executors(context.Background())
	require.NoError(t, err)
	require.Empty(t, execs, "nothing done")
}

// TestHeartbeatRefusesAnXXLJobExecutorsAddress: an address belongs to one
// executor protocol at a time; shardjob executors may share one (a
// restarted process under a new instance id).
func TestHeartbeatRefusesAnXXLJobExecutorsAddress(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		xxl := store.ExecutorInfo{InstanceID: "xxljob:billing@http://127.0.0.1:9999/", App: "billing", Address: "http://127.0.0.1:9999/", Capacity: 4, Version: "xxl-job"}
		_, err := e.st.RegisterXXLExecutor(ctx, xxl)
		require.NoError(t, err)
		hb := protocol.HeartbeatRequest{InstanceID: "i-1", App: "billing", Address: "http://127.0.0.1:9999", Capacity: 1}
		code, out := e.signed(protocol.PathHeartbeat, hb, e.secret)
		require.Equal(t, http.StatusConflict, code, string(out))
		require.Contains(t, string(out), "live XXL-JOB executor")
		_, err = e.st.ExecutorByInstance(ctx, "i-1")
		require.ErrorIs(t, err, store.ErrNotFound, "not registered")

		// Shardjob executors may share an address.
		other := protocol.HeartbeatRequest{InstanceID: "j-1", App: "billing", Address: "http://127.0.0.1:7000", Capacity: 1}
		code, out = e.signed(protocol.PathHeartbeat, other, e.secret)
		require.Equal(t, http.StatusOK, code, string(out))
		other.InstanceID = "j-2"
		code, out = e.signed(protocol.PathHeartbeat, other, e.secret)
		require.Equal(t, http.StatusOK, code, string(out))

		// Once the XXL-JOB executor is gone, the address is free.
		require.NoError(t, e.st.Deregister(ctx, xxl.InstanceID))
		code, out = e.signed(protocol.PathHeartbeat, hb, e.secret)
		require.Equal(t, http.StatusOK, code, string(out))
	})
}
