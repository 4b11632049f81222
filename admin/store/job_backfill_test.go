package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/store"
)

// TestJobBackfillAllOrNone: a job backfill's row and runs are written in
// one transaction fenced by the leader's epoch. A date whose run key
// exists keeps its run; a repeated backfill creates no run twice; a stale
// epoch, a run of another job half-way or a deleted job write nothing.
func TestJobBackfillAllOrNone(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		id, err := s.CreateJob(ctx, newJob("a", "settle", 0))
		require.NoError(t, err)
		j, err := s.Job(ctx, id)
		require.NoError(t, err)
		ok, err := s.ClaimEpoch(ctx, 3, "admin-a")
		require.NoError(t, err)
		require.True(t, ok)

		const day = 86_400_000
		manual, created, err := s.InsertRun(ctx, 3, jobrules.NewRun(j, 2*day, store.TriggerManual, store.RunPending))
		require.NoError(t, err)
		require.True(t, created)
		runs := []store.NewRun{
			jobrules.NewRun(j, 1*day, store.TriggerBackfill, store.RunPending),
			jobrules.NewRun(j, 2*day, store.TriggerBackfill, store.RunPending), // the manual run's key
			jobrules.NewRun(j, 3*day, store.TriggerBackfill, store.RunPending),
		}
		b := store.JobBackfill{JobID: id, App: "a", FromDate: "1970-01-02", ToDate: "1970-01-04", Parallel: 2, CreatedBy: "ops"}
		bid, made, isNew, err := s.CreateJobBackfill(ctx, 3, b, runs)
		require.NoError(t, err)
		require.NotZero(t, bid)
		require.Equal(t, []bool{true, false, true}, isNew)
		require.Equal(t, manual.ID, made[1].ID, "the date's run is kept")
		require.Equal(t, store.TriggerManual, made[1].TriggerKind)
		require.Equal(t, store.TriggerBackfill, made[0].TriggerKind)
		require.Equal(t, j.SlotCount, made[0].SlotCount)
		require.Less(t, made[0].ID, made[2].ID, "created in the order given")

		turns, err := s.BackfillTurns(ctx, []int64{bid}, 10*day)
		require.NoError(t, err)
		require.Equal(t, &store.BackfillTurn{Parallel: 2, Pending: []int64{made[0].ID, made[2].ID}}, turns[bid], "the backfill's runs, in order")
		turns, err = s.BackfillTurns(ctx, []int64{bid}, 2*day)
		require.NoError(t, err)
		require.Equal(t, []int64{made[0].ID}, turns[bid].Pending, "only the due ones")

		count := func() int {
			t.Helper()
			rs, err := s.Runs(ctx, store.RunFilter{JobID: id})
			require.NoError(t, err)
			return len(rs)
		}
		require.Equal(t, 3, count())

		// Again: nothing created twice.
		bid2, again, isNew, err := s.CreateJobBackfill(ctx, 3, b, runs)
		require.NoError(t, err)
		require.NotEqual(t, bid, bid2)
		require.Equal(t, []bool{false, false, false}, isNew)
		require.Equal(t, []int64{made[0].ID, made[1].ID, made[2].ID}, []int64{again[0].ID, again[1].ID, again[2].ID})
		require.Equal(t, 3, count())

		list, err := s.JobBackfills(ctx, id, 0, 0)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, bid2, list[0].ID, "newest first")
		require.Equal(t, store.JobBackfillStatus{JobBackfill: store.JobBackfill{ID: bid, JobID: id, App: "a", FromDate: "1970-01-02", ToDate: "1970-01-04",
			Parallel: 2, CreatedBy: "ops", CreatedAt: list[1].CreatedAt}, Runs: 2, Pending: 2}, list[1])
		require.Equal(t, 0, list[0].Runs, "the repeat owns no run")
		older, err := s.JobBackfills(ctx, id, bid2, 10)
		require.NoError(t, err)
		require.Len(t, older, 1)

		// A run of another job half-way: nothing of it is written.
		other := jobrules.NewRun(j, 5*day, store.TriggerBackfill, store.RunPending)
		other.JobID = id + 1000
		_, _, _, err = s.CreateJobBackfill(ctx, 3, b, []store.NewRun{jobrules.NewRun(j, 4*day, store.TriggerBackfill, store.RunPending), other})
		require.ErrorContains(t, err, "a run of job")
		require.Equal(t, 3, count())
		list, err = s.JobBackfills(ctx, id, 0, 0)
		require.NoError(t, err)
		require.Len(t, list, 2, "no backfill row either")

		// A stale epoch writes nothing.
		ok, err = s.ClaimEpoch(ctx, 4, "admin-b")
		require.NoError(t, err)
		require.True(t, ok)
		_, _, _, err = s.CreateJobBackfill(ctx, 3, b, []store.NewRun{jobrules.NewRun(j, 4*day, store.TriggerBackfill, store.RunPending)})
		require.ErrorIs(t, err, store.ErrStaleEpoch)
		require.Equal(t, 3, count())

		// A deleted job: not found, nothing written.
		require.NoError(t, s.DeleteJob(ctx, id))
		_, _, _, err = s.CreateJobBackfill(ctx, 4, b, []store.NewRun{jobrules.NewRun(j, 4*day, store.TriggerBackfill, store.RunPending)})
		require.ErrorIs(t, err, store.ErrNotFound)
		require.Equal(t, 3, count())
		list, err = s.JobBackfills(ctx, id, 0, 0)
		require.NoError(t, err)
		require.Len(t, list, 2)
	})
}

// TestJobRunsOfRange: what a job backfill finds of its dates: the job's
// own runs scheduled in the range, not those of other jobs or outside it.
func TestJobRunsOfRange(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		id, err := s.CreateJob(ctx, newJob("a", "load", 0))
		require.NoError(t, err)
		j, err := s.Job(ctx, id)
		require.NoError(t, err)
		otherID, err := s.CreateJob(ctx, newJob("a", "other", 0))
		require.NoError(t, err)
		o, err := s.Job(ctx, otherID)
		require.NoError(t, err)
		var ids []int64
		for _, at := range []int64{999, 1000, 1500, 2000} {
			r, _, err := s.InsertRun(ctx, 1, jobrules.NewRun(j, at, store.TriggerManual, store.RunPending))
			require.NoError(t, err)
			ids = append(ids, r.ID)
		}
		_, _, err = s.InsertRun(ctx, 1, jobrules.NewRun(o, 1200, store.TriggerManual, store.RunPending))
		require.NoError(t, err)
		got, err := s.JobRunsOfRange(ctx, id, 1000, 2000, "1970-01-01", "1970-01-01")
		require.NoError(t, err)
		require.Equal(t, []store.JobDateRun{{ID: ids[1], ScheduledAt: 1000, Status: store.RunPending}, {ID: ids[2], ScheduledAt: 1500, Status: store.RunPending}}, got)
	})
}
