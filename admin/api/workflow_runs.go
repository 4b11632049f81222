package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/fielderr"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// triggerWorkflow creates a run of the workflow now (the leader's workflow
// engine drives it): 201 with the run, or 200 with the run a trigger with
// the same run_key created before.
func (s *Server) triggerWorkflow(c *gin.Context) {
	w, ok := s.loadWorkflow(c)
	if !ok || !mayManageWorkflow(c, w.App) {
		return
	}
	var req apitypes.WorkflowTrigger
	if c.Request.ContentLength != 0 && !decode(c, &req) {
		return
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
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: fielderr.Format("invalid trigger", fields.English()), Fields: fields})
		return
	}
	rec, err := s.st.Leader(c.Request.Context())
	if err != nil {
		s.internal(c, err)
		return
	}
	kind := store.TriggerManual
	if _, viaToken := currentToken(c); viaToken {
		kind = store.TriggerAPI
	}
	run, created, err := s.st.CreateWorkflowRun(c.Request.Context(), rec.Epoch, store.NewWorkflowRun{
		WorkflowID: w.ID, App: w.App, RunKey: req.RunKey, WorkflowVersion: w.Version, ScheduledAt: now.UnixMilli(),
		BusinessDate: req.BusinessDate, TriggerKind: kind, Status: store.RunPending, Params: req.Params, CreatedBy: currentUser(c).Username,
	})
	if err != nil {
		s.internal(c, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
		s.audit(c, w.App, "workflow.trigger", "workflow/"+strconv.FormatInt(w.ID, 10),
			map[string]any{"workflow_run_id": run.ID, "run_key": run.RunKey, "business_date": run.BusinessDate, "version": run.WorkflowVersion})
		if s.cfg.Workflows != nil {
			s.cfg.Workflows.Wake()
		}
	}
	c.JSON(code, gin.H{"run": workflowRunView(run), "created": created})
}

// getWorkflowRun answers one workflow run with its node runs and the
// statuses of their job runs; a run of an app the user may not see is 404.
func (s *Server) getWorkflowRun(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	run, err := s.st.WorkflowRun(ctx, id)
	if !s.visible(c, "workflow run", err, err == nil && currentUser(c).AppAllowed(run.App)) {
		return
	}
	nodes, err := s.st.NodeRuns(ctx, id)
	if err != nil {
		s.internal(c, err)
		return
	}
	var ids []int64
	for _, n := range nodes {
		if n.JobRunID.Valid {
			ids = append(ids, n.JobRunID.Int64)
		}
	}
	jobs, err := s.st.JobRunStatuses(ctx, ids)
	if err != nil {
		s.internal(c, err)
		return
	}
	results, err := s.st.RunResults(ctx, ids)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := apitypes.WorkflowRunDetail{Run: workflowRunView(run), Nodes: make([]apitypes.WorkflowNodeRun, 0, len(nodes))}
	for _, n := range nodes {
		v := apitypes.WorkflowNodeRun{ID: n.ID, NodeKey: n.NodeKey, Rerun: n.Rerun, Status: n.Status, Reason: n.Reason,
			ReasonCode: string(n.ReasonMsg.Code), ReasonArgs: n.ReasonMsg.Args, CreatedAt: msTime(n.CreatedAt)}
		if n.JobRunID.Valid {
			v.JobRunID, v.JobRunStatus, v.Result = n.JobRunID.Int64, jobs[n.JobRunID.Int64].Status, results[n.JobRunID.Int64]
		}
		if n.FinishedAt.Valid {
			t := msTime(n.FinishedAt.Int64)
			v.FinishedAt = &t
		}
		out.Nodes = append(out.Nodes, v)
	}
	c.JSON(http.StatusOK, out)
}
