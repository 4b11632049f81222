package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// backfillWorkflow creates the runs of a range of business dates (or, as a
// dry run, lists what it would do): 201 with the plan and the backfill's
// id, 200 for a dry run. Field errors name from, to, parallel or params.
func (s *Server) backfillWorkflow(c *gin.Context) {
	w, ok := s.loadWorkflow(c)
	if !ok || !mayManageWorkflow(c, w.App) {
		return
	}
	var req apitypes.WorkflowBackfill
	if !decode(c, &req) {
		return
	}
	if req.Parallel == 0 {
		req.Parallel = 1
	}
	existing, err := s.st.RunsOfDates(c.Request.Context(), w.ID, req.From, req.To)
	if err != nil {
		s.internal(c, err)
		return
	}
	plan, fields := workflowrun.PlanBackfill(workflowrun.BackfillRequest{From: req.From, To: req.To, NewestFirst: req.NewestFirst,
		Parallel: req.Parallel, OnlyMissing: req.OnlyMissing}, existing)
	if !backfillRequestValid(c, fields, req.Params) {
		return
	}
	out := apitypes.WorkflowBackfillPlan{DryRun: req.DryRun, Dates: make([]apitypes.WorkflowBackfillDate, len(plan))}
	for i, d := range plan {
		out.Dates[i] = apitypes.WorkflowBackfillDate{Date: d.Date, Action: d.Action, RunID: d.RunID}
		if d.Action == workflowrun.BackfillCreate {
			out.Created++
		}
	}
	detail := map[string]any{"from": req.From, "to": req.To, "parallel": req.Parallel, "newest_first": req.NewestFirst,
		"only_missing": req.OnlyMissing, "dry_run": req.DryRun, "dates": len(plan), "created": out.Created}
	if req.DryRun {
		s.audit(c, w.App, "workflow.backfill", "workflow/"+strconv.FormatInt(w.ID, 10), detail)
		c.JSON(http.StatusOK, out)
		return
	}
	loc, err := time.LoadLocation(w.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	rec, err := s.st.Leader(c.Request.Context())
	if err != nil {
		s.internal(c, err)
		return
	}
	runs := workflowrun.BackfillRuns(w, plan, loc, req.Params, currentUser(c).Username)
	id, made, created, err := s.st.CreateBackfill(c.Request.Context(), rec.Epoch, store.Backfill{WorkflowID: w.ID, App: w.App,
		FromDate: req.From, ToDate: req.To, NewestFirst: req.NewestFirst, Parallel: req.Parallel, OnlyMissing: req.OnlyMissing,
		CreatedBy: currentUser(c).Username}, runs)
	if err != nil {
		s.internal(c, err)
		return
	}
	out.BackfillID, out.Created = id, 0
	byDate := map[string]store.WorkflowRun{}
	for i, r := range made {
		byDate[r.BusinessDate] = r
		if created[i] {
			out.Created++
		}
	}
	for i, d := range out.Dates {
		if r, ok := byDate[d.Date]; ok && d.Action == workflowrun.BackfillCreate {
			out.Dates[i].RunID = r.ID
		}
	}
	detail["backfill_id"], detail["created"] = id, out.Created
	s.audit(c, w.App, "workflow.backfill", "workflow/"+strconv.FormatInt(w.ID, 10), detail)
	if s.cfg.Workflows != nil {
		s.cfg.Workflows.Wake()
	}
	c.JSON(http.StatusCreated, out)
}

// runParamsError checks the params of a workflow trigger or backfill: empty,
// or a JSON object of at most jobdef.MaxParamsBytes.
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
