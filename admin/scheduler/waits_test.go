package scheduler_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
)

// waitsFixture: job app/report (Asia/Shanghai, daily at 00:30) waits for
// job up/load (Asia/Shanghai) and, when withWorkflow, for workflow
// mkt/close; one executor of app runs its handler.
type waitsFixture struct {
	t      *testing.T
	st     *store.Store
	c      *clock.Manual
	p      *fakePusher
	s      *scheduler.Scheduler
	report store.Job
	load   store.Job
}

// firing is report's firing of business date 2026-03-02: 00:30 in
// Shanghai, 2026-03-01 16:30 UTC.
var firing = time.Date(2026, 3, 1, 16, 30, 0, 0, time.UTC)

func newWaitsFixture(t *testing.T, st *store.Store, waitFor []apitypes.WorkflowWait, timeout, onTimeout string) *waitsFixture {
	t.Helper()
	c := clock.NewManual(firing.Add(-time.Hour))
	p := &fakePusher{}
	f := &waitsFixture{t: t, st: st, c: c, p: p, s: leading(t, st, c, p, 1)}
	online(t, st, store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 4, Handlers: []string{"h"}})
	f.load = createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "up", Name: "load", Handler: "h", Cron: "0 1 * * *",
		TimeZone: "Asia/Shanghai"}}, c.Now())
	f.report = createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: "report", Handler: "h", Cron: "30 0 * * *",
		TimeZone: "Asia/Shanghai", WaitFor: waitFor, WaitTimeout: timeout, OnTimeout: onTimeout}}, c.Now())
	return f
}

func loadRef() apitypes.WorkflowWait {
	return apitypes.WorkflowWait{Job: &apitypes.WorkflowNameRef{App: "up", Name: "load"}}
}

// fire creates report's run of the firing (clock just after it) and
// returns it.
func (f *waitsFixture) fire() store.Run {
	f.t.Helper()
	f.c.Set(firing.Add(100 * time.Millisecond))
	require.NoError(f.t, f.s.FireAll(context.Background(), 1))
	runs := runsOf(f.t, f.st, f.report.ID)
	require.Len(f.t, runs, 1)
	require.Equal(f.t, "Asia/Shanghai", runs[0].TimeZone)
	return runs[0]
}

// pending inserts a pending run of report scheduled at at, as the API's
// "run now" does (in the job's zone).
func (f *waitsFixture) pending(at time.Time, kind string) store.Run {
	f.t.Helper()
	r, _, err := f.st.InsertRun(context.Background(), 1, jobrules.NewRun(f.report, at.UnixMilli(), kind, store.RunPending))
	require.NoError(f.t, err)
	return r
}

// tick moves the clock to at and runs the start path once.
func (f *waitsFixture) tick(at time.Time) {
	f.t.Helper()
	f.c.Set(at)
	require.NoError(f.t, f.s.AssignPending(context.Background(), 1))
	f.s.WaitPushes()
}

func (f *waitsFixture) run(id int64) store.Run {
	f.t.Helper()
	r, err := f.st.Run(context.Background(), id)
	require.NoError(f.t, err)
	return r
}

func (f *waitsFixture) heldUntil(id int64) int64 {
	f.t.Helper()
	var v int64
	require.NoError(f.t, f.st.DB().Get(&v, f.st.DB().Rebind(`SELECT held_until FROM job_run WHERE id = ?`), id))
	return v
}

// loadSucceeded records a succeeded cron run of up/load scheduled at at.
func (f *waitsFixture) loadSucceeded(at time.Time) {
	f.t.Helper()
	run, created, err := f.st.InsertRun(context.Background(), 1, store.NewRun{JobID: f.load.ID, ScheduledAt: at.UnixMilli(),
		TriggerKind: store.TriggerCron, Status: store.RunPending, SlotCount: 1, TimeZone: "Asia/Shanghai"})
	require.NoError(f.t, err)
	require.True(f.t, created)
	_, err = f.st.DB().Exec(f.st.DB().Rebind(`UPDATE job_run SET status = 'succeeded' WHERE id = ?`), run.ID)
	require.NoError(f.t, err)
}

// TestJobWaitsHoldTheRunUntilTheUpstreamOfItsDateSucceeded: a run of a job
// waiting for another job is held with the reason (the missing run, the
// business date in the run's zone, the deadline), is not started and is
// not looked at again before HoldRecheck, for which the leader wakes; an
// upstream success of another business date does not count; once the
// upstream's run of the date succeeded, the run starts at the next check
// and the reason is gone.
func TestJobWaitsHoldTheRunUntilTheUpstreamOfItsDateSucceeded(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newWaitsFixture(t, st, []apitypes.WorkflowWait{loadRef()}, "2h", "")
		run := f.fire()

		now := firing.Add(100 * time.Millisecond)
		f.tick(now)
		got := f.run(run.ID)
		require.Equal(t, store.RunPending, got.Status)
		require.Equal(t, "waiting for up/load of business date 2026-03-02 (wait_for; times out at 2026-03-01T18:30:00Z)", got.Error)
		require.Equal(t, msg.RunWaitsHeld, got.ErrorMsg.Code, "stored as a code too")
		require.Equal(t, now.Add(5*time.Second).UnixMilli(), f.heldUntil(run.ID), "held for HoldRecheck (default 5s)")
		next, err := st.NextPendingAfter(ctx, now.UnixMilli())
		require.NoError(t, err)
		require.Equal(t, now.Add(5*time.Second).UnixMilli(), next.Int64, "the leader wakes for the hold")
		require.Empty(t, f.p.pushes, "not started")

		// The upstream's run of the day before: 15:59 UTC of the 1st is
		// 23:59 of the 1st in Shanghai (16:00 UTC would be the 2nd).
		f.loadSucceeded(time.Date(2026, 3, 1, 15, 59, 0, 0, time.UTC))
		f.tick(now.Add(5 * time.Second))
		require.Equal(t, store.RunPending, f.run(run.ID).Status, "a success of another business date does not count")
		require.Equal(t, now.Add(10*time.Second).UnixMilli(), f.heldUntil(run.ID), "held again")
		require.Empty(t, f.p.pushes)

		f.loadSucceeded(time.Date(2026, 3, 1, 17, 0, 0, 0, time.UTC)) // 01:00 of the 2nd in Shanghai
		f.tick(now.Add(7 * time.Second))
		require.Equal(t, store.RunPending, f.run(run.ID).Status, "not looked at before its hold ends")
		f.tick(now.Add(10 * time.Second))
		got = f.run(run.ID)
		require.Equal(t, store.RunRunning, got.Status, "started once the upstream of its date succeeded")
		require.Empty(t, got.Error, "no reason left")
		require.Len(t, f.p.pushes, 1)
		require.Empty(t, alarmsOfKind(t, st, store.AlarmRunWaitTimeout))
	})
}

// TestJobWaitsForAWorkflowRunOfItsDate: the awaited workflow's run of the
// business date must succeed; a workflow node's run of the job does not
// wait (the node has its own waits).
func TestJobWaitsForAWorkflowRunOfItsDate(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newWaitsFixture(t, st, []apitypes.WorkflowWait{{Workflow: &apitypes.WorkflowNameRef{App: "mkt", Name: "close"}}}, "", "skip")
		wfID, err := st.CreateWorkflow(ctx, store.Workflow{App: "mkt", Name: "close", TimeZone: "UTC", Enabled: true, FailurePolicy: "stop",
			Definition: `{"name":"close","app":"mkt","nodes":[{"key":"a","handler":"h"}]}`, NodeCount: 1, CreatedBy: "ops"})
		require.NoError(t, err)
		closeRun, _, err := st.CreateWorkflowRun(ctx, 1, store.NewWorkflowRun{WorkflowID: wfID, App: "mkt", RunKey: "date:2026-03-02",
			WorkflowVersion: 1, BusinessDate: "2026-03-02", TriggerKind: store.TriggerManual, Status: store.RunPending})
		require.NoError(t, err)

		manual := f.pending(firing, store.TriggerManual)
		node := f.pending(firing.Add(time.Second), store.TriggerWorkflow)
		f.tick(firing.Add(time.Second))
		require.Equal(t, store.RunRunning, f.run(node.ID).Status, "a node's run does not wait")
		got := f.run(manual.ID)
		require.Equal(t, store.RunPending, got.Status)
		require.Equal(t, "waiting for workflow mkt/close of business date 2026-03-02 (wait_for; times out at 2026-03-02T16:30:00Z)", got.Error,
			"the default timeout: 24h")

		_, err = st.DB().Exec(st.DB().Rebind(`UPDATE workflow_run SET status = 'succeeded' WHERE id = ?`), closeRun.ID)
		require.NoError(t, err)
		f.tick(firing.Add(6 * time.Second))
		require.Equal(t, store.RunRunning, f.run(manual.ID).Status)
	})
}

// TestJobWaitsTimeOut: at its deadline a run still waiting ends failed
// (on_timeout fail) or skipped (skip) with the reason, and raises one
// run_wait_timeout alarm (critical or warning) that two more ticks do not
// raise again; the last hold ends at the deadline rather than HoldRecheck
// later; a wait met after the deadline but before the run was checked
// still starts it.
func TestJobWaitsTimeOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ on, status, severity, action string }{
		{"", store.RunFailed, "critical", "fail"},
		{"skip", store.RunSkipped, "warning", "skip"},
	} {
		t.Run(tc.status, func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, st *store.Store) {
				ctx := context.Background()
				f := newWaitsFixture(t, st, []apitypes.WorkflowWait{loadRef()}, "8s", tc.on)
				run := f.fire()
				deadline := firing.Add(8 * time.Second)

				f.tick(firing.Add(5 * time.Second))
				require.Equal(t, deadline.UnixMilli(), f.heldUntil(run.ID), "held until the deadline, sooner than HoldRecheck")
				next, err := st.NextPendingAfter(ctx, firing.Add(5*time.Second).UnixMilli())
				require.NoError(t, err)
				require.Equal(t, deadline.UnixMilli(), next.Int64)

				for _, at := range []time.Time{deadline, deadline.Add(time.Second), deadline.Add(time.Minute)} {
					f.tick(at)
					got := f.run(run.ID)
					require.Equal(t, tc.status, got.Status)
					require.Equal(t, "waited 8s for up/load of business date 2026-03-02: timed out (on_timeout "+tc.action+")", got.Error)
					require.Equal(t, deadline.UnixMilli(), got.FinishedAt.Int64)
				}
				alarms := alarmsOfKind(t, st, store.AlarmRunWaitTimeout)
				require.Len(t, alarms, 1, "one alarm per run")
				require.Equal(t, tc.severity, alarms[0].Severity)
				require.Equal(t, "app", alarms[0].App)
				require.Equal(t, run.ID, alarms[0].RunID.Int64)
				require.Equal(t, "job app/report run "+strconv.FormatInt(run.ID, 10)+" (business date 2026-03-02) waited 8s for up/load and was "+map[string]string{"fail": "failed", "skip": "skipped"}[tc.action],
					alarms[0].Message)
				require.Empty(t, f.p.pushes)

				// Met after the deadline, before the run is checked: it starts.
				late := f.pending(firing.Add(-time.Hour), store.TriggerManual) // 23:30 of the 1st in Shanghai
				lateDeadline := firing.Add(-time.Hour + 8*time.Second)
				f.loadSucceeded(time.Date(2026, 3, 1, 15, 0, 0, 0, time.UTC)) // 23:00 of the 1st in Shanghai
				require.True(t, f.c.Now().After(lateDeadline))
				f.tick(deadline.Add(2 * time.Minute))
				require.Equal(t, store.RunRunning, f.run(late.ID).Status, "a start is never taken back")
				require.Len(t, alarmsOfKind(t, st, store.AlarmRunWaitTimeout), 1)
			})
		})
	}
}

// TestHeldRunCanBeCancelled: a held run is pending: a cancel ends it, and
// the leader neither starts it nor times it out afterwards.
func TestHeldRunCanBeCancelled(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newWaitsFixture(t, st, []apitypes.WorkflowWait{loadRef()}, "1m", "")
		run := f.fire()
		f.tick(firing.Add(time.Second))
		require.Equal(t, store.RunPending, f.run(run.ID).Status)

		_, cancelled, err := runstate.New(st).Cancel(ctx, run.ID, msg.New(msg.RunCancelledBy, "user", "ops"))
		require.NoError(t, err)
		require.True(t, cancelled)
		f.loadSucceeded(time.Date(2026, 3, 1, 17, 0, 0, 0, time.UTC))
		f.tick(firing.Add(10 * time.Second))
		f.tick(firing.Add(2 * time.Minute))
		got := f.run(run.ID)
		require.Equal(t, store.RunCancelled, got.Status)
		require.Equal(t, "cancelled by ops", got.Error)
		require.Empty(t, f.p.pushes)
		require.Empty(t, alarmsOfKind(t, st, store.AlarmRunWaitTimeout))
	})
}
