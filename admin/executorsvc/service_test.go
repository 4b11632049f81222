package executorsvc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/executorsvc"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/names"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newService(st *store.Store) *executorsvc.Service {
	return executorsvc.New(executorsvc.Config{Store: st, Timing: protocol.Timing{Heartbeat: 2 * time.Second, LostAfter: 6 * time.Second}})
}

// refused asserts that err is a refusal of kind with message msg.
func refused(t *testing.T, err error, kind error, msg string) {
	t.Helper()
	require.ErrorIs(t, err, kind)
	require.Equal(t, msg, err.Error())
}

// The identity limits are the columns' widths: a value at the limit is
// stored (MariaDB in strict mode would refuse a longer one), one past it is
// refused before any write.
func TestHeartbeatIdentityLimits(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := newService(st)
		const want = "instance_id (≤191), app (≤64) and address (≤255) are required"
		ok := protocol.HeartbeatRequest{
			InstanceID: strings.Repeat("i", 191), App: strings.Repeat("a", 64),
			Address: "http://" + strings.Repeat("h", 255-len("http://")), Capacity: 2,
			Incarnation: strings.Repeat("n", 64),
		}
		resp, err := svc.Heartbeat(ctx, ok)
		require.NoError(t, err)
		require.NotZero(t, resp.ExecutorID)
		require.Equal(t, int64(2000), resp.IntervalMS)
		require.Equal(t, int64(6000), resp.LostAfterMS)
		ex, err := st.ExecutorByInstance(ctx, ok.InstanceID)
		require.NoError(t, err)
		require.Equal(t, ok.App, ex.App)
		require.Equal(t, ok.Address, ex.Address)
		require.Equal(t, ok.Incarnation, ex.Incarnation)

		for name, mut := range map[string]func(*protocol.HeartbeatRequest){
			"no instance_id":   func(r *protocol.HeartbeatRequest) { r.InstanceID = "" },
			"no app":           func(r *protocol.HeartbeatRequest) { r.App = "" },
			"no address":       func(r *protocol.HeartbeatRequest) { r.Address = "" },
			"long instance_id": func(r *protocol.HeartbeatRequest) { r.InstanceID += "i" },
			"long app":         func(r *protocol.HeartbeatRequest) { r.App += "a" },
			"long address":     func(r *protocol.HeartbeatRequest) { r.Address += "h" },
		} {
			req := ok
			mut(&req)
			_, err := svc.Heartbeat(ctx, req)
			refused(t, err, executorsvc.ErrInvalid, want)
			require.NotErrorIs(t, err, executorsvc.ErrConflict, name)
		}

		// The app is a name and the address a base URL the admin can
		// call, as an XXL-JOB registration's: anything else is refused
		// before any write, saying what is wrong.
		for _, c := range []struct{ app, address, want string }{
			{"bill ing", ok.Address, `app "bill ing": ` + names.Problem("bill ing")},
			{"../billing", ok.Address, `app "../billing": ` + names.Problem("../billing")},
			{"billing", "10.0.0.5:9999", `address "10.0.0.5:9999": ` + protocol.ErrAddress.Error() + "; set the address the admin reaches this executor at"},
			{"billing", "ftp://10.0.0.5/", `address "ftp://10.0.0.5/": ` + protocol.ErrAddress.Error() + "; set the address the admin reaches this executor at"},
			{"billing", "http://user:pw@10.0.0.5:9999", `address "http://user:pw@10.0.0.5:9999": ` + protocol.ErrAddress.Error() + "; set the address the admin reaches this executor at"},
			{"billing", "http://10.0.0.5:9999/?x=1", `address "http://10.0.0.5:9999/?x=1": ` + protocol.ErrAddress.Error() + "; set the address the admin reaches this executor at"},
		} {
			req := ok
			req.InstanceID, req.App, req.Address = "new-"+c.app, c.app, c.address
			_, err := svc.Heartbeat(ctx, req)
			refused(t, err, executorsvc.ErrInvalid, c.want)
			_, err = st.ExecutorByInstance(ctx, req.InstanceID)
			require.ErrorIs(t, err, store.ErrNotFound, "nothing written for %q %q", c.app, c.address)
		}

		req := ok
		req.Incarnation = strings.Repeat("m", 65)
		_, err = svc.Heartbeat(ctx, req)
		refused(t, err, executorsvc.ErrInvalid, "incarnation: at most 64 characters")

		req = ok
		req.App = "other"
		_, err = svc.Heartbeat(ctx, req)
		refused(t, err, executorsvc.ErrConflict, "instance_id is registered for app "+ok.App)
	})
}

func TestUnknownExecutorAndLogLimits(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		svc := newService(st)
		_, err := svc.Results(ctx, protocol.ResultsRequest{InstanceID: "nobody"})
		require.ErrorIs(t, err, executorsvc.ErrUnknownExecutor)
		refused(t, err, executorsvc.ErrConflict, "unknown instance_id: heartbeat first")
		_, err = svc.Logs(ctx, protocol.LogsRequest{InstanceID: "nobody"})
		require.ErrorIs(t, err, executorsvc.ErrUnknownExecutor)

		_, err = svc.Logs(ctx, protocol.LogsRequest{InstanceID: "nobody", Lines: make([]protocol.LogLine, 5001)})
		refused(t, err, executorsvc.ErrInvalid, "at most 5000 lines and drop counts per request")

		_, err = svc.Heartbeat(ctx, protocol.HeartbeatRequest{InstanceID: "ex-1", App: "app", Address: "http://127.0.0.1:1"})
		require.NoError(t, err)
		resp, err := svc.Results(ctx, protocol.ResultsRequest{InstanceID: "ex-1", Results: []protocol.SlotResult{{Token: 12345, Status: protocol.SlotSucceeded}}})
		require.NoError(t, err)
		require.Empty(t, resp.Accepted)
		require.Equal(t, []int64{12345}, resp.Rejected, "a token the executor does not hold")
		lresp, err := svc.Logs(ctx, protocol.LogsRequest{InstanceID: "ex-1", Lines: []protocol.LogLine{{Token: 12345, Message: "m"}}})
		require.NoError(t, err)
		require.Equal(t, []int64{12345}, lresp.RejectedTokens)

		require.NoError(t, svc.Deregister(ctx, protocol.DeregisterRequest{InstanceID: "ex-1"}))
		require.NoError(t, svc.Deregister(ctx, protocol.DeregisterRequest{InstanceID: "ex-1"}), "deregistering twice is no error")
	})
}
