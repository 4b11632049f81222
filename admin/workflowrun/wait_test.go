package workflowrun_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// waitFixture is "load → settle → report" (and "settle → cleanup",
// all_done) in app fin, settle waiting for the job fin/upstream and the
// workflow mkt/close of the run's business date (2026-03-02).
type waitFixture struct {
	*fixture
	upstream int64 // the job fin/upstream
	close    int64 // the run of workflow mkt/close of 2026-03-02
}

func newWaitFixture(t *testing.T, st *store.Store, policy workflow.FailurePolicy, timeout string, on workflow.OnTimeout) *waitFixture {
	t.Helper()
	def := workflow.Definition{FailurePolicy: policy,
		Nodes: []workflow.Node{{Key: "load"}, {Key: "settle", WaitFor: []workflow.WaitRef{
			{Job: &workflow.NameRef{Name: "upstream"}},
			{Workflow: &workflow.NameRef{App: "mkt", Name: "close"}},
		}, WaitTimeout: timeout, OnTimeout: on}, {Key: "report"}, {Key: "cleanup", Start: workflow.AllDone}},
		Edges: []workflow.Edge{{From: "load", To: "settle"}, {From: "settle", To: "report"}, {From: "settle", To: "cleanup"}}}
	f := newFixture(t, st, def)
	up := createJob(t, st, "upstream", "{}")
	wfID, err := st.CreateWorkflow(ctx, store.Workflow{App: "mkt", Name: "close", TimeZone: "UTC", Enabled: true, FailurePolicy: "stop",
		Definition: `{"name":"close","app":"mkt","nodes":[{"key":"a","handler":"h"}]}`, NodeCount: 1, CreatedBy: "ops"})
	require.NoError(t, err)
	closeRun, _, err := st.CreateWorkflowRun(ctx, 1, store.NewWorkflowRun{WorkflowID: wfID, App: "mkt", RunKey: "date:2026-03-02",
		WorkflowVersion: 1, BusinessDate: "2026-03-02", TriggerKind: store.TriggerManual, Status: store.RunPending})
	require.NoError(t, err)
	return &waitFixture{fixture: f, upstream: up, close: closeRun.ID}
}

// untilWaiting triggers a run and drives it until settle waits.
func (f *waitFixture) untilWaiting() store.WorkflowRun {
	f.t.Helper()
	r := f.trigger("k1")
	f.pass()
	f.settle(r.ID, "load", store.RunSucceeded)
	f.pass()
	require.Equal(f.t, store.NodeWaiting, f.node(r.ID, "settle").Status)
	return r
}

// upstreamSucceeded records a succeeded cron run of fin/upstream at.
func (f *waitFixture) upstreamSucceeded(at time.Time) {
	f.t.Helper()
	run, created, err := f.st.InsertRun(ctx, f.epoch, store.NewRun{JobID: f.upstream, ScheduledAt: at.UnixMilli(),
		TriggerKind: store.TriggerCron, Status: store.RunPending, SlotCount: 1})
	require.NoError(f.t, err)
	require.True(f.t, created)
	_, err = f.st.DB().Exec(`UPDATE job_run SET status = 'succeeded' WHERE id = ?`, run.ID)
	require.NoError(f.t, err)
}

func (f *waitFixture) closeSucceeded() {
	f.t.Helper()
	_, err := f.st.DB().Exec(`UPDATE workflow_run SET status = 'succeeded' WHERE id = ?`, f.close)
	require.NoError(f.t, err)
}

// age moves the start of node key's wait back by d: the database clock
// cannot be stubbed, the node run's creation can.
func (f *waitFixture) age(runID int64, key string, d time.Duration) {
	f.t.Helper()
	_, err := f.st.DB().Exec(`UPDATE workflow_node_run SET created_at = created_at - ? WHERE workflow_run_id = ? AND node_key = ?`,
		d.Milliseconds(), runID, key)
	require.NoError(f.t, err)
}

func (f *waitFixture) alarms() []store.Alarm {
	f.t.Helper()
	all, err := f.st.Alarms(ctx, 0, 50)
	require.NoError(f.t, err)
	var out []store.Alarm
	for _, a := range all {
		if a.Kind == store.AlarmWorkflowWaitTimeout {
			out = append(out, a)
		}
	}
	return out
}

// TestWaitingNodeStartsWhenItsRunsSucceeded: settle, its parent done,
// waits (no job run) with a reason naming what it waits for; a run of
// another day changes nothing, the upstream job's run of the date narrows
// the reason, the other workflow's succeeded run starts it.
func TestWaitingNodeStartsWhenItsRunsSucceeded(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newWaitFixture(t, st, workflow.Stop, "2h", "")
		r := f.untilWaiting()
		settle := f.node(r.ID, "settle")
		require.Equal(t, store.NodeWaiting, settle.Status)
		require.False(t, settle.JobRunID.Valid, "no job run while it waits")
		require.Equal(t, msg.FlowNodeWaiting, settle.ReasonMsg.Code)
		deadline := time.UnixMilli(settle.CreatedAt).Add(2 * time.Hour).UTC().Format(time.RFC3339)
		require.Equal(t, "waiting for fin/upstream, workflow mkt/close of 2026-03-02 (times out at "+deadline+")", settle.Reason)

		f.upstreamSucceeded(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) // the day before
		f.pass()
		require.Contains(t, f.node(r.ID, "settle").Reason, "waiting for fin/upstream, workflow mkt/close of")
		f.upstreamSucceeded(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
		f.pass()
		settle = f.node(r.ID, "settle")
		require.Equal(t, store.NodeWaiting, settle.Status)
		require.Contains(t, settle.Reason, "waiting for workflow mkt/close of 2026-03-02")

		f.closeSucceeded()
		f.pass()
		settle = f.node(r.ID, "settle")
		require.Equal(t, store.RunRunning, settle.Status)
		require.True(t, settle.JobRunID.Valid)
		require.Empty(t, settle.Reason)
		f.pass() // nothing twice
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM workflow_node_run WHERE workflow_run_id = ? AND node_key = 'settle'`, r.ID))
		require.Equal(t, 2, count(t, st, `SELECT COUNT(*) FROM job_run WHERE trigger_kind = 'workflow'`))

		f.settle(r.ID, "settle", store.RunSucceeded)
		f.pass()
		f.settle(r.ID, "report", store.RunSucceeded)
		f.settle(r.ID, "cleanup", store.RunSucceeded)
		f.pass()
		require.Equal(t, store.RunSucceeded, f.run(r.ID).Status)
		require.Empty(t, f.alarms())
	})
}

// TestWaitTimeout: at its deadline a waiting node fails (on_timeout fail)
// or is skipped (skip), raising one workflow_wait_timeout alarm; its
// children follow their start rules.
func TestWaitTimeout(t *testing.T) {
	for _, tc := range []struct {
		on       workflow.OnTimeout
		status   string
		severity string
		report   string // all_success child
		cleanup  string // all_done child
	}{
		{workflow.TimeoutFail, store.RunFailed, "critical", store.RunSkipped, store.RunRunning},
		{workflow.TimeoutSkip, store.RunSkipped, "warning", store.RunSkipped, store.RunRunning},
	} {
		t.Run(string(tc.on), func(t *testing.T) {
			storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
				f := newWaitFixture(t, st, workflow.Continue, "1h", tc.on)
				r := f.untilWaiting()
				f.upstreamSucceeded(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
				f.age(r.ID, "settle", 59*time.Minute)
				f.pass()
				require.Equal(t, store.NodeWaiting, f.node(r.ID, "settle").Status, "not yet")

				f.age(r.ID, "settle", 2*time.Minute)
				f.pass()
				settle := f.node(r.ID, "settle")
				require.Equal(t, tc.status, settle.Status)
				require.Equal(t, msg.FlowNodeWaitTimeout, settle.ReasonMsg.Code)
				require.Equal(t, "waited 1h for workflow mkt/close of 2026-03-02: timed out", settle.Reason)
				require.False(t, settle.JobRunID.Valid)
				require.Equal(t, tc.report, f.states(r.ID)["report"])
				require.Equal(t, tc.cleanup, f.states(r.ID)["cleanup"])

				f.closeSucceeded() // too late: an end is not taken back
				f.pass()
				f.pass()
				require.Equal(t, tc.status, f.node(r.ID, "settle").Status)
				alarms := f.alarms()
				require.Len(t, alarms, 1, "one alarm, however many passes")
				a := alarms[0]
				require.Equal(t, tc.severity, a.Severity)
				require.Equal(t, "fin", a.App)
				require.Equal(t, msg.AlarmWorkflowWaitTimeout, a.Msg.Code)
				require.Contains(t, a.Message, "workflow fin/eod run ")
				require.Contains(t, a.Message, "(business date 2026-03-02): node settle waited 1h for workflow mkt/close and was "+tc.status)

				f.settle(r.ID, "cleanup", store.RunSucceeded)
				f.pass()
				want := store.RunPartiallyFailed // the leaf cleanup succeeded
				if tc.on == workflow.TimeoutSkip {
					want = store.RunSucceeded // nothing failed
				}
				require.Equal(t, want, f.run(r.ID).Status)
			})
		})
	}
}

// TestStopSkipsAWaitingNode: under the failure policy stop, a node that
// fails skips the node that waits (it never started) and the run ends.
func TestStopSkipsAWaitingNode(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		def := workflow.Definition{FailurePolicy: workflow.Stop, Nodes: []workflow.Node{
			{Key: "load"}, {Key: "settle", WaitFor: []workflow.WaitRef{{Workflow: &workflow.NameRef{App: "mkt", Name: "close"}}}}}}
		f := newFixture(t, st, def)
		r := f.trigger("k1")
		f.pass()
		require.Equal(t, map[string]string{"load": store.RunRunning, "settle": store.NodeWaiting}, f.states(r.ID))
		f.settle(r.ID, "load", store.RunFailed)
		f.pass()
		settle := f.node(r.ID, "settle")
		require.Equal(t, store.RunSkipped, settle.Status)
		require.Equal(t, msg.FlowNodeSkippedStop, settle.ReasonMsg.Code)
		require.Equal(t, store.RunFailed, f.run(r.ID).Status)
	})
}

// TestLeaderChangeMidWait: a deposed leader cannot move a waiting node;
// its successor, passing several times at once once the waits are met,
// starts it once: one node run, one job run.
func TestLeaderChangeMidWait(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newWaitFixture(t, st, workflow.Stop, "", "")
		r := f.untilWaiting()
		require.Equal(t, store.NodeWaiting, f.node(r.ID, "settle").Status)
		f.upstreamSucceeded(time.Date(2026, 3, 2, 23, 59, 0, 0, time.UTC))
		f.closeSucceeded()

		ok, err := st.ClaimEpoch(ctx, 2, "successor")
		require.NoError(t, err)
		require.True(t, ok)
		require.ErrorIs(t, f.e.Pass(ctx, 1), store.ErrStaleEpoch)
		require.Equal(t, store.NodeWaiting, f.node(r.ID, "settle").Status, "the deposed engine wrote nothing")

		e2, err := workflowrun.New(workflowrun.Config{}, st)
		require.NoError(t, err)
		passes := 4
		if st.Dialect() == sqlfiles.SQLite {
			passes = 2
		}
		var wg sync.WaitGroup
		errs := make(chan error, passes)
		for range passes {
			wg.Go(func() { errs <- e2.Pass(ctx, 2) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		settle := f.node(r.ID, "settle")
		require.Equal(t, store.RunRunning, settle.Status)
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM workflow_node_run WHERE workflow_run_id = ? AND node_key = 'settle'`, r.ID))
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM job_run r JOIN job j ON j.id = r.job_id WHERE j.name = 'settle'`))
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM job_run WHERE epoch = 2`))
	})
}
