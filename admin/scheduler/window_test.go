package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

func ptr(t time.Time) *time.Time { return &t }

func jobRow(t *testing.T, st *store.Store, id int64) store.Job {
	t.Helper()
	j, err := st.Job(context.Background(), id)
	require.NoError(t, err)
	return j
}

// scheduledTimes are the scheduled times of a job's runs, oldest first,
// with their statuses.
func scheduledTimes(t *testing.T, st *store.Store, id int64) map[time.Time]string {
	t.Helper()
	out := map[time.Time]string{}
	for _, r := range runsOf(t, st, id) {
		out[time.UnixMilli(r.ScheduledAt).UTC()] = r.Status
	}
	return out
}

// An hourly job in New York with start_at 07:30 and end_at 10:00 local
// (12:30Z and 15:00Z, EST) fires at 13:00Z, 14:00Z and 15:00Z (end_at is
// inclusive) and at no other hour of a day stepped through hour by hour;
// after its last firing it is completed (past its end_at), next NULL. A
// second job with catch_up whose leader was away all day fires the same
// three hours and no more. Editing end_at later plans the first job again.
func TestWindowFiresOnlyBetweenStartAndEnd(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ny, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)
		start := time.Date(2026, 3, 2, 7, 30, 0, 0, ny) // 12:30Z
		end := time.Date(2026, 3, 2, 10, 0, 0, 0, ny)   // 15:00Z
		day := time.Date(2026, 3, 2, 5, 0, 0, 0, time.UTC)
		c := clock.NewManual(day)
		s := leading(t, st, c, &fakePusher{}, 3)
		def := apitypes.JobDef{App: "a", Name: "hourly", Handler: "h", Cron: "0 * * * *", TimeZone: "America/New_York", StartAt: ptr(start), EndAt: ptr(end)}
		j := createJob(t, st, apitypes.JobSpec{JobDef: def}, day)
		require.Equal(t, time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC).UnixMilli(), j.NextFireAt.Int64, "the first firing is the first after start_at")
		require.Equal(t, apitypes.JobScheduled, jobdef.State(j))

		want := map[time.Time]string{}
		for h := 13; h <= 15; h++ {
			want[time.Date(2026, 3, 2, h, 0, 0, 0, time.UTC)] = store.RunPending
		}
		for h := 5; h <= 23; h++ {
			c.Set(time.Date(2026, 3, 2, h, 0, 0, 300e6, time.UTC))
			require.NoError(t, s.FireAll(ctx, 3))
		}
		require.Equal(t, want, scheduledTimes(t, st, j.ID))
		j = jobRow(t, st, j.ID)
		require.False(t, j.NextFireAt.Valid)
		require.Equal(t, apitypes.JobCompleted, jobdef.State(j))
		require.Equal(t, msg.JobCompletedEndAt, j.CompletedMsg.Code)
		require.Equal(t, "past its end_at (2026-03-02T15:00:00Z): no firing after it", j.CompletedMsg.String())
		v := jobdef.View(j)
		require.Equal(t, "completed", v.State)
		require.NotNil(t, v.CompletedAt)
		require.Equal(t, string(msg.JobCompletedEndAt), v.CompletedReasonCode.Code)

		// The catch-up job, created at 05:00 and first due at 13:00, its
		// leader back only at 23:00: the three hours of its window and
		// nothing after end_at.
		late := def
		late.Name, late.MisfirePolicy, late.MaxCatchUp = "catch-up", "catch_up", 50
		k := createJob(t, st, apitypes.JobSpec{JobDef: late}, day)
		require.Equal(t, time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC).UnixMilli(), k.NextFireAt.Int64)
		require.NoError(t, s.FireAll(ctx, 3))
		got := scheduledTimes(t, st, k.ID)
		require.Len(t, got, 3)
		for at := range want {
			require.Contains(t, got, at)
		}
		for _, r := range runsOf(t, st, k.ID) {
			require.Equal(t, store.TriggerCatchUp, r.TriggerKind)
		}
		require.Equal(t, apitypes.JobCompleted, jobdef.State(jobRow(t, st, k.ID)))

		// A later end_at: the edit plans the job again, it is no longer
		// completed, and fires the next day's hours up to the new end.
		now := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
		def.EndAt = ptr(time.Date(2026, 3, 3, 2, 0, 0, 0, time.UTC))
		u, err := jobdef.ValidateUpdate(apitypes.JobSpec{JobDef: def, Version: j.Version}, now, time.UnixMilli(j.CreatedAt))
		require.NoError(t, err)
		u.Job.ID = j.ID
		require.NoError(t, st.UpdateJob(ctx, u.Job))
		j = jobRow(t, st, j.ID)
		require.Equal(t, apitypes.JobScheduled, jobdef.State(j))
		require.Equal(t, time.Date(2026, 3, 3, 1, 0, 0, 0, time.UTC).UnixMilli(), j.NextFireAt.Int64)
		for h := 1; h <= 3; h++ {
			c.Set(time.Date(2026, 3, 3, h, 0, 0, 300e6, time.UTC))
			require.NoError(t, s.FireAll(ctx, 3))
		}
		require.Len(t, scheduledTimes(t, st, j.ID), 5)
		require.Equal(t, apitypes.JobCompleted, jobdef.State(jobRow(t, st, j.ID)))
	})
}

// max_runs 2 on an hourly job: two firings while none has finished make
// two pending runs, the third could push past the limit and is skipped
// with the reason; once two runs succeeded the job is completed at its
// next firing and creates no run. (Statuses written straight to the
// database bypass the state machine, which completes the job as soon as
// the second run settles — admin/runstate's TestMaxRunsCompletesWhenTheNthRunSettles:
// this is the leader's check at the next firing, which stays.)
func TestMaxRunsCompletesAfterSuccessfulRuns(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := leading(t, st, c, &fakePusher{}, 3)
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "twice", Handler: "h", Cron: "0 * * * *", MaxRuns: 2}}, t0)
		hour := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
		for h := 1; h <= 3; h++ {
			c.Set(hour(h).Add(300 * time.Millisecond))
			require.NoError(t, s.FireAll(ctx, 3))
		}
		runs := byKey(runsOf(t, st, j.ID))
		require.Len(t, runs, 3)
		require.Equal(t, store.RunPending, runs[hour(1)].Status)
		require.Equal(t, store.RunPending, runs[hour(2)].Status)
		require.Equal(t, store.RunSkipped, runs[hour(3)].Status)
		require.Equal(t, msg.RunSkippedMaxRuns, runs[hour(3)].ErrorMsg.Code)
		require.Equal(t, "max_runs 2: 0 runs succeeded and 2 still active could reach it", runs[hour(3)].Error)
		require.Equal(t, apitypes.JobScheduled, jobdef.State(jobRow(t, st, j.ID)))

		// One fails, one succeeds: the next firing runs again.
		_, err := st.DB().Exec(`UPDATE job_run SET status = 'failed' WHERE job_id = ? AND scheduled_at = ?`, j.ID, hour(1).UnixMilli())
		require.NoError(t, err)
		_, err = st.DB().Exec(`UPDATE job_run SET status = 'succeeded' WHERE job_id = ? AND scheduled_at = ?`, j.ID, hour(2).UnixMilli())
		require.NoError(t, err)
		c.Set(hour(4).Add(300 * time.Millisecond))
		require.NoError(t, s.FireAll(ctx, 3))
		require.Equal(t, store.RunPending, byKey(runsOf(t, st, j.ID))[hour(4)].Status)

		// It succeeds too: 2 successful runs, the job completes at its
		// next firing without a run.
		_, err = st.DB().Exec(`UPDATE job_run SET status = 'succeeded' WHERE job_id = ? AND scheduled_at = ?`, j.ID, hour(4).UnixMilli())
		require.NoError(t, err)
		c.Set(hour(5).Add(300 * time.Millisecond))
		require.NoError(t, s.FireAll(ctx, 3))
		require.Len(t, runsOf(t, st, j.ID), 4)
		j = jobRow(t, st, j.ID)
		require.Equal(t, apitypes.JobCompleted, jobdef.State(j))
		require.False(t, j.NextFireAt.Valid)
		require.Equal(t, "2 scheduled runs succeeded: its max_runs (2) is reached", j.CompletedMsg.String())
	})
}

// A one-time schedule "@at 2026-03-08T02:30" in New York names a time that
// does not exist (the clocks jump from 02:00 to 03:00 EST→EDT): it fires
// once at the jump, 07:00Z, keyed like any run; the job is then completed.
// The same local time in Kolkata (no DST) is 21:00Z the day before.
func TestAtFiresOnceThenCompletes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
		c := clock.NewManual(now)
		s := leading(t, st, c, &fakePusher{}, 3)
		ny := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "ny", Handler: "h", Cron: "@at 2026-03-08T02:30", TimeZone: "America/New_York"}}, now)
		in := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "in", Handler: "h", Cron: "@at 2026-03-08T02:30", TimeZone: "Asia/Kolkata"}}, now)
		nyAt := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
		inAt := time.Date(2026, 3, 7, 21, 0, 0, 0, time.UTC)
		require.Equal(t, nyAt.UnixMilli(), ny.NextFireAt.Int64)
		require.Equal(t, inAt.UnixMilli(), in.NextFireAt.Int64)

		for _, at := range []time.Time{inAt, nyAt, nyAt.Add(24 * time.Hour)} {
			c.Set(at.Add(300 * time.Millisecond))
			require.NoError(t, s.FireAll(ctx, 3))
		}
		require.Equal(t, map[time.Time]string{nyAt: store.RunPending}, scheduledTimes(t, st, ny.ID))
		require.Equal(t, map[time.Time]string{inAt: store.RunPending}, scheduledTimes(t, st, in.ID))
		for _, id := range []int64{ny.ID, in.ID} {
			j := jobRow(t, st, id)
			require.Equal(t, apitypes.JobCompleted, jobdef.State(j))
			require.Equal(t, msg.JobCompletedNoFiring, j.CompletedMsg.Code)
			require.False(t, j.NextFireAt.Valid)
		}
		require.Equal(t, int64(2), s.Stats().Fired)
	})
}

// A pause until an instant: three hourly jobs (run_once, skip, catch_up;
// misfire threshold 1 min) in Berlin are paused at 00:30Z until 03:30Z.
// Nothing fires while paused (01:00, 02:00, 03:00); at 03:30 the leader
// resumes them by itself and each misfire policy decides the three missed
// firings: run_once one run (03:00; 01:00 and 02:00 recorded as skipped
// by misfire), skip three skipped runs with the misfire reason, catch_up
// three catch-up runs. 04:00 then fires as usual.
func TestPauseUntilResumesWithTheMisfirePolicy(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
		at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
		c := clock.NewManual(day)
		s := leading(t, st, c, &fakePusher{}, 3)
		ids := map[string]int64{}
		for _, p := range []string{"run_once", "skip", "catch_up"} {
			j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: p, Handler: "h", Cron: "0 * * * *",
				TimeZone: "Europe/Berlin", MisfirePolicy: p, MisfireThresholdMS: 60_000}}, day)
			ids[p] = j.ID
			c.Set(at(0, 30))
			next, err := st.Job(ctx, j.ID)
			require.NoError(t, err)
			require.NoError(t, st.PauseJobUntil(ctx, j.ID, at(3, 30).UnixMilli(), next.NextFireAt))
			j = jobRow(t, st, j.ID)
			require.True(t, j.Paused)
			require.Equal(t, at(3, 30), jobdef.View(j).PausedUntil.UTC())
			require.Equal(t, apitypes.JobPaused, jobdef.State(j))
		}
		for _, h := range []int{1, 2, 3} {
			c.Set(at(h, 0).Add(300 * time.Millisecond))
			require.NoError(t, s.FireAll(ctx, 3))
		}
		for p, id := range ids {
			require.Empty(t, runsOf(t, st, id), "%s: nothing fires while paused", p)
		}
		end, err := st.NextPauseEnd(ctx)
		require.NoError(t, err)
		require.Equal(t, at(3, 30).UnixMilli(), end.Int64, "the leader wakes when the pause ends")

		c.Set(at(3, 30).Add(300 * time.Millisecond))
		require.NoError(t, s.FireAll(ctx, 3))
		for p, id := range ids {
			j := jobRow(t, st, id)
			require.False(t, j.Paused, p)
			require.False(t, j.PauseUntil.Valid, p)
			require.Equal(t, at(4, 0).UnixMilli(), j.NextFireAt.Int64, p)
		}
		once := byKey(runsOf(t, st, ids["run_once"]))
		require.Len(t, once, 3)
		require.Equal(t, store.RunPending, once[at(3, 0)].Status, "run_once: one run, the latest missed firing")
		for _, h := range []int{1, 2} {
			require.Equal(t, store.RunSkipped, once[at(h, 0)].Status, "run_once: %d:00 recorded as skipped", h)
			require.Equal(t, msg.RunSkippedMisfire, once[at(h, 0)].ErrorMsg.Code)
		}
		skipped := byKey(runsOf(t, st, ids["skip"]))
		require.Len(t, skipped, 3)
		for _, h := range []int{1, 2, 3} {
			r := skipped[at(h, 0)]
			require.Equal(t, store.RunSkipped, r.Status, "skip: %d:00", h)
			require.Equal(t, msg.RunSkippedMisfire, r.ErrorMsg.Code)
		}
		caught := byKey(runsOf(t, st, ids["catch_up"]))
		require.Len(t, caught, 3)
		for _, h := range []int{1, 2, 3} {
			require.Equal(t, store.TriggerCatchUp, caught[at(h, 0)].TriggerKind, "catch_up: %d:00", h)
			require.Equal(t, store.RunPending, caught[at(h, 0)].Status)
		}
		end, err = st.NextPauseEnd(ctx)
		require.NoError(t, err)
		require.False(t, end.Valid)

		c.Set(at(4, 0).Add(300 * time.Millisecond))
		require.NoError(t, s.FireAll(ctx, 3))
		require.Equal(t, store.RunPending, byKey(runsOf(t, st, ids["run_once"]))[at(4, 0)].Status, "04:00 fires as usual")
	})
}
