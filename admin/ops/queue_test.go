package ops_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
)

// TestQueue: the queue view counts the due pending runs of the apps a user
// may see by priority and reason (runs due later are not waiting), the
// slots of started runs that wait for an executor, and a capped app's cap
// with its slots placed now; another app's queue is not shown to a user of
// one app.
func TestQueue(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		admin := ops.Actor{User: store.User{Username: "ada", Role: store.RoleAdmin}}
		_, err := st.ClaimEpoch(ctx, 1, "test")
		require.NoError(t, err)
		ex, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "b1", App: "billing", Address: "http://127.0.0.1:1", Capacity: 10, Handlers: []string{"demo"}})
		require.NoError(t, err)
		urgent := spec("billing", "settle")
		urgent.Priority = "critical"
		settle, err := svc.CreateJob(ctx, billingOnly, urgent)
		require.NoError(t, err)
		export, err := svc.CreateJob(ctx, billingOnly, spec("billing", "export"))
		require.NoError(t, err)
		other, err := svc.CreateJob(ctx, admin, spec("payroll", "pay"))
		require.NoError(t, err)
		app, err := svc.App(ctx, admin, "billing")
		require.NoError(t, err)
		four := int64(4)
		_, err = svc.UpdateApp(ctx, admin, "billing", apitypes.AppSpec{Version: app.Version, MaxRunningSlots: &four})
		require.NoError(t, err)

		due := t0.UnixMilli() - 60_000
		insert := func(jobID, at int64, prio int64, slots int) store.Run {
			r, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: at, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: slots,
				Priority: nullInt(prio)})
			require.NoError(t, err)
			return r
		}
		started := insert(export.ID, due-1000, -1, 6)
		capped := insert(settle.ID, due, -1, 1)
		insert(export.ID, due+1, -1, 1)
		insert(export.ID, due+2, 0, 1)                     // lowered to low
		insert(export.ID, t0.UnixMilli()+3_600_000, -1, 1) // due in an hour: not waiting
		insert(other.ID, due, -1, 1)
		reason := msg.New(msg.RunWaiting, "cause", msg.New(msg.CauseAppCap, "app", "billing", "running", 4, "max", 4))
		require.NoError(t, st.MarkWaiting(ctx, reason, []int64{capped.ID}))
		// The started run: 4 slots placed, 2 held back by the cap.
		atts := make([]store.NewAttempt, 6)
		for i := range atts {
			atts[i] = store.NewAttempt{Slot: i, Attempt: 1}
			if i < 4 {
				atts[i].ExecutorID = ex.ID
			}
		}
		_, err = st.StartRuns(ctx, 1, 0, []store.RunStart{{RunID: started.ID, Attempts: atts}})
		require.NoError(t, err)

		q, err := svc.Queue(ctx, billingOnly)
		require.NoError(t, err)
		require.False(t, q.Partial)
		require.Len(t, q.Apps, 1, "payroll's queue is not bill's to see")
		b := q.Apps[0]
		require.Equal(t, "billing", b.App)
		require.Equal(t, int64(4), *b.MaxRunningSlots)
		require.Equal(t, int64(4), *b.RunningSlots)
		require.Equal(t, int64(3), b.WaitingRuns)
		require.Equal(t, int64(2), b.WaitingSlots)
		require.Equal(t, []apitypes.QueuePriority{{Priority: "critical", Runs: 1}, {Priority: "normal", Runs: 1, Slots: 2}, {Priority: "low", Runs: 1}}, b.Priorities)
		require.Equal(t, []apitypes.QueueReason{{Reason: "", Runs: 2}, {Reason: "waiting: app billing runs 4 of its 4 slots (max_running_slots)", Runs: 1}}, b.Reasons)
		require.NotNil(t, b.OldestSince)

		all, err := svc.Queue(ctx, admin)
		require.NoError(t, err)
		require.Len(t, all.Apps, 2)
		require.Equal(t, "billing", all.Apps[0].App, "the app with the most waiting first")
		require.Equal(t, "payroll", all.Apps[1].App)
		require.Nil(t, all.Apps[1].MaxRunningSlots)
	})
}

// nullInt is v as a nullable integer, NULL for a negative v.
func nullInt(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: v >= 0} }
