package ops_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// pushes records the cancellations pushed to executors.
type pushes struct {
	mu   sync.Mutex
	sent []protocol.CancelRequest
}

func (p *pushes) Cancel(_ context.Context, _ string, req protocol.CancelRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, req)
	return nil
}

var _ ops.Canceller = (*pushes)(nil)

// A run is cancelled once, with the operator's words, and its executor is
// told; a cancelled run can be retried, a running one cannot; a run of an
// app the actor may not see does not exist for them.
func TestCancelAndRetryRun(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		told := &pushes{}
		svc := ops.New(ops.Config{Store: st, Clock: clock.NewManual(t0), Canceller: told})
		_, err := st.ClaimEpoch(ctx, 1, "test")
		require.NoError(t, err)
		j, err := svc.CreateJob(ctx, operator, spec("billing", "nightly"))
		require.NoError(t, err)
		run, _, err := svc.TriggerJob(ctx, operator, j.ID, apitypes.TriggerRequest{})
		require.NoError(t, err)
		ex, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "i1", App: "billing", Address: "http://127.0.0.1:1", Capacity: 4})
		require.NoError(t, err)
		ok, err := st.StartRun(ctx, 1, run.ID, time.Hour, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}})
		require.NoError(t, err)
		require.True(t, ok)

		_, _, err = svc.RetryRun(ctx, operator, run.ID)
		e := refusal(t, err, ops.ErrConflict, "", "")
		require.Equal(t, "run "+strconv.FormatInt(run.ID, 10)+" is running and has no failed or cancelled slot to retry", e.Error())
		require.Equal(t, "run", e.Object)

		_, err = svc.CancelRun(ctx, billingOnly, run.ID+1000, "")
		refused(t, err, ops.ErrNotFound, "", "")
		cancelled, err := svc.CancelRun(ctx, operator, run.ID, "wrong params")
		require.NoError(t, err)
		require.Equal(t, store.RunCancelled, cancelled.Status)
		require.Len(t, told.sent, 1)
		require.Equal(t, "cancelled by olga: wrong params", told.sent[0].Reason)

		_, err = svc.CancelRun(ctx, operator, run.ID, "")
		e = refusal(t, err, ops.ErrConflict, "", "")
		require.Equal(t, "run "+strconv.FormatInt(run.ID, 10)+" was cancelled; only pending or running runs can be cancelled", e.Error())

		retried, n, err := svc.RetryRun(ctx, operator, run.ID)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, store.RunRunning, retried.Status)

		audit, err := st.AuditLog(ctx, 0, 10, store.AuditScope{All: true}, store.AuditFilter{Object: "run/"})
		require.NoError(t, err)
		require.Len(t, audit, 2)
		require.Equal(t, "run.retry", audit[0].Action)
		require.Equal(t, "run.cancel", audit[1].Action)
		require.Equal(t, "olga", audit[1].Actor)
	})
}
