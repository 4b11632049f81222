package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestExecutorRequestStatuses: a signed executor request over
// MaxBodyBytes is a 413 (a typed *http.MaxBytesError, not a message), and
// the executor protocol's refusals keep their statuses: 400 for a bad
// heartbeat, 409 for results of an unknown instance.
func TestExecutorRequestStatuses(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		hb := protocol.HeartbeatRequest{InstanceID: "i-1", App: "billing", Address: "http://127.0.0.1:9", Capacity: 2,
			Handlers: []string{strings.Repeat("h", 70<<10)}}
		code, out := e.signed(protocol.PathHeartbeat, hb, e.secret)
		require.Equal(t, http.StatusRequestEntityTooLarge, code, string(out))

		hb.Handlers, hb.App = nil, strings.Repeat("a", 65)
		code, out = e.signed(protocol.PathHeartbeat, hb, e.secret)
		require.Equal(t, http.StatusBadRequest, code, string(out))
		require.JSONEq(t, `{"error":"instance_id (≤191), app (≤64) and address (≤255) are required"}`, string(out))

		code, out = e.signed(protocol.PathResults, protocol.ResultsRequest{InstanceID: "nobody"}, e.secret)
		require.Equal(t, http.StatusConflict, code, string(out))
		require.JSONEq(t, `{"error":"unknown instance_id: heartbeat first"}`, string(out))
	})
}

// TestExecutorListHidesGoneExecutors: GET /api/v1/executors leaves out gone
// executors — one that deregistered, and shardjob and XXL-JOB executors lost
// past the forget horizon — unless all=1; a gone executor that heartbeats
// again is listed online; a bad all is a 400 that says what to send.
func TestExecutorListHidesGoneExecutors(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := t.Context()
		e.user("watcher", auth.RoleViewer)
		viewer := e.token("watcher")
		info := func(instance, addr string) store.ExecutorInfo {
			return store.ExecutorInfo{InstanceID: instance, App: "billing", Address: addr, Capacity: 2}
		}
		_, err := e.st.Heartbeat(ctx, info("live", "http://127.0.0.1:1"))
		require.NoError(t, err)
		_, err = e.st.Heartbeat(ctx, info("left", "http://127.0.0.1:2"))
		require.NoError(t, err)
		require.NoError(t, e.st.Deregister(ctx, "left"))
		dead, err := e.st.Heartbeat(ctx, info("killed", "http://127.0.0.1:3"))
		require.NoError(t, err)
		xxl, err := e.st.RegisterXXLExecutor(ctx, info("xxljob:billing@http://127.0.0.1:4/", "http://127.0.0.1:4/"))
		require.NoError(t, err)
		// Both silent for two hours (database clock arithmetic): lost, then
		// forgotten with a one-hour horizon.
		_, err = e.st.DB().ExecContext(ctx, e.st.DB().Rebind(`UPDATE executor SET last_heartbeat = last_heartbeat - 7200000 WHERE id IN (?, ?)`), dead.ID, xxl.ID)
		require.NoError(t, err)
		_, err = e.st.MarkLostExecutors(ctx, 6_000)
		require.NoError(t, err)
		n, err := e.st.ForgetLostExecutors(ctx, 3_600_000)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)

		list := func(query string) map[string]string {
			t.Helper()
			var out struct{ Executors []apitypes.ExecutorView }
			require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/executors"+query, viewer, nil, &out))
			states := map[string]string{}
			for _, x := range out.Executors {
				states[x.InstanceID] = x.State
			}
			return states
		}
		require.Equal(t, map[string]string{"live": "online"}, list(""), "gone executors are hidden by default")
		require.Equal(t, map[string]string{"live": "online"}, list("?all=0"))
		all := map[string]string{"live": "online", "left": "gone", "killed": "gone", xxl.InstanceID: "gone"}
		require.Equal(t, all, list("?all=1"))
		require.Equal(t, all, list("?all=true"))

		var bad struct{ Error string }
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/executors?all=yes", viewer, nil, &bad))
		require.Contains(t, bad.Error, `all="yes"`)
		require.Contains(t, bad.Error, "use all=1")

		// The killed executor comes back: online and listed again.
		_, err = e.st.Heartbeat(ctx, info("killed", "http://127.0.0.1:3"))
		require.NoError(t, err)
		require.Equal(t, map[string]string{"live": "online", "killed": "online"}, list(""))
	})
}
