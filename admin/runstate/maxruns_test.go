package runstate_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestMaxRunsCompletesWhenTheNthRunSettles: a job with max_runs 2 is
// completed in the transaction that settles its second successful
// scheduled run (next_fire_at cleared, the reason a code), not at its next
// firing; a run triggered by hand and a failed scheduled run do not count.
func TestMaxRunsCompletesWhenTheNthRunSettles(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		m := runstate.New(s)
		_, err := s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex, err := s.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex", App: "a", Address: "http://127.0.0.1:1", Capacity: 4})
		require.NoError(t, err)
		j := store.Job{App: "a", Name: "twice", Handler: "noop", CronExpr: "* * * * *", TimeZone: "UTC",
			MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 1, Params: "{}", Enabled: true,
			NextFireAt: sql.NullInt64{Int64: 9_000_000, Valid: true}}
		j.MaxRuns = 2
		jobID, err := s.CreateJob(ctx, j)
		require.NoError(t, err)

		run := func(at int64, kind, status string) {
			t.Helper()
			r, _, err := s.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: at, TriggerKind: kind, Status: store.RunPending, SlotCount: 1})
			require.NoError(t, err)
			started, err := s.StartRun(ctx, 1, r.ID, 0, []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}})
			require.NoError(t, err)
			require.True(t, started)
			atts, err := s.Attempts(ctx, r.ID)
			require.NoError(t, err)
			acc, err := m.FinishAttempts(ctx, []store.SlotOutcome{{ExecutorID: ex.ID, SlotResult: protocol.SlotResult{Token: atts[0].Token, Status: status}}})
			require.NoError(t, err)
			require.Equal(t, []bool{true}, acc)
			got, err := s.Run(ctx, r.ID)
			require.NoError(t, err)
			require.Equal(t, status, got.Status, "the run settled")
		}
		open := func(why string) {
			t.Helper()
			got, err := s.Job(ctx, jobID)
			require.NoError(t, err)
			require.False(t, got.Completed(), why)
			require.True(t, got.NextFireAt.Valid, why)
		}
		run(1000, store.TriggerManual, store.AttemptSucceeded)
		run(2000, store.TriggerManual, store.AttemptSucceeded)
		open("runs triggered by hand do not count")
		run(3000, store.TriggerCron, store.AttemptFailed)
		open("a failed scheduled run does not count")
		run(4000, store.TriggerCron, store.AttemptSucceeded)
		open("one of two")
		run(5000, store.TriggerCatchUp, store.AttemptSucceeded)
		got, err := s.Job(ctx, jobID)
		require.NoError(t, err)
		require.True(t, got.Completed(), "completed when the second successful scheduled run settled")
		require.False(t, got.NextFireAt.Valid, "no next firing")
		require.Equal(t, msg.JobCompletedMaxRuns, got.CompletedMsg.Code)
		require.Contains(t, got.CompletedMsg.String(), "2")
		at := got.CompletedAt

		// Another success (a run triggered as a cron firing by a race)
		// leaves the completion as it was.
		run(6000, store.TriggerCron, store.AttemptSucceeded)
		got, err = s.Job(ctx, jobID)
		require.NoError(t, err)
		require.Equal(t, at, got.CompletedAt, "completed once")
	})
}
