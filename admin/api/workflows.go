package api

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/fielderr"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/sdk/names"
)

// workflowRoutes registers the workflows (issue 22), with the RBAC of
// jobs: viewers read the workflows of their apps, operators manage them; a
// workflow of an app the user may not see does not exist for them.
func (s *Server) workflowRoutes(view, op gin.IRoutes) {
	view.GET("/workflows", s.listWorkflows)
	view.GET("/workflows/:id", s.getWorkflow)
	view.GET("/workflows/:id/runs", s.listWorkflowRuns)
	view.GET("/workflows/:id/layout", s.workflowLayout) // workflow_layout.go
	view.GET("/workflow-runs/:id", s.getWorkflowRun)
	op.POST("/workflow-runs/:id/rerun", s.rerunWorkflowRun)   // workflow_rerun.go
	op.POST("/workflow-runs/:id/cancel", s.cancelWorkflowRun) // workflow_cancel.go
	op.POST("/workflows/:id/trigger", s.triggerWorkflow)
	op.POST("/workflows/:id/backfill", s.backfillWorkflow) // workflow_backfill.go
	op.POST("/workflows/validate", s.validateWorkflow)     // workflow_validate.go
	op.POST("/workflows", s.createWorkflow)
	op.PUT("/workflows/:id", s.updateWorkflow)
	op.DELETE("/workflows/:id", s.deleteWorkflow)
}

// workflowView is the wire form of a stored workflow; its nodes and edges
// when the row has its definition (not in lists).
func workflowView(w store.Workflow) (apitypes.Workflow, error) {
	enabled := w.Enabled
	v := apitypes.Workflow{
		WorkflowSpec: apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{App: w.App, Name: w.Name, Description: w.Description,
			Cron: w.CronExpr, TimeZone: w.TimeZone, Calendar: w.Calendar, CalendarRule: w.CalendarRule, CalendarShift: w.CalendarShift,
			Enabled: &enabled, FailurePolicy: w.FailurePolicy},
			Version: w.Version},
		ID: w.ID, NodeCount: w.NodeCount, CreatedAt: msTime(w.CreatedAt), CreatedBy: w.CreatedBy,
		UpdatedAt: msTime(w.UpdatedAt), UpdatedBy: w.UpdatedBy,
	}
	v.State = v.WorkflowDef.State()
	if w.NextFireAt.Valid {
		t := msTime(w.NextFireAt.Int64)
		v.NextFireAt = &t
	}
	if w.Definition == "" {
		return v, nil
	}
	var def workflow.Definition
	if err := json.Unmarshal([]byte(w.Definition), &def); err != nil {
		return v, fmt.Errorf("workflow %d: stored definition: %w", w.ID, err)
	}
	v.Nodes, v.Edges = def.Wire()
	return v, nil
}

// summary is v without its nodes and edges (lists, audit entries).
func summary(v apitypes.Workflow) apitypes.Workflow {
	v.Nodes, v.Edges = nil, nil
	return v
}

// workflowRow validates spec into the row to store (without id, version
// and users), or answers 400 naming every field in error (false): the
// graph by admin/workflow.Validate (a cycle named in order, the node
// limit), and the schedule. anchor is the @every anchor: the workflow's
// creation. Nothing here reads the database.
func (s *Server) workflowRow(c *gin.Context, spec apitypes.WorkflowDef, anchor time.Time) (store.Workflow, bool) {
	spec = spec.WithDefaults()
	def := workflow.FromWire(spec)
	fields := map[string]string{}
	graph, err := workflow.Validate(def)
	var fe workflow.FieldErrors
	switch {
	case errors.As(err, &fe):
		for k, v := range fe {
			fields[k] = v
		}
	case err != nil:
		s.internal(c, err)
		return store.Workflow{}, false
	}
	if len(spec.Description) > 1024 {
		fields["description"] = "at most 1024 characters"
	}
	var inline []store.InlineJob
	for i, n := range spec.Nodes {
		if n.Job != nil {
			continue
		}
		j, err := jobdef.InlineRow(n)
		if err != nil {
			fields["nodes["+strconv.Itoa(i)+"].params"] = err.Error()
			continue
		}
		inline = append(inline, store.InlineJob{Node: n.Key, Job: j})
	}
	if spec.Calendar != "" && !names.Valid(spec.Calendar) {
		fields["calendar"] = "the name of a business calendar: " + names.Rule
	}
	var sched *schedule.Schedule
	zone := spec.TimeZone
	if _, zerr := schedule.ValidateZone(zone); zerr != nil {
		fields["time_zone"] = jobdef.ScheduleReason(zerr).String() // not "time zone: …" under time_zone
		zone = "UTC"                                               // the cron is checked too: one answer names both mistakes
	}
	if strings.TrimSpace(spec.Cron) != "" {
		parsed, err := schedule.Parse(schedule.Spec{Expr: spec.Cron, Zone: zone, JobKey: "workflow:" + spec.Key(), Anchor: anchor})
		switch {
		case err != nil:
			fields["cron"] = err.Error()
		case zone == spec.TimeZone: // a valid zone
			sched = parsed
		}
	}
	// The calendar rule and shift, with a job's rules (a business day such
	// as BD3 needs a calendar; shift needs a schedule that fires at most a
	// few times a day).
	for k, m := range jobdef.CheckCalendar(spec.Calendar != "", spec.CalendarRule, spec.CalendarShift, sched) {
		if _, taken := fields[k]; !taken {
			fields[k] = m.String()
		}
	}
	if len(fields) > 0 {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: fielderr.Format("invalid workflow", fields), Fields: englishOnly(fields)})
		return store.Workflow{}, false
	}
	data, err := json.Marshal(def)
	if err != nil {
		s.internal(c, err)
		return store.Workflow{}, false
	}
	row := store.Workflow{App: spec.App, Name: spec.Name, Description: spec.Description, CronExpr: spec.Cron, TimeZone: spec.TimeZone,
		Calendar: spec.Calendar, CalendarRule: spec.CalendarRule, CalendarShift: spec.CalendarShift, Enabled: *spec.Enabled,
		FailurePolicy: string(def.FailurePolicy), Definition: string(data), NodeCount: graph.Len(), Inline: inline}
	row.CreatedAt = anchor.UnixMilli() // the @every anchor of the schedule on a calendar (not written)
	if row.Enabled && sched != nil {
		row.NextFireAt = jobdef.NextFire(sched, s.cfg.Clock.Now()) // on a calendar: set again by checkWorkflowRefs
	}
	return row, true
}

// mayManageWorkflow says whether the user may manage workflows of app,
// answering 403 otherwise (a create in another app: the update and delete
// of one find no workflow first).
func mayManageWorkflow(c *gin.Context, app string) bool {
	if u := currentUser(c); !u.AppAllowed(app) {
		c.AbortWithStatusJSON(http.StatusForbidden, errorBody{Error: "you may not manage workflows of app " + app,
			Fields: map[string]msg.Msg{"app": msg.New(msg.NotYourApp, "apps", u.Apps)}})
		return false
	}
	return true
}

// checkWorkflowRefs checks what the definition refers to in the database:
// each node's job exists in an app the user may manage (a field error on
// nodes[i].job otherwise, the same whether the job is missing or of
// another app: a workflow says nothing of other apps), and the calendar is
// one of the app's or a global one; so must the jobs and workflows a node
// waits for (checkWaitRefs). It answers 400 and returns false when one is
// wrong.
func (s *Server) checkWorkflowRefs(c *gin.Context, spec apitypes.WorkflowDef, row *store.Workflow) bool {
	_, ok := s.checkWorkflowRefsOnCalendar(c, spec, row)
	return ok
}

// checkWorkflowRefsOnCalendar is checkWorkflowRefs that also returns the
// schedule on its business calendar (nil without a calendar, a cron or
// when disabled), for the preview of a draft.
func (s *Server) checkWorkflowRefsOnCalendar(c *gin.Context, spec apitypes.WorkflowDef, row *store.Workflow) (*schedule.CalendarSchedule, bool) {
	var cs *schedule.CalendarSchedule
	ctx := c.Request.Context()
	u := currentUser(c)
	var ids []int64
	var byName []store.JobKey
	refApp := func(ref *apitypes.WorkflowJobRef) string {
		if ref.App != "" {
			return ref.App
		}
		return spec.App
	}
	for _, n := range spec.Nodes {
		switch {
		case n.Job == nil:
		case n.Job.ID > 0:
			ids = append(ids, n.Job.ID)
		default:
			byName = append(byName, store.JobKey{App: refApp(n.Job), Name: n.Job.Name})
		}
		for _, w := range n.WaitFor {
			if w.Job != nil {
				byName = append(byName, store.JobKey{App: cmp.Or(w.Job.App, spec.App), Name: w.Job.Name})
			}
		}
	}
	fields := map[string]string{}
	named := map[[2]string]store.JobKey{}
	if len(ids)+len(byName) > 0 {
		found, err := s.st.JobKeys(ctx, ids, byName)
		if err != nil {
			s.internal(c, err)
			return nil, false
		}
		byID := map[int64]store.JobKey{}
		for _, k := range found {
			byID[k.ID] = k
			named[[2]string{k.App, k.Name}] = k
		}
		for i, n := range spec.Nodes {
			if n.Job == nil {
				continue
			}
			var k store.JobKey
			var ok bool
			ref := "id " + strconv.FormatInt(n.Job.ID, 10)
			if n.Job.ID > 0 {
				k, ok = byID[n.Job.ID]
			} else {
				ref = refApp(n.Job) + "/" + n.Job.Name
				k, ok = named[[2]string{refApp(n.Job), n.Job.Name}]
			}
			if !ok || !u.AppAllowed(k.App) {
				fields["nodes["+strconv.Itoa(i)+"].job"] = "no job " + ref + " in the apps you may manage"
			}
		}
	}
	if !s.checkWaitRefs(c, spec, named, fields) {
		return nil, false
	}
	if spec.Calendar != "" {
		cals, err := s.st.CalendarsOfApps(ctx, []string{spec.App})
		if err != nil {
			s.internal(c, err)
			return nil, false
		}
		var id int64
		for _, cal := range cals {
			if cal.Name == spec.Calendar && (id == 0 || cal.App == spec.App) {
				id = cal.ID // the app's own before a global one, as the engine does
			}
		}
		if id == 0 {
			fields["calendar"] = "no business calendar " + strconv.Quote(spec.Calendar) + " in app " + spec.App + " or among the global ones"
		} else {
			var ok bool
			if cs, ok = s.nextFireOnCalendar(c, id, row, fields); !ok {
				return nil, false
			}
		}
	}
	if len(fields) > 0 {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: fielderr.Format("invalid workflow", fields), Fields: englishOnly(fields)})
		return nil, false
	}
	return cs, true
}

func (s *Server) listWorkflows(c *gin.Context) {
	after, _ := strconv.ParseInt(c.Query("after"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	rows, err := s.st.WorkflowsOfApps(c.Request.Context(), after, limit, currentUser(c).AppList())
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.Workflow, 0, len(rows))
	for _, w := range rows {
		v, _ := workflowView(w) // no definition in lists: cannot fail
		out = append(out, v)
	}
	c.JSON(http.StatusOK, gin.H{"workflows": out})
}

// loadWorkflow reads the workflow of the id parameter; one of an app the
// user may not see does not exist for them.
func (s *Server) loadWorkflow(c *gin.Context) (store.Workflow, bool) {
	id, ok := idParam(c)
	if !ok {
		return store.Workflow{}, false
	}
	w, err := s.st.Workflow(c.Request.Context(), id)
	return w, s.visible(c, "workflow", err, err == nil && currentUser(c).AppAllowed(w.App))
}

func (s *Server) getWorkflow(c *gin.Context) {
	w, ok := s.loadWorkflow(c)
	if !ok {
		return
	}
	v, err := workflowView(w)
	if err != nil {
		s.internal(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) createWorkflow(c *gin.Context) {
	var spec apitypes.WorkflowSpec
	if !decode(c, &spec) {
		return
	}
	// First what is wrong with the input, which says nothing of others'
	// data; then whether the user may manage the app; then the references.
	row, ok := s.workflowRow(c, spec.WorkflowDef, s.cfg.Clock.Now())
	if !ok || !mayManageWorkflow(c, spec.App) || !s.checkWorkflowRefs(c, spec.WorkflowDef, &row) {
		return
	}
	row.CreatedBy = currentUser(c).Username
	id, err := s.st.CreateWorkflow(c.Request.Context(), row)
	if errors.Is(err, store.ErrConflict) {
		c.AbortWithStatusJSON(http.StatusConflict, errorBody{Error: err.Error(),
			Fields: map[string]msg.Msg{"name": msg.New(msg.WorkflowNameTaken, "app", row.App)}})
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	s.answerWorkflow(c, id, http.StatusCreated, "workflow.create", nil)
}

// answerWorkflow reads workflow id back, audits action with its summary
// (and before, when set) and answers it with code.
func (s *Server) answerWorkflow(c *gin.Context, id int64, code int, action string, before *apitypes.Workflow) {
	w, err := s.st.Workflow(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return
	}
	v, err := workflowView(w)
	if err != nil {
		s.internal(c, err)
		return
	}
	s.wake()
	answerSaved(s, c, w.App, action, "workflow/"+strconv.FormatInt(id, 10), code, v, before, summary)
}

func (s *Server) updateWorkflow(c *gin.Context) {
	old, ok := s.loadWorkflow(c)
	if !ok {
		return
	}
	var spec apitypes.WorkflowSpec
	if !decode(c, &spec) {
		return
	}
	if !identityKept(c, "a workflow and cannot change", &spec.App, &spec.Name, old.App, old.Name) ||
		!mayManageWorkflow(c, old.App) || !versionGiven(c, spec.Version, old.Version) {
		return
	}
	row, ok := s.workflowRow(c, spec.WorkflowDef, time.UnixMilli(old.CreatedAt))
	if !ok || !s.checkWorkflowRefs(c, spec.WorkflowDef, &row) {
		return
	}
	row.ID, row.Version, row.UpdatedBy = old.ID, spec.Version, currentUser(c).Username
	err := s.st.UpdateWorkflow(c.Request.Context(), row)
	if errors.Is(err, store.ErrConflict) {
		fail(c, http.StatusConflict, err.Error())
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	old.Definition = ""
	before, _ := workflowView(old) // no definition: cannot fail
	s.answerWorkflow(c, old.ID, http.StatusOK, "workflow.update", &before)
}

func (s *Server) deleteWorkflow(c *gin.Context) {
	w, ok := s.loadWorkflow(c)
	if !ok || !mayManageWorkflow(c, w.App) {
		return
	}
	err := s.st.DeleteWorkflow(c.Request.Context(), w.ID)
	if errors.Is(err, store.ErrConflict) {
		fail(c, http.StatusConflict, err.Error())
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, w.App, "workflow.delete", "workflow/"+strconv.FormatInt(w.ID, 10), map[string]any{"name": w.Name, "version": w.Version})
	s.wake()
	c.JSON(http.StatusOK, gin.H{"deleted": w.ID})
}

func workflowRunView(r store.WorkflowRun) apitypes.WorkflowRun {
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

// listWorkflowRuns answers the runs of a workflow, newest first:
// ?before=ID for the page after, ?limit=N (1-1000, default 100).
func (s *Server) listWorkflowRuns(c *gin.Context) {
	w, ok := s.loadWorkflow(c)
	if !ok {
		return
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	runs, err := s.st.WorkflowRuns(c.Request.Context(), w.ID, before, limit)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.WorkflowRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, workflowRunView(r))
	}
	c.JSON(http.StatusOK, gin.H{"runs": out})
}

// englishOnly carries field errors that have no message code yet (those of
// admin/workflow's validator) as msg.Text: every language shows them as
// written.
func englishOnly(fields map[string]string) map[string]msg.Msg {
	out := make(map[string]msg.Msg, len(fields))
	for k, v := range fields {
		out[k] = msg.New(msg.Text, "text", v)
	}
	return out
}

// checkWaitRefs checks the runs the nodes of spec wait for into fields:
// each job (looked up already, in jobs by app and name) and each workflow
// must exist in an app the user may manage (the same words whether it is
// missing or of another app), and a node must not wait for its own job
// when it names that job by id. It returns false after answering an error
// of the database.
func (s *Server) checkWaitRefs(c *gin.Context, spec apitypes.WorkflowDef, jobs map[[2]string]store.JobKey, fields map[string]string) bool {
	ctx := c.Request.Context()
	u := currentUser(c)
	workflows := map[[2]string]bool{} // found (and allowed), by app and name
	for i, n := range spec.Nodes {
		for j, w := range n.WaitFor {
			field := fmt.Sprintf("nodes[%d].wait_for[%d]", i, j)
			if _, bad := fields[field]; bad {
				continue
			}
			if w.Job != nil {
				key := [2]string{cmp.Or(w.Job.App, spec.App), w.Job.Name}
				k, ok := jobs[key]
				switch {
				case !ok || !u.AppAllowed(k.App):
					fields[field] = "no job " + key[0] + "/" + key[1] + " in the apps you may manage"
				case n.Job != nil && n.Job.ID == k.ID:
					fields[field] = msg.New(msg.WaitSelfNodeJob, "job", key[0]+"/"+key[1]).String()
				}
				continue
			}
			if w.Workflow == nil {
				continue // refused by the definition's validation
			}
			key := [2]string{cmp.Or(w.Workflow.App, spec.App), w.Workflow.Name}
			ok, seen := workflows[key]
			if !seen {
				_, err := s.st.WorkflowByName(ctx, key[0], key[1])
				switch {
				case errors.Is(err, store.ErrNotFound):
				case err != nil:
					s.internal(c, err)
					return false
				default:
					ok = u.AppAllowed(key[0])
				}
				workflows[key] = ok
			}
			if !ok {
				fields[field] = "no workflow " + key[0] + "/" + key[1] + " in the apps you may manage"
			}
		}
	}
	return true
}

// nextFireOnCalendar builds the schedule of row on its calendar id, as a
// job's (a rule the calendar's days cannot take is a field error), and
// sets row.NextFireAt to its next event (jobdef.NextEvent: the next firing,
// or an earlier candidate the calendar removes, which the leader records
// as skipped) when the workflow is enabled and has a cron. It returns
// false after answering an error of the database.
func (s *Server) nextFireOnCalendar(c *gin.Context, id int64, row *store.Workflow, fields map[string]string) (*schedule.CalendarSchedule, bool) {
	if row.CronExpr == "" || !row.Enabled {
		return nil, true
	}
	stored, err := s.st.Calendar(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return nil, false
	}
	cal, err := stored.Build()
	if err != nil {
		fields["calendar"] = err.Error()
		return nil, true
	}
	sched, err := schedule.Parse(schedule.Spec{Expr: row.CronExpr, Zone: row.TimeZone, JobKey: "workflow:" + row.App + "/" + row.Name, Anchor: time.UnixMilli(row.CreatedAt)})
	if err != nil {
		fields["cron"] = err.Error()
		return nil, true
	}
	cs, err := schedule.WithCalendar(sched, cal, jobrules.CalendarPolicy(store.JobCalendar{CalendarRule: row.CalendarRule, CalendarShift: row.CalendarShift}))
	if err != nil {
		fields["calendar_rule"] = err.Error()
		return nil, true
	}
	row.NextFireAt = jobdef.NextEvent(cs, s.cfg.Clock.Now())
	return cs, true
}
