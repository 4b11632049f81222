package workflowrun

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// decider applies the decisions on one workflow run inside one fenced
// transaction.
type decider struct {
	e     *Engine
	tx    *store.Tx
	epoch int64
	g     *workflow.Graph
	res   *Result
	run   store.WorkflowRun
	nodes map[string]store.NodeRun // the latest node run of each node
	again map[string]bool          // the nodes the latest rerun runs again
	now   int64
}

// apply moves the run on; gerr is the error of its graph (an invalid or
// missing definition), which fails the run.
func (d *decider) apply(ctx context.Context, id int64, gerr error) error {
	run, err := d.tx.LockWorkflowRun(ctx, id)
	if err != nil {
		return err
	}
	if run.Status != store.RunPending && run.Status != store.RunRunning {
		return nil // ended (by another pass, or cancelled)
	}
	d.run = run
	if run.Status == store.RunPending && run.BackfillID > 0 {
		// A backfill starts at most its parallelism of runs at a time; the
		// pass drives runs oldest first, which is the backfill's order.
		b, err := d.tx.Backfill(ctx, run.BackfillID)
		if err != nil {
			return err
		}
		running, err := d.tx.RunningInBackfill(ctx, b.ID)
		if err != nil {
			return err
		}
		if running >= b.Parallel {
			// It waits for one of them to end, and says so (written once:
			// the reason does not change while it waits).
			why := msg.New(msg.FlowRunWaitsBackfill, "backfill", b.ID, "parallel", b.Parallel)
			if run.Reason == why.String() {
				return nil
			}
			return d.tx.SetPendingReason(ctx, id, why)
		}
	}
	if run.Status == store.RunPending {
		if _, err := d.tx.TransitionWorkflowRun(ctx, store.StatusTransition{ID: id, From: store.RunPending, To: store.RunRunning}); err != nil {
			return err
		}
		d.run.Status = store.RunRunning
	}
	if gerr != nil {
		return d.end(ctx, store.RunFailed, msg.New(msg.FlowRunInvalid, "version", run.WorkflowVersion, "error", gerr.Error()))
	}
	if d.now, err = d.tx.Now(ctx); err != nil {
		return err
	}
	all, err := d.tx.NodeRuns(ctx, id)
	if err != nil {
		return err
	}
	d.nodes = store.LatestNodeRuns(all)
	if d.again, err = rerunNodes(d.run); err != nil {
		return err
	}
	if err := d.endSettledNodes(ctx); err != nil {
		return err
	}
	if err := d.checkWaiting(ctx); err != nil {
		return err
	}
	// Apply decisions until one changes nothing: a node that fails at once
	// (its job is gone) may unblock or skip others. Each round ends at
	// least one node, so the rounds are bounded by the nodes.
	for range d.g.Len() + 1 {
		dec := d.g.Decide(d.states())
		if dec.Empty() {
			return nil
		}
		for _, s := range dec.Skip {
			if err := d.skip(ctx, s); err != nil {
				return err
			}
		}
		if dec.Finished { // with its skips applied: every node has ended
			status, reason := outcome(dec.Outcome)
			return d.end(ctx, status, reason)
		}
		for _, key := range dec.Ready {
			if err := d.start(ctx, key); err != nil {
				return err
			}
		}
	}
	return nil
}

// states are the node states a decision reads: a node without a node run
// is pending, and so is a node the run's latest rerun runs again that has
// no node run of that rerun yet.
func (d *decider) states() map[string]workflow.State {
	out := make(map[string]workflow.State, len(d.nodes))
	for k, n := range d.nodes {
		if n.Rerun < d.run.Reruns && d.again[k] {
			continue
		}
		out[k] = workflow.State(n.Status)
	}
	return out
}

// rerunNodes reads the nodes the run's latest rerun runs again.
func rerunNodes(r store.WorkflowRun) (map[string]bool, error) {
	if r.Reruns == 0 || !r.RerunNodes.Valid {
		return nil, nil
	}
	var keys []string
	if err := json.Unmarshal([]byte(r.RerunNodes.String), &keys); err != nil {
		return nil, fmt.Errorf("workflow run %d: rerun nodes: %w", r.ID, err)
	}
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out, nil
}

// endSettledNodes ends the running node runs whose job run has ended.
func (d *decider) endSettledNodes(ctx context.Context) error {
	var ids []int64
	for _, n := range d.nodes {
		if n.Status == store.RunRunning && n.JobRunID.Valid {
			ids = append(ids, n.JobRunID.Int64)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	jobs, err := d.tx.JobRunStatuses(ctx, ids)
	if err != nil {
		return err
	}
	for k, n := range d.nodes {
		if n.Status != store.RunRunning || !n.JobRunID.Valid {
			continue
		}
		j, ok := jobs[n.JobRunID.Int64]
		if !ok {
			// The job run was removed (retention): the node cannot end
			// otherwise.
			j = store.JobRunStatus{ID: n.JobRunID.Int64, Status: store.RunFailed, Error: "the job run no longer exists"}
		}
		to, reason, ended := nodeEnd(j)
		if !ended {
			continue
		}
		if err := d.transitionNode(ctx, k, to, reason); err != nil {
			return err
		}
	}
	return nil
}

// nodeEnd maps a job run's status to its node's: ended is false while the
// job run is pending or running.
func nodeEnd(j store.JobRunStatus) (to string, reason msg.Msg, ended bool) {
	switch j.Status {
	case store.RunPending, store.RunRunning:
		return "", msg.Msg{}, false
	case store.RunSucceeded:
		return store.RunSucceeded, msg.Msg{}, true
	case store.RunCancelled:
		to = store.RunCancelled
	default: // failed, partially_failed, skipped
		to = store.RunFailed
	}
	return to, msg.New(msg.FlowNodeJobRunEnded, "run", j.ID, "status", j.Status, "reason", j.Error), true
}

// transitionNode ends node run key: to is an ended status.
func (d *decider) transitionNode(ctx context.Context, key, to string, reason msg.Msg) error {
	if err := d.setNode(ctx, key, to, reason); err != nil {
		return err
	}
	d.res.NodesEnded++
	return nil
}

// setNode moves node run key from the status read to to, with reason.
func (d *decider) setNode(ctx context.Context, key, to string, reason msg.Msg) error {
	n := d.nodes[key]
	ok, err := d.tx.TransitionNodeRun(ctx, store.StatusTransition{ID: n.ID, From: n.Status, To: to, Reason: reason})
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("node run %d (%s) was not %s any more", n.ID, key, n.Status)
	}
	n.Status, n.Reason, n.ReasonMsg = to, reason.String(), reason
	d.nodes[key] = n
	return nil
}

// skip records a skipped node.
func (d *decider) skip(ctx context.Context, s workflow.Skip) error {
	reason := msg.New(msg.FlowNodeSkippedStop, "cause", s.Cause)
	if s.Reason == workflow.SkipStartRule {
		node, _ := d.g.Node(s.Key)
		reason = msg.New(msg.FlowNodeSkippedRule, "rule", string(node.Start), "cause", s.Cause)
	}
	if n, ok := d.nodes[s.Key]; ok && n.Status == store.NodeWaiting && n.Rerun == d.run.Reruns {
		// A waiting node the failure policy stop skips: its node run exists.
		if err := d.transitionNode(ctx, s.Key, store.RunSkipped, reason); err != nil {
			return err
		}
		d.res.Skipped++
		return nil
	}
	nr, created, err := d.tx.CreateNodeRun(ctx, d.epoch, store.NewNodeRun{
		WorkflowRunID: d.run.ID, NodeKey: s.Key, Rerun: d.run.Reruns, Status: store.RunSkipped, Reason: reason,
	})
	if err != nil {
		return err
	}
	if created {
		d.res.Skipped++
	}
	d.nodes[s.Key] = nr
	return nil
}

// start creates the node run of a ready node, its job run and the link,
// or fails the node at once when it has no job to run. A node that waits
// for other runs (workflow.Node.WaitFor) is created waiting instead, and
// its waits are checked at once (checkWait).
func (d *decider) start(ctx context.Context, key string) error {
	node, _ := d.g.Node(key)
	status := store.RunRunning
	if len(node.WaitFor) > 0 {
		status = store.NodeWaiting
	}
	nr, created, err := d.tx.CreateNodeRun(ctx, d.epoch, store.NewNodeRun{
		WorkflowRunID: d.run.ID, NodeKey: key, Rerun: d.run.Reruns, Status: status,
	})
	if err != nil {
		return err
	}
	d.nodes[key] = nr
	if created {
		d.res.NodeRuns++
	}
	if nr.Status == store.NodeWaiting {
		return d.checkWait(ctx, key)
	}
	if nr.Status != store.RunRunning || nr.JobRunID.Valid {
		return nil // created before, with its job run
	}
	return d.runJob(ctx, key)
}

// checkWaiting checks the waits of the nodes of this rerun that are
// waiting (checkWait).
func (d *decider) checkWaiting(ctx context.Context) error {
	var keys []string
	for k, n := range d.nodes {
		if n.Status == store.NodeWaiting && n.Rerun == d.run.Reruns {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys) // a deterministic order of writes
	for _, k := range keys {
		if err := d.checkWait(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// checkWait decides for waiting node key (workflow.Graph.DecideWait) from
// the runs of the run's business date it waits for, and applies it in the
// decision's transaction: every run succeeded → the node runs (waiting →
// running, its job run created); the deadline passed → a
// workflow_wait_timeout alarm and the node failed or skipped per its
// on_timeout; otherwise it keeps waiting, its reason naming what it still
// waits for.
func (d *decider) checkWait(ctx context.Context, key string) error {
	nr := d.nodes[key]
	node, _ := d.g.Node(key)
	ok := make([]bool, len(node.WaitFor))
	for i, w := range node.WaitFor {
		app, name, isWorkflow := w.Target(d.run.App)
		var err error
		if ok[i], err = d.tx.WaitSucceeded(ctx, store.WaitTarget{App: app, Name: name, Workflow: isWorkflow, Date: d.run.BusinessDate}); err != nil {
			return err
		}
	}
	w := d.g.DecideWait(key, ok, time.UnixMilli(nr.CreatedAt), time.UnixMilli(d.now))
	switch w.Action {
	case workflow.WaitStart:
		if err := d.setNode(ctx, key, store.RunRunning, msg.Msg{}); err != nil {
			return err
		}
		return d.runJob(ctx, key)
	case workflow.WaitTimedOut:
		to, action := store.RunFailed, "failed"
		if w.OnTimeout == workflow.TimeoutSkip {
			to, action = store.RunSkipped, "skipped"
		}
		reason := msg.New(msg.FlowNodeWaitTimeout, "timeout", node.WaitTimeout, "waits", w.Reason(), "date", d.run.BusinessDate)
		if err := d.transitionNode(ctx, key, to, reason); err != nil {
			return err
		}
		severity := "critical"
		if to == store.RunSkipped {
			severity = "warning"
		}
		return d.tx.RaiseAlarms(ctx, store.Alarm{
			Kind: store.AlarmWorkflowWaitTimeout, Severity: severity, App: d.run.App,
			DedupKey: fmt.Sprintf("workflow_wait_timeout:%d:%s:%d", d.run.ID, key, d.run.Reruns),
			Msg: msg.New(msg.AlarmWorkflowWaitTimeout, "app", d.run.App, "workflow", d.g.Definition().Name, "run", d.run.ID,
				"date", d.run.BusinessDate, "node", key, "timeout", node.WaitTimeout, "waits", w.Reason(), "action", action),
		})
	default:
		reason := msg.New(msg.FlowNodeWaiting, "waits", w.Reason(), "date", d.run.BusinessDate,
			"deadline", w.Deadline.UTC().Format(time.RFC3339))
		if reason.String() == nr.Reason {
			return nil
		}
		return d.setNode(ctx, key, store.NodeWaiting, reason)
	}
}

// runJob creates the job run of running node key and links it, or fails
// the node at once when it has no job to run.
func (d *decider) runJob(ctx context.Context, key string) error {
	nr := d.nodes[key]
	node, _ := d.g.Node(key)
	job, fail, err := d.job(ctx, node)
	if err != nil {
		return err
	}
	if !fail.IsZero() {
		return d.transitionNode(ctx, key, store.RunFailed, fail)
	}
	upstream, err := d.upstream(ctx, key)
	if err != nil {
		return err
	}
	params, wf := nodeParams(job.Params, d.run), nodeWorkflow(d.run, key, upstream)
	if size := len(params) + len(wf); size > maxNodeInputBytes {
		return d.transitionNode(ctx, key, store.RunFailed,
			msg.New(msg.FlowNodeParamsLarge, "node", key, "size", size, "max", maxNodeInputBytes))
	}
	r := store.NewRun{
		JobID: job.ID, App: job.App, JobName: job.Name, ScheduledAt: d.now, TriggerKind: store.TriggerWorkflow, Status: store.RunPending,
		Params: params, Workflow: wf, SlotCount: job.SlotCount, TimeZone: job.TimeZone, RecordsPolicy: job.RecordsPolicy,
		Deadlines: jobrules.RunDeadlines(job.JobDeadlines, job.TimeZone, d.now),
	}
	// A dedup scope such as settle:{date} names the business date, not the
	// day the node happens to run.
	r.DedupScope = jobrules.ResolveDedupScopeOnDate(r.DedupScope, d.run.BusinessDate)
	jobRun, err := d.tx.InsertWorkflowJobRun(ctx, d.epoch, r)
	if err != nil {
		return err
	}
	linked, err := d.tx.LinkNodeRunJobRun(ctx, nr.ID, jobRun)
	if err != nil {
		return err
	}
	if !linked {
		return fmt.Errorf("node run %d (%s) has a job run already", nr.ID, key)
	}
	nr.JobRunID = sql.NullInt64{Int64: jobRun, Valid: true}
	d.nodes[key] = nr
	d.res.JobRuns++
	return nil
}

// job reads the job of node, or says why the node fails at once (fail not
// zero): a job that is gone or disabled, an inline node whose job is gone.
func (d *decider) job(ctx context.Context, node workflow.Node) (job store.ChildJob, fail msg.Msg, err error) {
	var id int64
	var ref string
	switch {
	case node.Job == nil:
		// An inline node runs through the job its workflow owns, written
		// with the current definition.
		var found bool
		if id, found, err = d.tx.InlineJobID(ctx, d.run.WorkflowID, node.Key); err != nil || !found {
			return job, msg.New(msg.FlowNodeInline, "node", node.Key, "handler", node.Handler), err
		}
		ref = store.InlineJobName(d.run.WorkflowID, node.Key)
	case node.Job.ID > 0:
		id, ref = node.Job.ID, strconv.FormatInt(node.Job.ID, 10)
	default:
		app := node.Job.App
		if app == "" {
			app = d.run.App
		}
		ref = app + "/" + node.Job.Name
		var found bool
		if id, found, err = d.tx.JobIDByName(ctx, app, node.Job.Name); err != nil || !found {
			return job, msg.New(msg.FlowNodeJobMissing, "node", node.Key, "job", ref), err
		}
	}
	job, found, err := d.tx.ChildJob(ctx, id)
	switch {
	case err != nil:
		return job, msg.Msg{}, err
	case !found:
		return job, msg.New(msg.FlowNodeJobMissing, "node", node.Key, "job", ref), nil
	case !job.Enabled:
		return job, msg.New(msg.FlowNodeJobDisabled, "node", node.Key, "app", job.App, "job", ref), nil
	}
	return job, msg.Msg{}, nil
}

// maxNodeInputBytes bounds the params of a node's job run with its
// workflow context: at most the width of job_run.params (TEXT on MySQL),
// which a job's own params (at most 64 KiB) with the run's could exceed,
// and together small enough for one push to an executor to carry many
// runs' assignments, whatever results the parents returned.
const maxNodeInputBytes = 65535

// upstream reads the results of node key's direct parents that succeeded
// (their latest node run's job run), by parent key; parents without a
// result are absent.
func (d *decider) upstream(ctx context.Context, key string) (map[string]json.RawMessage, error) {
	runOf := map[int64]string{}
	var ids []int64
	for _, p := range d.g.Parents(key) {
		n, ok := d.nodes[p]
		if !ok || n.Status != store.RunSucceeded || !n.JobRunID.Valid {
			continue
		}
		runOf[n.JobRunID.Int64] = p
		ids = append(ids, n.JobRunID.Int64)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	results, err := d.tx.RunResults(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(results))
	for id, r := range results {
		out[runOf[id]] = r
	}
	return out, nil
}

// end ends the run with status and reason; a run that did not succeed
// raises a workflow_run_failed alarm with the change (once per rerun).
func (d *decider) end(ctx context.Context, status string, reason msg.Msg) error {
	ok, err := d.tx.TransitionWorkflowRun(ctx, store.StatusTransition{ID: d.run.ID, From: d.run.Status, To: status, Reason: reason})
	if err != nil || !ok {
		return err
	}
	d.res.Ended = status
	if d.run.StartedAt.Valid && d.now > 0 {
		d.res.Duration = time.Duration(d.now-d.run.StartedAt.Int64) * time.Millisecond
	}
	if status != store.RunFailed && status != store.RunPartiallyFailed {
		return nil
	}
	name := fmt.Sprintf("#%d", d.run.WorkflowID)
	if d.g != nil {
		name = d.g.Definition().Name
	}
	return d.tx.RaiseAlarms(ctx, store.Alarm{
		Kind: store.AlarmWorkflowRunFailed, Severity: "critical", App: d.run.App,
		DedupKey: fmt.Sprintf("workflow_run_failed:%d:%d", d.run.ID, d.run.Reruns),
		Msg: msg.New(msg.AlarmWorkflowRunFailed, "app", d.run.App, "workflow", name, "run", d.run.ID,
			"date", d.run.BusinessDate, "status", status, "reason", reason),
	})
}

// outcome is the end status of a finished run and its reason.
func outcome(o workflow.Outcome) (string, msg.Msg) {
	switch o.Status {
	case workflow.RunSucceeded:
		return store.RunSucceeded, msg.Msg{}
	case workflow.RunPartiallyFailed:
		return store.RunPartiallyFailed, msg.New(msg.FlowRunPartlyFailed, "count", len(o.FailedNodes), "nodes", strings.Join(o.FailedNodes, ", "))
	default:
		return store.RunFailed, msg.New(msg.FlowRunFailed, "count", len(o.FailedNodes), "nodes", strings.Join(o.FailedNodes, ", "))
	}
}

// nodeParams are the params of a node's job run: the job's params (a JSON
// object, or none) with the workflow run's params (a JSON object, or none)
// laid over them. Job params that are not a JSON object are passed
// unchanged. The workflow context (which run and node, the business date,
// the parents' results) is not added to them: it travels apart, as the
// run's workflow context (nodeWorkflow), so that a handler that refuses
// unknown params fields (the built-in http, sql and shell) runs as a node.
func nodeParams(jobParams string, run store.WorkflowRun) string {
	fields := map[string]json.RawMessage{}
	if strings.TrimSpace(jobParams) != "" {
		if err := json.Unmarshal([]byte(jobParams), &fields); err != nil || fields == nil {
			return jobParams
		}
	}
	if strings.TrimSpace(run.Params) == "" {
		return jobParams
	}
	var over map[string]json.RawMessage
	if err := json.Unmarshal([]byte(run.Params), &over); err != nil || len(over) == 0 {
		return jobParams
	}
	for k, v := range over {
		fields[k] = v
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return jobParams
	}
	return string(b)
}

// nodeWorkflow is the workflow context of node's job run in run, as the
// JSON the run keeps (store.NewRun.Workflow) and executors receive
// (protocol.WorkflowContext): the one place where a node's run learns
// which workflow run and node it is, its business date and — when a
// direct parent that succeeded has a result — upstream, those results by
// parent key.
func nodeWorkflow(run store.WorkflowRun, node string, upstream map[string]json.RawMessage) string {
	b, err := json.Marshal(protocol.WorkflowContext{RunID: run.ID, Node: node, BusinessDate: run.BusinessDate, Upstream: upstream})
	if err != nil { // results are JSON the admin checked when it kept them
		return ""
	}
	return string(b)
}
