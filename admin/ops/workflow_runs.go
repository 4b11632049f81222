package ops

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/fielderr"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

func (s *Service) wakeWorkflows() {
	if s.cfg.Workflows != nil {
		s.cfg.Workflows.Wake()
	}
}

// WorkflowRunView is workflow run r as the API returns it.
func WorkflowRunView(r store.WorkflowRun) apitypes.WorkflowRun {
	v := apitypes.WorkflowRun{ID: r.ID, WorkflowID: r.WorkflowID, App: r.App, RunKey: r.RunKey, WorkflowVersion: r.WorkflowVersion,
		ScheduledAt: msTime(r.ScheduledAt), BusinessDate: r.BusinessDate, Trigger: r.TriggerKind, Status: r.Status, Params: r.Params,
		Reason: r.Reason, ReasonCode: string(r.ReasonMsg.Code), ReasonArgs: r.ReasonMsg.Args, Reruns: r.Reruns, CreatedBy: r.CreatedBy,
		CreatedAt: msTime(r.CreatedAt)}
	if r.StartedAt.Valid {
		t := msTime(r.StartedAt.Int64)
		v.StartedAt = &t
	}
	if r.FinishedAt.Valid {
		t := msTime(r.FinishedAt.Int64)
		v.FinishedAt = &t
	}
	return v
}

// runParamsError checks the params of a workflow trigger or a backfill:
// empty, or a JSON object of at most jobdef.MaxParamsBytes.
func runParamsError(params string) (msg.Msg, bool) {
	if params == "" {
		return msg.Msg{}, false
	}
	var obj map[string]json.RawMessage
	switch {
	case len(params) > jobdef.MaxParamsBytes:
		return msg.New(msg.ValueMaxBytes, "max", jobdef.MaxParamsBytes), true
	case json.Unmarshal([]byte(params), &obj) != nil || obj == nil:
		return msg.New(msg.WorkflowParamsObject), true
	}
	return msg.Msg{}, false
}

// ManagedWorkflow reads workflow id for a change by a: ErrNotFound as
// StoredWorkflow, ErrForbidden when a may see but not manage it.
func (s *Service) ManagedWorkflow(ctx context.Context, a Actor, id int64) (store.Workflow, error) {
	w, err := s.StoredWorkflow(ctx, a, id)
	if err != nil {
		return w, err
	}
	return w, mayManageWorkflow(a, w.App)
}

// actingWorkflow reads workflow id for an action that starts runs of it
// (a trigger, a backfill): ErrNotFound and ErrForbidden as ManagedWorkflow,
// and ErrForbidden when its definition reaches an app a may not act on
// (reach.go). It returns the apps reached, for the audit.
func (s *Service) actingWorkflow(ctx context.Context, a Actor, id int64) (store.Workflow, []reached, error) {
	w, err := s.ManagedWorkflow(ctx, a, id)
	if err != nil {
		return w, nil, err
	}
	reach, err := s.workflowReach(ctx, w.App, w.Definition)
	if err != nil {
		return w, nil, err
	}
	return w, reach, mayReach(a, "workflow "+w.App+"/"+w.Name, reach)
}

// TriggerWorkflow creates a run of workflow id now (the leader's workflow
// engine drives it). created is false when a trigger with the same run_key
// created the run before. The business date defaults to today in the
// workflow's zone, the run key to one of the instant; an ErrInvalid names
// business_date, run_key or params.
func (s *Service) TriggerWorkflow(ctx context.Context, a Actor, id int64, req apitypes.WorkflowTrigger) (run apitypes.WorkflowRun, created bool, err error) {
	w, reach, err := s.actingWorkflow(ctx, a, id)
	if err != nil {
		return run, false, err
	}
	now := s.cfg.Clock.Now()
	if req.BusinessDate == "" {
		if loc, err := time.LoadLocation(w.TimeZone); err == nil {
			req.BusinessDate = now.In(loc).Format(time.DateOnly)
		} else {
			req.BusinessDate = now.UTC().Format(time.DateOnly)
		}
	}
	if req.RunKey == "" {
		req.RunKey = store.WorkflowRunKeyAt(now.UnixMilli())
	}
	fields := jobdef.FieldMsgs{}
	if d, err := time.Parse(time.DateOnly, req.BusinessDate); err != nil || d.Format(time.DateOnly) != req.BusinessDate {
		fields["business_date"] = msg.New(msg.WorkflowBusinessDate)
	}
	if len(req.RunKey) > store.MaxRunKeyLen || strings.TrimSpace(req.RunKey) != req.RunKey {
		fields["run_key"] = msg.New(msg.WorkflowRunKey, "max", store.MaxRunKeyLen)
	}
	if m, bad := runParamsError(req.Params); bad {
		fields["params"] = m
	}
	if len(fields) > 0 {
		return run, false, refuse(ErrInvalid, fielderr.Format("invalid trigger", fields.English()), fields)
	}
	rec, err := s.st.Leader(ctx)
	if err != nil {
		return run, false, err
	}
	kind := store.TriggerManual
	if a.APIKeyID != 0 {
		kind = store.TriggerAPI
	}
	r, created, err := s.st.CreateWorkflowRun(ctx, rec.Epoch, store.NewWorkflowRun{
		WorkflowID: w.ID, App: w.App, RunKey: req.RunKey, WorkflowVersion: w.Version, ScheduledAt: now.UnixMilli(),
		BusinessDate: req.BusinessDate, TriggerKind: kind, Status: store.RunPending, Params: req.Params, CreatedBy: a.User.Username,
	})
	if err != nil {
		return run, false, err
	}
	if created {
		detail := map[string]any{"workflow_run_id": r.ID, "run_key": r.RunKey, "business_date": r.BusinessDate, "version": r.WorkflowVersion}
		s.audit(ctx, a, w.App, "workflow.trigger", workflowObject(w.ID), detail)
		s.auditReach(ctx, a, reach, "workflow.trigger", workflowObject(w.ID), detail)
		s.wakeWorkflows()
	}
	return WorkflowRunView(r), created, nil
}

// WorkflowRuns lists the runs of workflow id, newest first, before the
// run of id before (0: from the newest), at most limit (the store's
// bounds).
func (s *Service) WorkflowRuns(ctx context.Context, a Actor, id, before int64, limit int) ([]apitypes.WorkflowRun, error) {
	w, err := s.StoredWorkflow(ctx, a, id)
	if err != nil {
		return nil, err
	}
	runs, err := s.st.WorkflowRuns(ctx, w.ID, before, limit)
	if err != nil {
		return nil, err
	}
	out := make([]apitypes.WorkflowRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, WorkflowRunView(r))
	}
	return out, nil
}

// storedWorkflowRun reads workflow run id for a: ErrNotFound when it does
// not exist or is of an app a may not see.
func (s *Service) storedWorkflowRun(ctx context.Context, a Actor, id int64) (store.WorkflowRun, error) {
	run, err := s.st.WorkflowRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !a.User.AppAllowed(run.App)) {
		return run, notFound("workflow run", id)
	}
	return run, err
}

// ManagedWorkflowRun checks that a may change workflow run id: ErrNotFound
// when it does not exist or is of an app a may not see, ErrForbidden when
// they may see but not manage it, or when the workflow's version that the
// run follows reaches an app a may not act on (reach.go).
func (s *Service) ManagedWorkflowRun(ctx context.Context, a Actor, id int64) error {
	_, _, err := s.managedWorkflowRun(ctx, a, id)
	return err
}

// managedWorkflowRun is ManagedWorkflowRun returning the run and the apps
// its workflow version reaches.
func (s *Service) managedWorkflowRun(ctx context.Context, a Actor, id int64) (store.WorkflowRun, []reached, error) {
	run, err := s.storedWorkflowRun(ctx, a, id)
	if err != nil {
		return run, nil, err
	}
	if err := mayManageWorkflow(a, run.App); err != nil {
		return run, nil, err
	}
	def, err := s.st.WorkflowDefinition(ctx, run.WorkflowID, run.WorkflowVersion)
	if err != nil {
		return run, nil, err
	}
	reach, err := s.workflowReach(ctx, run.App, def)
	if err != nil {
		return run, nil, err
	}
	return run, reach, mayReach(a, "workflow run "+strconv.FormatInt(id, 10), reach)
}

// WorkflowRun returns workflow run id with its node runs and the statuses
// and results of their job runs.
func (s *Service) WorkflowRun(ctx context.Context, a Actor, id int64) (apitypes.WorkflowRunDetail, error) {
	run, err := s.storedWorkflowRun(ctx, a, id)
	if err != nil {
		return apitypes.WorkflowRunDetail{}, err
	}
	nodes, err := s.st.NodeRuns(ctx, id)
	if err != nil {
		return apitypes.WorkflowRunDetail{}, err
	}
	var ids []int64
	for _, n := range nodes {
		if n.JobRunID.Valid {
			ids = append(ids, n.JobRunID.Int64)
		}
	}
	jobs, err := s.st.JobRunStatuses(ctx, ids)
	if err != nil {
		return apitypes.WorkflowRunDetail{}, err
	}
	results, err := s.st.RunResults(ctx, ids)
	if err != nil {
		return apitypes.WorkflowRunDetail{}, err
	}
	out := apitypes.WorkflowRunDetail{Run: WorkflowRunView(run), Nodes: make([]apitypes.WorkflowNodeRun, 0, len(nodes))}
	for _, n := range nodes {
		v := apitypes.WorkflowNodeRun{ID: n.ID, NodeKey: n.NodeKey, Rerun: n.Rerun, Status: n.Status, Reason: n.Reason,
			ReasonCode: string(n.ReasonMsg.Code), ReasonArgs: n.ReasonMsg.Args, CreatedAt: msTime(n.CreatedAt)}
		if n.JobRunID.Valid {
			jr := jobs[n.JobRunID.Int64]
			v.JobRunID, v.JobRunStatus, v.Result = n.JobRunID.Int64, jr.Status, results[n.JobRunID.Int64]
			if jr.App != "" && !a.User.AppAllowed(jr.App) && v.Result != nil {
				v.Result, v.ResultHidden = nil, "the result of a run of app "+jr.App+", which you may not see"
			}
		}
		if n.FinishedAt.Valid {
			t := msTime(n.FinishedAt.Int64)
			v.FinishedAt = &t
		}
		out.Nodes = append(out.Nodes, v)
	}
	return out, nil
}

// RerunWorkflowRun runs finished workflow run id again from the nodes
// named (workflowrun.Rerun) and returns the run and the nodes that run
// again. An unknown node in from, or one that would be skipped at once, is
// an ErrInvalid naming from; a run that has not ended (a second click
// included) an ErrConflict.
func (s *Service) RerunWorkflowRun(ctx context.Context, a Actor, id int64, req apitypes.WorkflowRerun) (apitypes.WorkflowRerunDone, error) {
	_, reach, err := s.managedWorkflowRun(ctx, a, id)
	if err != nil {
		return apitypes.WorkflowRerunDone{}, err
	}
	run, again, err := workflowrun.Rerun(ctx, s.st, id, req.From)
	switch {
	case errors.Is(err, workflow.ErrUnknownNode) || errors.Is(err, workflow.ErrRerunBlocked):
		return apitypes.WorkflowRerunDone{}, refuse(ErrInvalid, err.Error(), map[string]msg.Msg{"from": msg.New(msg.Text, "text", err.Error())})
	case errors.Is(err, workflow.ErrNotFinished) || errors.Is(err, workflowrun.ErrRerunRaced):
		return apitypes.WorkflowRerunDone{}, refuse(ErrConflict, err.Error(), nil)
	case err != nil:
		return apitypes.WorkflowRerunDone{}, err
	}
	detail := map[string]any{"workflow_run_id": run.ID, "from": req.From, "nodes": again, "rerun": run.Reruns}
	s.audit(ctx, a, run.App, "workflow.rerun", workflowObject(run.WorkflowID), detail)
	s.auditReach(ctx, a, reach, "workflow.rerun", workflowObject(run.WorkflowID), detail)
	s.wakeWorkflows()
	return apitypes.WorkflowRerunDone{Run: WorkflowRunView(run), Nodes: again}, nil
}

// CancelWorkflowRun ends pending or running workflow run id as cancelled,
// with words as the reason a gives (may be ""): its nodes not started
// never start, its node runs in progress are cancelled, and so are their
// job runs (their executors are told to stop their slots, as for a run
// cancelled by hand: CancelRunOf). An ended run is an ErrConflict.
func (s *Service) CancelWorkflowRun(ctx context.Context, a Actor, id int64, words string) (apitypes.WorkflowCancelled, error) {
	_, reach, err := s.managedWorkflowRun(ctx, a, id)
	if err != nil {
		return apitypes.WorkflowCancelled{}, err
	}
	reason := CancelReason(a, words)
	run, jobRuns, err := workflowrun.Cancel(ctx, s.st, id, reason)
	switch {
	case errors.Is(err, workflowrun.ErrEnded):
		return apitypes.WorkflowCancelled{}, &Error{Kind: ErrConflict, Object: "workflow run", ID: id,
			Msg: "workflow run " + strconv.FormatInt(id, 10) + " has ended; only a pending or running workflow run can be cancelled"}
	case err != nil:
		return apitypes.WorkflowCancelled{}, err
	}
	// The job runs: each as a run cancelled by hand. One that ended
	// meanwhile is left as it ended.
	cancelled := []int64{}
	for _, jr := range jobRuns {
		ok, err := s.CancelRunOf(ctx, jr, reason)
		if err != nil {
			return apitypes.WorkflowCancelled{}, err
		}
		if ok {
			cancelled = append(cancelled, jr)
		}
	}
	detail := map[string]any{"workflow_run_id": run.ID, "reason": reason.String(), "job_runs": cancelled}
	s.audit(ctx, a, run.App, "workflow.cancel", workflowObject(run.WorkflowID), detail)
	s.auditReach(ctx, a, reach, "workflow.cancel", workflowObject(run.WorkflowID), detail)
	return apitypes.WorkflowCancelled{Run: WorkflowRunView(run), JobRuns: cancelled}, nil
}
