package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
)

// leadWithExecutor records epoch 1 for the test leader and registers one
// online executor "a" of app with capacity 10 and handlers.
func leadWithExecutor(t *testing.T, st *store.Store, app string, handlers ...string) {
	t.Helper()
	claim(t, st, 1)
	online(t, st, store.ExecutorInfo{InstanceID: "a", App: app, Address: "http://127.0.0.1:1", Capacity: 10, Handlers: handlers})
}

// pendingRun inserts a pending run of job jobID scheduled at (Unix ms).
func pendingRun(t *testing.T, st *store.Store, jobID, at int64, kind string, slots int) store.Run {
	t.Helper()
	r, _, err := st.InsertRun(context.Background(), 1, store.NewRun{JobID: jobID, ScheduledAt: at, TriggerKind: kind, Status: store.RunPending, SlotCount: slots})
	require.NoError(t, err)
	return r
}

// count returns the result of a COUNT(*) query.
func count(t *testing.T, st *store.Store, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, st.DB().Get(&n, q, args...))
	return n
}

// TestBatchedStartPushesManyRunsPerRequest: pending runs of many jobs start
// in a few transactions, and each executor gets the slots of all of them in
// one push (PushBatch allowing), not one push per run.
func TestBatchedStartPushesManyRunsPerRequest(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{startAll: true}
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, StartBatch: 7}, st, p)
		require.NoError(t, err)
		claim(t, st, 1)
		for _, id := range []string{"a", "b"} {
			online(t, st, store.ExecutorInfo{InstanceID: id, App: "app", Address: "http://127.0.0.1/" + id, Capacity: 100, Handlers: []string{"h"}})
		}
		const runs = 40
		wantSlots := 0
		for i := range runs {
			wantSlots += 1 + i%3
			j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: fmt.Sprintf("j%d", i), Handler: "h", Cron: "0 0 1 1 *", SlotCount: 1 + i%3}}, t0)
			pendingRun(t, st, j.ID, t0.UnixMilli(), store.TriggerManual, j.SlotCount)
		}
		before, err := st.Now(ctx)
		require.NoError(t, err)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		after, err := st.Now(ctx)
		require.NoError(t, err)

		require.Equal(t, runs, count(t, st, `SELECT COUNT(*) FROM job_run WHERE status = 'running' AND started_at IS NOT NULL`))
		slots := count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE current = 1 AND attempt = 1`)
		require.Equal(t, wantSlots, slots, "one first attempt per slot")
		// The leader's clock (t0) is far from the database's: the leases are
		// the database clock plus the loss threshold (3 × the 2 s default
		// heartbeat) all the same.
		lost := (6 * time.Second).Milliseconds()
		require.Equal(t, slots, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE lease_until BETWEEN ? AND ?`, before.UnixMilli()+lost, after.UnixMilli()+lost),
			"leases run from the database clock, not the leader's")
		require.Zero(t, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE acked = 0`), "every attempt pushed and acknowledged")
		require.Equal(t, slots, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE status = 'running' AND started_at IS NOT NULL`),
			"the executors answered that they started them: running, not queued (nothing to steal)")
		p.mu.Lock()
		defer p.mu.Unlock()
		// 40 runs in batches of 7 (6 start transactions), each pushing to the
		// two executors; a push loop that is still busy takes the next batch
		// along: at most 2 requests per batch, far fewer than one per run.
		require.LessOrEqual(t, len(p.pushes), 12)
		pushed, multi := 0, 0
		for _, req := range p.pushes {
			// Wall clock: bounded by half the loss threshold (3 × the 2 s default heartbeat).
			require.InDelta(t, time.Now().Add(3*time.Second).UnixMilli(), req.ValidUntilMS, float64(10*time.Second/time.Millisecond),
				"a push is valid for half the loss threshold")
			if len(req.Assignments) > 1 {
				multi++
			}
			for _, a := range req.Assignments {
				pushed += len(a.Attempts)
			}
		}
		require.Equal(t, slots, pushed, "every slot pushed once")
		require.Positive(t, multi, "a push carries the slots of several runs")
	})
}

// TestBatchedStartUnderAFencedOutEpochWritesNothing: a leader whose epoch
// was taken over (it was paused past its session) starts nothing, pushes
// nothing and steps down: no run moves, no attempt is written.
func TestBatchedStartUnderAFencedOutEpochWritesNothing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{}
		s := newScheduler(t, st, c, p)
		_, err := st.ClaimEpoch(ctx, 1, "old")
		require.NoError(t, err)
		online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 100, Handlers: []string{"h"}})
		for i := range 30 {
			j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: fmt.Sprintf("j%d", i), Handler: "h", Cron: "0 0 1 1 *", SlotCount: 2}}, t0)
			pendingRun(t, st, j.ID, t0.UnixMilli(), store.TriggerCron, 2)
		}
		// Another admin takes over (epoch 2) while the old leader still
		// believes it leads with epoch 1.
		ok, err := st.ClaimEpoch(ctx, 2, "new")
		require.NoError(t, err)
		require.True(t, ok)

		err = s.AssignPending(ctx, 1)
		require.ErrorIs(t, err, store.ErrStaleEpoch)
		s.WaitPushes()
		require.Equal(t, 30, count(t, st, `SELECT COUNT(*) FROM job_run WHERE status = 'pending' AND started_at IS NULL`))
		require.Zero(t, count(t, st, `SELECT COUNT(*) FROM slot_attempt`))
		p.mu.Lock()
		require.Empty(t, p.pushes)
		p.mu.Unlock()

		// The same through the store directly, with a run cancelled meanwhile
		// in the batch: a stale epoch writes nothing; the current one starts
		// only what is still pending.
		var ids []int64
		require.NoError(t, st.DB().Select(&ids, `SELECT id FROM job_run ORDER BY id`))
		_, _, err = runstate.New(st).Cancel(ctx, ids[0], msg.New(msg.RunCancelledBy, "user", "ops"))
		require.NoError(t, err)
		starts := make([]store.RunStart, len(ids))
		for i, id := range ids {
			starts[i] = store.RunStart{RunID: id, Attempts: []store.NewAttempt{{Slot: 0, Attempt: 1, ExecutorID: 1}, {Slot: 1, Attempt: 1, ExecutorID: 1}}, PredictedMS: 1500}
		}
		_, err = st.StartRuns(ctx, 1, 0, starts)
		require.ErrorIs(t, err, store.ErrStaleEpoch)
		require.Zero(t, count(t, st, `SELECT COUNT(*) FROM slot_attempt`))
		started, err := st.StartRuns(ctx, 2, 0, starts)
		require.NoError(t, err)
		require.Equal(t, ids[1:], started, "the cancelled run is not started")
		require.Equal(t, 2*(len(ids)-1), count(t, st, `SELECT COUNT(*) FROM slot_attempt`))
		require.Equal(t, len(ids)-1, count(t, st, `SELECT COUNT(*) FROM job_run WHERE status = 'running' AND predicted_ms = 1500`))
		again, err := st.StartRuns(ctx, 2, 0, starts)
		require.NoError(t, err)
		require.Empty(t, again, "a run starts once")
		require.Equal(t, 2*(len(ids)-1), count(t, st, `SELECT COUNT(*) FROM slot_attempt`))
	})
}

// TestQueuePolicyHoldsWithinOneBatch: two due runs of a queue-policy job in
// the same page of pending runs start one at a time, as they would one
// transaction each.
func TestQueuePolicyHoldsWithinOneBatch(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := newScheduler(t, st, c, &fakePusher{})
		leadWithExecutor(t, st, "app", "h")
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "q", Handler: "h", Cron: "0 0 1 1 *", SlotCount: 1, OverlapPolicy: "queue"}}, t0)
		for _, at := range []int64{1, 2} {
			pendingRun(t, st, j.ID, at, store.TriggerManual, 1)
		}
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		runs := runsOf(t, st, j.ID) // newest first
		require.Equal(t, store.RunPending, runs[0].Status, "the later run waits for the earlier one")
		require.Equal(t, store.RunRunning, runs[1].Status)
	})
}

// TestDisabledOrPausedJobsStartNoScheduledRun: a firing created ahead of
// time is skipped, with the reason, when its job is disabled or paused
// before it starts, and a leader never starts a scheduled run of a disabled
// or paused job (a claim that raced with the change); a run triggered by
// hand still runs.
func TestDisabledOrPausedJobsStartNoScheduledRun(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s := newScheduler(t, st, c, &fakePusher{})
		leadWithExecutor(t, st, "app", "h")
		newRun := func(j store.Job, at int64, kind string) store.Run { return pendingRun(t, st, j.ID, at, kind, 1) }
		status := func(id int64) store.Run {
			r, err := st.Run(ctx, id)
			require.NoError(t, err)
			return r
		}
		disabled := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "d", Handler: "h", Cron: "0 0 1 1 *"}}, t0)
		paused := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "p", Handler: "h", Cron: "0 0 1 1 *"}}, t0)
		edited := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "e", Handler: "h", Cron: "0 0 1 1 *"}}, t0)
		raced := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "r", Handler: "h", Cron: "0 0 1 1 *"}}, t0)
		dCron, dManual := newRun(disabled, 1, store.TriggerCron), newRun(disabled, 2, store.TriggerManual)
		pCron := newRun(paused, 1, store.TriggerCatchUp)
		eCron := newRun(edited, 1, store.TriggerCron)
		rCron := newRun(raced, 1, store.TriggerCron)

		require.NoError(t, st.SetJobEnabled(ctx, disabled.ID, false, disabled.NextFireAt))
		require.NoError(t, st.SetJobPaused(ctx, paused.ID, true, paused.NextFireAt))
		edited.Enabled = false
		require.NoError(t, st.UpdateJob(ctx, edited))
		for id, reason := range map[int64]string{dCron.ID: "disabled", pCron.ID: "paused", eCron.ID: "disabled"} {
			r := status(id)
			require.Equal(t, store.RunSkipped, r.Status)
			require.Contains(t, r.Error, "the job was "+reason+" before this firing started")
			require.True(t, r.FinishedAt.Valid)
		}
		// The raced claim: the job was disabled without the store's help.
		_, err := st.DB().Exec(`UPDATE job SET enabled = 0 WHERE id = ?`, raced.ID)
		require.NoError(t, err)

		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		require.Equal(t, store.RunRunning, status(dManual.ID).Status, "a run triggered by hand still runs")
		r := status(rCron.ID)
		require.Equal(t, store.RunSkipped, r.Status)
		require.Contains(t, r.Error, "disabled")
		require.Zero(t, count(t, st, `SELECT COUNT(*) FROM slot_attempt a JOIN job_run r ON r.id = a.run_id WHERE r.status = 'skipped'`))
	})
}

// TestUnplaceableRunsSayWhyAlarmAndFail: runs that no online executor can
// run (no executor of the app, or none with the handler) stay pending with
// the reason on the run and one run_unplaceable alarm for all of them; past
// UnplaceableTimeout they fail with that reason. A run that finds an
// executor in time starts, and its reason is cleared.
func TestUnplaceableRunsSayWhyAlarmAndFail(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, UnplaceableTimeout: time.Minute}, st, &fakePusher{})
		require.NoError(t, err)
		claim(t, st, 1)
		online(t, st, store.ExecutorInfo{InstanceID: "a", App: "billing", Address: "http://127.0.0.1:1", Capacity: 10, Handlers: []string{"other.v1"}})
		settle := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "billing", Name: "settle", Handler: "settle.v1", Cron: "0 0 1 1 *"}}, t0)
		lonely := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "nobody", Name: "lonely", Handler: "h", Cron: "0 0 1 1 *"}}, t0)
		var settleRuns []int64
		for i := range 3 {
			settleRuns = append(settleRuns, pendingRun(t, st, settle.ID, t0.UnixMilli()+int64(i), store.TriggerCron, 1).ID)
		}
		lonelyRun := pendingRun(t, st, lonely.ID, t0.UnixMilli(), store.TriggerManual, 1)
		run := func(id int64) store.Run {
			r, err := st.Run(ctx, id)
			require.NoError(t, err)
			return r
		}
		alarms := func(severity string) int {
			return count(t, st, `SELECT COUNT(*) FROM alarm_event WHERE kind = 'run_unplaceable' AND severity = ?`, severity)
		}

		c.Set(t0.Add(10 * time.Second))
		require.NoError(t, s.AssignPending(ctx, 1))
		require.NoError(t, s.AssignPending(ctx, 1)) // a second round writes and raises nothing new
		for _, id := range settleRuns {
			r := run(id)
			require.Equal(t, store.RunPending, r.Status)
			require.Equal(t, "waiting: no online executor of app billing has handler settle.v1 (1 online without it)", r.Error)
		}
		require.Equal(t, "waiting: no executor of app nobody is online", run(lonelyRun.ID).Error)
		require.Equal(t, 2, alarms("warning"), "one alarm per app and handler, not per run")

		// An executor with the handler comes: the waiting runs start, their
		// reason is gone.
		online(t, st, store.ExecutorInfo{InstanceID: "b", App: "billing", Address: "http://127.0.0.1:2", Capacity: 10, Handlers: []string{"settle.v1"}})
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		for _, id := range settleRuns {
			r := run(id)
			require.Equal(t, store.RunRunning, r.Status)
			require.Empty(t, r.Error)
		}
		// Their alarm resolves itself, with the reason; the other app's stays open.
		groups, err := st.AlarmGroups(ctx, store.AlarmFilter{Kind: store.AlarmRunUnplaceable}, 0, 10)
		require.NoError(t, err)
		require.Len(t, groups, 2)
		for _, g := range groups {
			a := g.Latest
			if a.App == "nobody" {
				require.False(t, a.ResolvedAt.Valid, "no run of app nobody is placed")
				continue
			}
			require.Equal(t, "billing", a.App)
			require.True(t, a.ResolvedAt.Valid)
			require.Equal(t, store.ResolvedByAdmin, a.ResolvedBy)
			require.Equal(t, msg.New(msg.AlarmResolvedRunPlaced), a.ResolvedMsg)
		}

		// The run nobody can run fails once its time is up, with the reason.
		c.Set(t0.Add(time.Minute + time.Second))
		require.NoError(t, s.AssignPending(ctx, 1))
		r := run(lonelyRun.ID)
		require.Equal(t, store.RunFailed, r.Status)
		require.True(t, r.FinishedAt.Valid)
		require.Equal(t, "no executor of app nobody is online for 1m0s (unplaceable timeout): the run failed without starting", r.Error)
		require.Equal(t, 1, alarms("critical"))
		require.Zero(t, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE run_id = ?`, lonelyRun.ID))
		require.Equal(t, 2, count(t, st, `SELECT COUNT(*) FROM alarm_event WHERE kind = 'run_unplaceable' AND resolved_at IS NULL`),
			"the failed run's alarms stay open")
	})
}

// TestUnacknowledgedAttemptsFailAfterTheDispatchTimeout: an executor that
// never acknowledges an attempt (it refuses the assignment every time) no
// longer gets it forever: past DispatchTimeout the attempt fails with the
// reason, the job's retry policy places the next attempt, and once retries
// are used up the run fails.
func TestUnacknowledgedAttemptsFailAfterTheDispatchTimeout(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		p := &fakePusher{refuse: true}
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, DispatchTimeout: 30 * time.Second}, st, p)
		require.NoError(t, err)
		leadWithExecutor(t, st, "app", "h")
		j := createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "refused", Handler: "h", Cron: "0 0 1 1 *", RetryMax: 1}}, t0)
		r := pendingRun(t, st, j.ID, t0.UnixMilli(), store.TriggerManual, 1)
		require.NoError(t, s.AssignPending(ctx, 1))
		s.WaitPushes()
		require.NoError(t, s.FailUnacknowledged(ctx))
		require.Equal(t, 0, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE status = 'failed'`), "not before the timeout")

		// The timeout passes (database clock: the attempt was dispatched earlier).
		expire := func() {
			_, err := st.DB().Exec(`UPDATE slot_attempt SET dispatched_at = dispatched_at - 60000 WHERE current = 1`)
			require.NoError(t, err)
		}
		expire()
		require.NoError(t, s.FailUnacknowledged(ctx))
		atts, err := st.Attempts(ctx, r.ID)
		require.NoError(t, err)
		require.Len(t, atts, 1)
		require.Equal(t, store.AttemptFailed, atts[0].Status)
		require.Contains(t, atts[0].Error, "did not acknowledge the assignment within 30s")
		run, err := st.Run(ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, run.Status, "retry_max 1: one more attempt")

		// After the retry backoff, the retry is placed and refused as well.
		c.Set(t0.Add(time.Hour))
		require.NoError(t, s.RetryFailed(ctx, 1))
		require.NoError(t, s.PlaceUnplaced(ctx, 1))
		s.WaitPushes()
		expire()
		require.NoError(t, s.FailUnacknowledged(ctx))
		run, err = st.Run(ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunFailed, run.Status, "retries used up: the run ends")
		require.Equal(t, 2, count(t, st, `SELECT COUNT(*) FROM slot_attempt WHERE run_id = ? AND status = 'failed'`, r.ID))
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM alarm_event WHERE kind = 'slot_dead'`))
	})
}
