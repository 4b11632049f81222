package workflowrun_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// fixture is one workflow of app "fin" over jobs of the same names as its
// nodes, and an engine leading with epoch 1.
type fixture struct {
	t     *testing.T
	st    *store.Store
	e     *workflowrun.Engine
	epoch int64
	wf    store.Workflow
}

var ctx = context.Background()

func newFixture(t *testing.T, st *store.Store, def workflow.Definition) *fixture {
	t.Helper()
	for i, n := range def.Nodes {
		if n.Job == nil && n.Handler == "" {
			createJob(t, st, n.Key, `{"ledger":"main"}`)
			def.Nodes[i].Job = &workflow.JobRef{Name: n.Key}
		}
	}
	return storeFixture(t, st, def, nil)
}

// storeFixture stores def as workflow fin/eod with the jobs of its inline
// nodes inline, and makes an engine leading with epoch 1.
func storeFixture(t *testing.T, st *store.Store, def workflow.Definition, inline []store.InlineJob) *fixture {
	t.Helper()
	ok, err := st.ClaimEpoch(ctx, 1, "test")
	require.NoError(t, err)
	require.True(t, ok)
	def.App, def.Name = "fin", "eod"
	_, err = workflow.Validate(def)
	require.NoError(t, err)
	b, err := json.Marshal(def.WithDefaults())
	require.NoError(t, err)
	id, err := st.CreateWorkflow(ctx, store.Workflow{App: "fin", Name: "eod", TimeZone: "UTC", Enabled: true,
		FailurePolicy: string(def.WithDefaults().FailurePolicy), Definition: string(b), NodeCount: len(def.Nodes), CreatedBy: "ops", Inline: inline})
	require.NoError(t, err)
	wf, err := st.Workflow(ctx, id)
	require.NoError(t, err)
	e, err := workflowrun.New(workflowrun.Config{}, st)
	require.NoError(t, err)
	return &fixture{t: t, st: st, e: e, epoch: 1, wf: wf}
}

func createJob(t *testing.T, st *store.Store, name, params string) int64 {
	t.Helper()
	v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "fin", Name: name, Handler: "h", Cron: "0 3 1 1 *", Params: params, SlotCount: 2}}, time.Now())
	require.NoError(t, err)
	id, err := st.CreateJob(ctx, v.Job)
	require.NoError(t, err)
	return id
}

// trigger creates the workflow run of key (idempotent).
func (f *fixture) trigger(key string) store.WorkflowRun {
	f.t.Helper()
	r, _, err := f.st.CreateWorkflowRun(ctx, f.epoch, store.NewWorkflowRun{
		WorkflowID: f.wf.ID, App: f.wf.App, RunKey: key, WorkflowVersion: f.wf.Version, BusinessDate: "2026-03-02",
		TriggerKind: store.TriggerManual, Status: store.RunPending, Params: `{"region":"eu"}`, CreatedBy: "ops",
	})
	require.NoError(f.t, err)
	return r
}

func (f *fixture) pass() {
	f.t.Helper()
	require.NoError(f.t, f.e.Pass(ctx, f.epoch))
}

// states are the statuses of the run's latest node runs, by node.
func (f *fixture) states(runID int64) map[string]string {
	f.t.Helper()
	all, err := f.st.NodeRuns(ctx, runID)
	require.NoError(f.t, err)
	out := map[string]string{}
	for k, n := range store.LatestNodeRuns(all) {
		out[k] = n.Status
	}
	return out
}

func (f *fixture) node(runID int64, key string) store.NodeRun {
	f.t.Helper()
	all, err := f.st.NodeRuns(ctx, runID)
	require.NoError(f.t, err)
	n, ok := store.LatestNodeRuns(all)[key]
	require.True(f.t, ok, "node %s has no node run", key)
	return n
}

// settle ends the job run of node key as the run state machine would:
// pending → running → to.
func (f *fixture) settle(runID int64, key, to string) {
	f.t.Helper()
	n := f.node(runID, key)
	require.True(f.t, n.JobRunID.Valid, "node %s has no job run", key)
	now := sql.NullInt64{Int64: time.Now().UnixMilli(), Valid: true}
	ok, err := f.st.TransitionRun(ctx, store.RunTransition{ID: n.JobRunID.Int64, From: store.RunPending, To: store.RunRunning, StartedAt: now})
	require.NoError(f.t, err)
	require.True(f.t, ok)
	var reason msg.Msg
	if to != store.RunSucceeded {
		reason = msg.New(msg.RunSlotsFailed, "failed", 2)
	}
	ok, err = f.st.TransitionRun(ctx, store.RunTransition{ID: n.JobRunID.Int64, From: store.RunRunning, To: to, FinishedAt: now, Reason: reason})
	require.NoError(f.t, err)
	require.True(f.t, ok)
}

func (f *fixture) run(id int64) store.WorkflowRun {
	f.t.Helper()
	r, err := f.st.WorkflowRun(ctx, id)
	require.NoError(f.t, err)
	return r
}

func count(t *testing.T, st *store.Store, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, st.DB().QueryRow(q, args...).Scan(&n))
	return n
}

func diamond(policy workflow.FailurePolicy) workflow.Definition {
	return workflow.Definition{FailurePolicy: policy,
		Nodes: []workflow.Node{{Key: "a"}, {Key: "b"}, {Key: "c"}, {Key: "d"}},
		Edges: []workflow.Edge{{From: "a", To: "b"}, {From: "a", To: "c"}, {From: "b", To: "d"}, {From: "c", To: "d"}}}
}

func TestDiamondRunsEachNodeOnceInOrder(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, diamond(workflow.Stop))
		_, err := st.DB().Exec(`UPDATE job SET dedup_scope = 'settle:{date}' WHERE name = 'a'`)
		require.NoError(t, err)
		r := f.trigger("2026-03-02T18:00:00.000Z")

		f.pass()
		require.Equal(t, map[string]string{"a": "running"}, f.states(r.ID))
		require.Equal(t, store.RunRunning, f.run(r.ID).Status)
		a := f.node(r.ID, "a")
		job, err := st.Run(ctx, a.JobRunID.Int64)
		require.NoError(t, err)
		var scope string
		require.NoError(t, st.DB().QueryRow(`SELECT dedup_scope FROM job_run WHERE id = ?`, job.ID).Scan(&scope))
		require.Equal(t, "settle:2026-03-02", scope, "{date} is the business date")
		require.Equal(t, store.TriggerWorkflow, job.TriggerKind)
		require.Equal(t, "a", job.JobName)
		require.Equal(t, 2, job.SlotCount)
		var params map[string]any
		require.NoError(t, json.Unmarshal([]byte(job.Params), &params))
		require.Equal(t, map[string]any{"ledger": "main", "region": "eu"}, params)
		require.JSONEq(t, fmt.Sprintf(`{"run_id":%d,"node":"a","business_date":"2026-03-02"}`, r.ID), job.Workflow.String)

		f.pass() // nothing new while a runs
		require.Equal(t, map[string]string{"a": "running"}, f.states(r.ID))

		f.settle(r.ID, "a", store.RunSucceeded)
		f.pass()
		require.Equal(t, map[string]string{"a": "succeeded", "b": "running", "c": "running"}, f.states(r.ID))
		f.settle(r.ID, "b", store.RunSucceeded)
		f.pass()
		require.Equal(t, map[string]string{"a": "succeeded", "b": "succeeded", "c": "running"}, f.states(r.ID), "d waits for c")
		f.settle(r.ID, "c", store.RunSucceeded)
		f.pass()
		require.Equal(t, "running", f.states(r.ID)["d"])
		f.settle(r.ID, "d", store.RunSucceeded)
		f.pass()
		end := f.run(r.ID)
		require.Equal(t, store.RunSucceeded, end.Status)
		require.True(t, end.FinishedAt.Valid)
		f.pass() // an ended run is left alone

		require.Equal(t, 4, count(t, st, `SELECT COUNT(*) FROM workflow_node_run WHERE workflow_run_id = ?`, r.ID))
		require.Equal(t, 4, count(t, st, `SELECT COUNT(*) FROM job_run WHERE trigger_kind = 'workflow'`))
		// d started after b and c ended: its job run is newer than both.
		var order []string
		rows, err := st.DB().Query(`SELECT n.node_key FROM workflow_node_run n JOIN job_run j ON j.id = n.job_run_id ORDER BY j.id`)
		require.NoError(t, err)
		for rows.Next() {
			var k string
			require.NoError(t, rows.Scan(&k))
			order = append(order, k)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		require.Equal(t, []string{"a", "b", "c", "d"}, order)
		s := f.e.Stats()
		require.Equal(t, int64(4), s.JobRuns)
		require.Equal(t, int64(4), s.NodesEnded)
		require.Equal(t, int64(1), s.RunsEnded)
	})
}

func TestStartRulesUnderFailurePolicyContinue(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		// a and b are roots; c (one_success) after a and b; d (all_done)
		// after a; e (all_success) after a.
		f := newFixture(t, st, workflow.Definition{FailurePolicy: workflow.Continue,
			Nodes: []workflow.Node{{Key: "a"}, {Key: "b"}, {Key: "c", Start: workflow.OneSuccess}, {Key: "d", Start: workflow.AllDone}, {Key: "e"}},
			Edges: []workflow.Edge{{From: "a", To: "c"}, {From: "b", To: "c"}, {From: "a", To: "d"}, {From: "a", To: "e"}}})
		r := f.trigger("k1")
		f.pass()
		require.Equal(t, map[string]string{"a": "running", "b": "running"}, f.states(r.ID))

		f.settle(r.ID, "a", store.RunFailed)
		f.pass()
		require.Equal(t, map[string]string{"a": "failed", "b": "running", "d": "running", "e": "skipped"}, f.states(r.ID),
			"all_done d starts after a failed; all_success e is skipped; one_success c waits for b")
		e := f.node(r.ID, "e")
		require.Equal(t, msg.FlowNodeSkippedRule, e.ReasonMsg.Code)
		require.Contains(t, e.Reason, "parent a")
		require.Equal(t, msg.FlowNodeJobRunEnded, f.node(r.ID, "a").ReasonMsg.Code)

		f.settle(r.ID, "b", store.RunSucceeded)
		f.pass()
		require.Equal(t, "running", f.states(r.ID)["c"], "one_success c starts once b succeeded")
		f.settle(r.ID, "c", store.RunSucceeded)
		f.settle(r.ID, "d", store.RunSucceeded)
		f.pass()
		end := f.run(r.ID)
		require.Equal(t, store.RunPartiallyFailed, end.Status)
		require.Equal(t, msg.FlowRunPartlyFailed, end.ReasonMsg.Code)
		require.Contains(t, end.Reason, "1 node(s) failed or were cancelled: a")
	})
}

func TestOneSuccessIsSkippedWhenEveryParentFailed(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, workflow.Definition{FailurePolicy: workflow.Continue,
			Nodes: []workflow.Node{{Key: "a"}, {Key: "b"}, {Key: "c", Start: workflow.OneSuccess}},
			Edges: []workflow.Edge{{From: "a", To: "c"}, {From: "b", To: "c"}}})
		r := f.trigger("k1")
		f.pass()
		f.settle(r.ID, "a", store.RunFailed)
		f.pass()
		require.NotContains(t, f.states(r.ID), "c", "c waits for b")
		f.settle(r.ID, "b", store.RunCancelled)
		f.pass()
		require.Equal(t, map[string]string{"a": "failed", "b": "cancelled", "c": "skipped"}, f.states(r.ID))
		end := f.run(r.ID)
		require.Equal(t, store.RunFailed, end.Status)
		require.Contains(t, end.Reason, "2 node(s) failed or were cancelled: a, b")
	})
}

func TestFailurePolicyStopSkipsWhatHasNotStarted(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, diamond(workflow.Stop))
		r := f.trigger("k1")
		f.pass()
		f.settle(r.ID, "a", store.RunSucceeded)
		f.pass()
		f.settle(r.ID, "b", store.RunFailed)
		f.pass()
		require.Equal(t, map[string]string{"a": "succeeded", "b": "failed", "c": "running", "d": "skipped"}, f.states(r.ID))
		d := f.node(r.ID, "d")
		require.Equal(t, msg.FlowNodeSkippedStop, d.ReasonMsg.Code)
		require.False(t, d.JobRunID.Valid)
		require.Equal(t, store.RunRunning, f.run(r.ID).Status, "c still runs: the run has not ended")
		f.settle(r.ID, "c", store.RunSucceeded)
		f.pass()
		end := f.run(r.ID)
		require.Equal(t, store.RunFailed, end.Status, "the only leaf d was skipped")
		require.Equal(t, msg.FlowRunFailed, end.ReasonMsg.Code)
		require.Equal(t, 3, count(t, st, `SELECT COUNT(*) FROM job_run WHERE trigger_kind = 'workflow'`))
	})
}

func TestFailurePolicyContinueRunsTheOtherBranch(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		// a → b → d and a → c → e: b fails, c and e go on.
		f := newFixture(t, st, workflow.Definition{FailurePolicy: workflow.Continue,
			Nodes: []workflow.Node{{Key: "a"}, {Key: "b"}, {Key: "c"}, {Key: "d"}, {Key: "e"}},
			Edges: []workflow.Edge{{From: "a", To: "b"}, {From: "a", To: "c"}, {From: "b", To: "d"}, {From: "c", To: "e"}}})
		r := f.trigger("k1")
		f.pass()
		f.settle(r.ID, "a", store.RunSucceeded)
		f.pass()
		f.settle(r.ID, "b", store.RunPartiallyFailed)
		f.pass()
		require.Equal(t, map[string]string{"a": "succeeded", "b": "failed", "c": "running", "d": "skipped"}, f.states(r.ID))
		f.settle(r.ID, "c", store.RunSucceeded)
		f.pass()
		f.settle(r.ID, "e", store.RunSucceeded)
		f.pass()
		require.Equal(t, store.RunPartiallyFailed, f.run(r.ID).Status)
	})
}

func TestNodesWithoutARunnableJobFailAtOnce(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, workflow.Definition{FailurePolicy: workflow.Continue,
			Nodes: []workflow.Node{{Key: "gone"}, {Key: "off"}, {Key: "inline", Handler: "h"}, {Key: "after", Start: workflow.AllDone}},
			Edges: []workflow.Edge{{From: "gone", To: "after"}, {From: "off", To: "after"}, {From: "inline", To: "after"}}})
		gone, err := st.JobKeys(ctx, nil, []store.JobKey{{App: "fin", Name: "gone"}, {App: "fin", Name: "off"}})
		require.NoError(t, err)
		require.Len(t, gone, 2)
		for _, j := range gone {
			if j.Name == "gone" {
				require.NoError(t, st.DeleteJob(ctx, j.ID))
			} else {
				_, err := st.DB().Exec(`UPDATE job SET enabled = 0 WHERE id = ?`, j.ID)
				require.NoError(t, err)
			}
		}
		r := f.trigger("k1")
		f.pass()
		require.Equal(t, map[string]string{"gone": "failed", "off": "failed", "inline": "failed", "after": "running"}, f.states(r.ID),
			"one pass: the three fail at once and all_done after starts")
		require.Equal(t, msg.FlowNodeJobMissing, f.node(r.ID, "gone").ReasonMsg.Code)
		require.Equal(t, msg.FlowNodeJobDisabled, f.node(r.ID, "off").ReasonMsg.Code)
		require.Equal(t, msg.FlowNodeInline, f.node(r.ID, "inline").ReasonMsg.Code)
		f.settle(r.ID, "after", store.RunSucceeded)
		f.pass()
		require.Equal(t, store.RunPartiallyFailed, f.run(r.ID).Status)
	})
}

func TestTriggerTwiceMakesOneRun(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, diamond(workflow.Stop))
		r1 := f.trigger("2026-03-02T18:00:00.000Z")
		r2 := f.trigger("2026-03-02T18:00:00.000Z")
		require.Equal(t, r1.ID, r2.ID)
		f.pass()
		f.pass()
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM workflow_run`))
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM workflow_node_run`))
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM job_run`))
	})
}

// TestLeaderChangeMidRun: the engine of epoch 1 drives a run, epoch 2 is
// claimed, the first engine's writes are refused, and the second (and
// several passes of it at once) creates each node run and job run once.
func TestLeaderChangeMidRun(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, diamond(workflow.Stop))
		r := f.trigger("k1")
		f.pass()
		f.settle(r.ID, "a", store.RunSucceeded)

		ok, err := st.ClaimEpoch(ctx, 2, "successor")
		require.NoError(t, err)
		require.True(t, ok)
		require.ErrorIs(t, f.e.Pass(ctx, 1), store.ErrStaleEpoch)
		require.Equal(t, map[string]string{"a": "running"}, f.states(r.ID), "the deposed engine wrote nothing")
		require.Equal(t, int64(1), f.e.Stats().StaleAborts)

		e2, err := workflowrun.New(workflowrun.Config{}, st)
		require.NoError(t, err)
		passes := 4
		if st.Dialect() == sqlfiles.SQLite {
			passes = 2 // one writer: they take turns
		}
		var wg sync.WaitGroup
		errs := make(chan error, passes+1)
		for range passes {
			wg.Go(func() { errs <- e2.Pass(ctx, 2) })
		}
		wg.Go(func() { errs <- f.e.Pass(ctx, 1) })
		wg.Wait()
		close(errs)
		stale := 0
		for err := range errs {
			if err != nil {
				require.ErrorIs(t, err, store.ErrStaleEpoch)
				stale++
			}
		}
		require.Equal(t, 1, stale, "only the deposed engine is refused")
		require.Equal(t, map[string]string{"a": "succeeded", "b": "running", "c": "running"}, f.states(r.ID))
		require.Equal(t, 3, count(t, st, `SELECT COUNT(*) FROM workflow_node_run`))
		require.Equal(t, 3, count(t, st, `SELECT COUNT(*) FROM job_run`))
		require.Equal(t, 0, count(t, st, `SELECT COUNT(*) FROM workflow_node_run WHERE status = 'running' AND job_run_id IS NULL`))
		require.Equal(t, 2, count(t, st, `SELECT COUNT(*) FROM workflow_node_run WHERE epoch = 2`))
		require.Equal(t, 2, count(t, st, `SELECT COUNT(*) FROM job_run WHERE epoch = 2`))

		f.epoch, f.e = 2, e2
		f.settle(r.ID, "b", store.RunSucceeded)
		f.settle(r.ID, "c", store.RunSucceeded)
		f.pass()
		f.settle(r.ID, "d", store.RunSucceeded)
		f.pass()
		require.Equal(t, store.RunSucceeded, f.run(r.ID).Status)
		require.Equal(t, 4, count(t, st, `SELECT COUNT(*) FROM job_run`))
	})
}

// waker counts wakes (the scheduler).
type waker struct {
	mu sync.Mutex
	n  int
}

func (w *waker) Wake() { w.mu.Lock(); w.n++; w.mu.Unlock() }

func (w *waker) count() int { w.mu.Lock(); defer w.mu.Unlock(); return w.n }

// TestLeadLoop: the loop passes when woken (a slot result), wakes the
// scheduler after creating job runs, stops when its context ends and
// steps down by itself once a larger epoch is recorded; goleak (TestMain)
// checks that nothing is left running.
func TestLeadLoop(t *testing.T) {
	st := storetest.Open(t, sqlfiles.MySQL)
	f := newFixture(t, st, diamond(workflow.Stop))
	sched := &waker{}
	e, err := workflowrun.New(workflowrun.Config{PollInterval: time.Hour, Scheduler: sched}, st)
	require.NoError(t, err)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); e.Lead(lctx, 1) }()

	r := f.trigger("k1")
	e.Wake()
	testenv.WaitFor(t, 10*time.Second, func() (bool, error) { return len(f.states(r.ID)) == 1, nil }, "node a started")
	testenv.WaitFor(t, 10*time.Second, func() (bool, error) { return sched.count() >= 1, nil }, "scheduler woken")
	f.settle(r.ID, "a", store.RunSucceeded)
	e.SlotResult(store.SlotOutcome{})
	testenv.WaitFor(t, 10*time.Second, func() (bool, error) { return len(f.states(r.ID)) == 3, nil }, "b and c started")
	cancel()
	<-done

	// A new term whose epoch is then superseded: the loop returns alone.
	ok, err := st.ClaimEpoch(ctx, 2, "test")
	require.NoError(t, err)
	require.True(t, ok)
	before := e.Stats().Passes
	done = make(chan struct{})
	go func() { defer close(done); e.Lead(ctx, 2) }()
	testenv.WaitFor(t, 10*time.Second, func() (bool, error) { return e.Stats().Passes > before, nil }, "a pass of epoch 2")
	ok, err = st.ClaimEpoch(ctx, 3, "other")
	require.NoError(t, err)
	require.True(t, ok)
	f.settle(r.ID, "b", store.RunSucceeded) // something to write: the fence refuses it
	e.Wake()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not step down after epoch 3 was recorded")
	}
	require.Equal(t, map[string]string{"a": "succeeded", "b": "running", "c": "running"}, f.states(r.ID))
	require.Equal(t, 1, count(t, st, fmt.Sprintf(`SELECT COUNT(*) FROM workflow_run WHERE id = %d AND status = 'running'`, r.ID)))
}
