package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/stretchr/testify/require"
)

// TestJitteredRunWaitsForItsStartAfter: a scheduled run of a job with a
// jitter window keeps start_after (scheduled time + the firing's offset);
// the leader's page of due runs leaves it out until then and the wake-up
// query names that instant; its start deadline counts from start_after; a
// run triggered by hand is not jittered.
func TestJitteredRunWaitsForItsStartAfter(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		j := newJob("a", "jittered", 0)
		j.JitterWindow, j.StartDeadline = "10m", "1m"
		id, err := s.CreateJob(ctx, j)
		require.NoError(t, err)
		j, err = s.Job(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "10m", j.JitterWindow, "the job keeps its window")

		at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
		nr := jobrules.NewRun(j, at.UnixMilli(), store.TriggerCron, store.RunPending)
		offset := schedule.JitterOffset("a/jittered", at, 10*time.Minute)
		require.Positive(t, offset, "this firing's offset is not 0 (else the test proves nothing)")
		startAfter := at.Add(offset).UnixMilli()
		require.Equal(t, startAfter, nr.StartAfter)
		run, created, err := s.InsertRun(ctx, 0, nr)
		require.NoError(t, err)
		require.True(t, created)
		got, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, at.UnixMilli(), got.ScheduledAt, "the run key stays the scheduled time")
		require.Equal(t, startAfter, got.StartAfter)
		require.Equal(t, startAfter, got.StartsAt())
		require.Equal(t, startAfter+time.Minute.Milliseconds(), got.StartDeadlineAt.Int64, "the start deadline counts from start_after")

		manual, _, err := s.InsertRun(ctx, 0, jobrules.NewRun(j, at.UnixMilli()+1, store.TriggerManual, store.RunPending))
		require.NoError(t, err)
		require.Zero(t, manual.StartAfter, "a run triggered by hand is not jittered")

		due := func(nowMS int64) []int64 {
			page, err := s.PendingPage(ctx, nowMS, store.PendingCursor{}, 10)
			require.NoError(t, err)
			var ids []int64
			for _, r := range page {
				ids = append(ids, r.ID)
			}
			return ids
		}
		require.Equal(t, []int64{manual.ID}, due(at.UnixMilli()+1), "at its scheduled time the jittered run is not due")
		require.Equal(t, []int64{manual.ID}, due(startAfter-1), "nor 1ms before its start_after")
		require.Equal(t, []int64{run.ID, manual.ID}, due(startAfter), "at its start_after it is due, in scheduled order")

		next, err := s.NextPendingAfter(ctx, at.UnixMilli()+1)
		require.NoError(t, err)
		require.Equal(t, startAfter, next.Int64, "the leader wakes for the start_after")
		next, err = s.NextPendingAfter(ctx, at.UnixMilli()-1)
		require.NoError(t, err)
		require.Equal(t, at.UnixMilli(), next.Int64, "or for an earlier scheduled time")

		// Started once due: StartRuns moves it to running.
		_, err = s.ClaimEpoch(ctx, 1, "me")
		require.NoError(t, err)
		ex := heartbeat(t, s, "ex", 1, 4)
		atts := []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: ex.ID}, {Slot: 1, Attempt: 1, ExecutorID: ex.ID},
			{Slot: 2, Attempt: 1, ExecutorID: ex.ID}, {Slot: 3, Attempt: 1, ExecutorID: ex.ID}}
		started, err := s.StartRuns(ctx, 1, time.Minute, []store.RunStart{{RunID: run.ID, Attempts: atts}})
		require.NoError(t, err)
		require.Equal(t, []int64{run.ID}, started)
		got, err = s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, got.Status)
		require.Equal(t, []int64{manual.ID}, due(startAfter))
	})
}
