package runstate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// The state machine's end-to-end cases (fenced results, settling, child
// runs, alarms, cancelling) are in the store's conformance suite; these
// cover what only Machine decides.

func pendingRun(t *testing.T, s *store.Store, scheduledAt int64) store.Run {
	t.Helper()
	ctx := context.Background()
	id, err := s.CreateJob(ctx, store.Job{App: "a", Name: "j", Handler: "noop", CronExpr: "* * * * *", TimeZone: "UTC",
		MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 1, Params: "{}", Enabled: true})
	require.NoError(t, err)
	run, _, err := s.InsertRun(ctx, 1, store.NewRun{JobID: id, ScheduledAt: scheduledAt, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
	require.NoError(t, err)
	return run
}

func TestEndPending(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		m := runstate.New(s)
		run := pendingRun(t, s, 1000)
		_, err := m.EndPending(ctx, run.ID, store.RunSucceeded, 2000, msg.New(msg.RunJobDeleted))
		require.ErrorContains(t, err, "ends cancelled or skipped")
		ok, err := m.EndPending(ctx, run.ID, store.RunSkipped, 2000, msg.New(msg.RunSkippedPaused))
		require.NoError(t, err)
		require.True(t, ok)
		got, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunSkipped, got.Status)
		require.Equal(t, int64(2000), got.FinishedAt.Int64)
		require.Equal(t, "the job was paused before this firing started", got.Error)
		require.Equal(t, msg.New(msg.RunSkippedPaused), got.ErrorMsg, "stored as a code too")
		ok, err = m.EndPending(ctx, run.ID, store.RunCancelled, 3000, msg.New(msg.RunJobDeleted))
		require.NoError(t, err)
		require.False(t, ok, "no longer pending: unchanged")
	})
}

func TestCancelPendingAndFinishUnknown(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		m := runstate.New(s)
		run := pendingRun(t, s, 1000)
		active, ok, err := m.Cancel(ctx, run.ID, msg.New(msg.RunCancelledBy, "user", "ops"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Empty(t, active, "a pending run has no attempt to stop")
		_, ok, err = m.Cancel(ctx, run.ID, msg.New(msg.RunCancelledBy, "user", "ops"))
		require.NoError(t, err)
		require.False(t, ok)
		acc, err := m.FinishAttempts(ctx, []store.SlotOutcome{{ExecutorID: 1, SlotResult: protocol.SlotResult{Token: 999999, Status: store.AttemptSucceeded}}})
		require.NoError(t, err)
		require.Equal(t, []bool{false}, acc, "an unknown token is rejected")
	})
}
