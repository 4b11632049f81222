package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// TestJitteredFiringStartsAtItsOffset: an hourly job with a 30-minute
// jitter window fires at 13:00 (the run key), but the leader starts the
// run only at 13:00 plus the firing's offset, never before; a start
// deadline of 1 minute counts from there, so the jitter raises no
// run_late_start; a second leader replaying the firing creates no second
// run and agrees on the offset.
func TestJitteredFiringStartsAtItsOffset(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC)
		c := clock.NewManual(at.Add(-time.Hour))
		p := &fakePusher{}
		s := leading(t, st, c, p, 1)
		online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 4, Handlers: []string{"h"}})
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "spread", Handler: "h", Cron: "0 * * * *",
			SlotCount: 2, JitterWindow: "30m", StartDeadline: "1m"}}, at.Add(-time.Hour))
		offset := schedule.JitterOffset("app/spread", at, 30*time.Minute)
		require.Greater(t, offset, 2*time.Minute, "this firing's offset leaves room for the checks below")
		startAfter := at.Add(offset)

		c.Set(at.Add(300 * time.Millisecond))
		require.NoError(t, s.FireAll(ctx, 1))
		runs := runsOf(t, st, j.ID)
		require.Len(t, runs, 1)
		run := runs[0]
		require.Equal(t, at.UnixMilli(), run.ScheduledAt, "the run key is the scheduled time")
		require.Equal(t, startAfter.UnixMilli(), run.StartAfter)
		require.Equal(t, startAfter.Add(time.Minute).UnixMilli(), run.StartDeadlineAt.Int64)

		status := func() string {
			r, err := st.Run(ctx, run.ID)
			require.NoError(t, err)
			return r.Status
		}
		for _, now := range []time.Time{at.Add(300 * time.Millisecond), at.Add(2 * time.Minute), startAfter.Add(-time.Millisecond)} {
			c.Set(now)
			require.NoError(t, s.AssignPending(ctx, 1))
			require.NoError(t, s.CheckDeadlines(ctx))
			require.Equal(t, store.RunPending, status(), "not started at %s (start_after %s)", now, startAfter)
		}
		s.WaitPushes()
		require.Empty(t, p.pushes, "no slot handed to an executor before start_after")
		require.Empty(t, alarmsOfKind(t, st, store.AlarmRunLateStart), "the jitter does not make the run late")

		// A second leader (failover) replays the hour: the run key keeps
		// one run, with the same start_after.
		claim(t, st, 2)
		s2 := newScheduler(t, st, c, p)
		_, err := st.DB().Exec(`UPDATE job SET next_fire_at = ? WHERE id = ?`, at.UnixMilli(), j.ID)
		require.NoError(t, err)
		require.NoError(t, s2.FireAll(ctx, 2))
		runs = runsOf(t, st, j.ID)
		require.Len(t, runs, 1, "the replayed firing is the same run")
		require.Equal(t, startAfter.UnixMilli(), runs[0].StartAfter)

		c.Set(startAfter)
		require.NoError(t, s2.AssignPending(ctx, 2))
		s2.WaitPushes()
		require.Equal(t, store.RunRunning, status(), "started at start_after")
		require.Len(t, p.pushes, 1)
		require.Empty(t, alarmsOfKind(t, st, store.AlarmRunLateStart))
	})
}
