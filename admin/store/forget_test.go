package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

// ageExecutor moves an executor's last heartbeat back by ms (database
// clock arithmetic: no test waits for a horizon).
func ageExecutor(t *testing.T, s *store.Store, id, ms int64) {
	t.Helper()
	_, err := s.DB().ExecContext(context.Background(), s.DB().Rebind(`UPDATE executor SET last_heartbeat = last_heartbeat - ? WHERE id = ?`), ms, id)
	require.NoError(t, err)
}

func executorState(t *testing.T, s *store.Store, id int64) string {
	t.Helper()
	e, err := s.Executor(context.Background(), id)
	require.NoError(t, err)
	return e.State
}

// TestLostExecutorsAreForgottenAfterTheHorizon: an executor lost for longer
// than the horizon, shardjob or XXL-JOB, becomes gone; one lost for less,
// and a live one, keep their state; its slots still move; a gone executor
// that heartbeats or registers again is online.
func TestLostExecutorsAreForgottenAfterTheHorizon(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const lostAfter, horizon = 6_000, 3_600_000
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		live := heartbeat(t, s, "ex-live", 1, 1)
		recent := heartbeat(t, s, "ex-recent", 2, 1)
		old := heartbeat(t, s, "ex-old", 3, 1)
		xxl, err := s.RegisterXXLExecutor(ctx, store.ExecutorInfo{InstanceID: "xxljob:a@http://127.0.0.1:4/", App: "a", Address: "http://127.0.0.1:4/", Capacity: 4, Version: "xxl-job"})
		require.NoError(t, err)
		jobID, err := s.CreateJob(ctx, newJob("a", "j", 0))
		require.NoError(t, err)
		startRun(t, s, 1, jobID, old.ID)

		ageExecutor(t, s, recent.ID, 30*60_000)
		ageExecutor(t, s, old.ID, 2*horizon)
		ageExecutor(t, s, xxl.ID, 2*horizon)
		n, err := s.ForgetLostExecutors(ctx, horizon)
		require.NoError(t, err)
		require.Zero(t, n, "only lost executors are forgotten: these were not declared lost yet")
		n, err = s.MarkLostExecutors(ctx, lostAfter)
		require.NoError(t, err)
		require.Equal(t, int64(3), n)

		n, err = s.ForgetLostExecutors(ctx, horizon)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Equal(t, store.ExecutorOnline, executorState(t, s, live.ID))
		require.Equal(t, store.ExecutorLost, executorState(t, s, recent.ID), "lost for 30 minutes, within the horizon")
		require.Equal(t, store.ExecutorGone, executorState(t, s, old.ID))
		require.Equal(t, store.ExecutorGone, executorState(t, s, xxl.ID), "every protocol")
		n, err = s.ForgetLostExecutors(ctx, horizon)
		require.NoError(t, err)
		require.Zero(t, n, "forgotten once")

		lost, err := s.LostAttempts(ctx, 10)
		require.NoError(t, err)
		require.Len(t, lost, 1, "the slot of a forgotten executor still moves")
		online, err := s.OnlineExecutors(ctx, "a", lostAfter)
		require.NoError(t, err)
		require.Len(t, online, 1)
		require.Equal(t, live.ID, online[0].ID)

		// Back: a heartbeat, an XXL-JOB registration.
		require.Equal(t, old.ID, heartbeat(t, s, "ex-old", 3, 1).ID)
		require.Equal(t, store.ExecutorOnline, executorState(t, s, old.ID))
		_, err = s.RegisterXXLExecutor(ctx, store.ExecutorInfo{InstanceID: xxl.InstanceID, App: "a", Address: xxl.Address, Capacity: 4, Version: "xxl-job"})
		require.NoError(t, err)
		require.Equal(t, store.ExecutorOnline, executorState(t, s, xxl.ID))
		online, err = s.OnlineExecutors(ctx, "a", lostAfter)
		require.NoError(t, err)
		require.Len(t, online, 3)
	})
}
