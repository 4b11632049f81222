package ops

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/fielderr"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
	"github.com/shardjob/shardjob/sdk/names"
)

// The workflows (issue 22) have the RBAC of jobs: viewers read the
// workflows of their apps, operators manage them; a workflow of an app the
// actor may not see does not exist for them.

// previewLayout is how a preview writes a firing's local time (as the job
// validation's preview in admin/api does).
const previewLayout = "2006-01-02 15:04:05 MST"

// workflowPreviewFirings is how many next firings a workflow's validation
// lists.
const workflowPreviewFirings = 5

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// workflowObject is workflow id as the audit log names it.
func workflowObject(id int64) string { return "workflow/" + strconv.FormatInt(id, 10) }

// WorkflowView is the wire form of a stored workflow; its nodes and edges
// when the row has its definition (not in lists).
func WorkflowView(w store.Workflow) (apitypes.Workflow, error) {
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

// workflowSummary is v without its nodes and edges (lists, audit entries).
func workflowSummary(v apitypes.Workflow) apitypes.Workflow {
	v.Nodes, v.Edges = nil, nil
	return v
}

// invalidWorkflow is the ErrInvalid naming fields, in English only: the
// field errors of admin/workflow's validator have no message code yet, so
// every language shows them as written (msg.Text).
func invalidWorkflow(fields map[string]string) error {
	out := make(map[string]msg.Msg, len(fields))
	for k, v := range fields {
		out[k] = msg.New(msg.Text, "text", v)
	}
	return refuse(ErrInvalid, fielderr.Format("invalid workflow", fields), out)
}

// mayManageWorkflow refuses (ErrForbidden) a change to a workflow of an
// app a may not manage (a create in another app: the update and delete of
// one find no workflow first).
func mayManageWorkflow(a Actor, app string) error {
	if a.User.AppAllowed(app) {
		return nil
	}
	return refuse(ErrForbidden, "you may not manage workflows of app "+app,
		map[string]msg.Msg{"app": msg.New(msg.NotYourApp, "apps", a.User.Apps)})
}

// workflowRow validates spec into the row to store (without id, version
// and users), or refuses naming every field in error (ErrInvalid): the
// graph by admin/workflow.Validate (a cycle named in order, the node
// limit), and the schedule. anchor is the @every anchor: the workflow's
// creation. Nothing here reads the database.
func (s *Service) workflowRow(spec apitypes.WorkflowDef, anchor time.Time) (store.Workflow, error) {
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
		return store.Workflow{}, err
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
		return store.Workflow{}, invalidWorkflow(fields)
	}
	data, err := json.Marshal(def)
	if err != nil {
		return store.Workflow{}, err
	}
	row := store.Workflow{App: spec.App, Name: spec.Name, Description: spec.Description, CronExpr: spec.Cron, TimeZone: spec.TimeZone,
		Calendar: spec.Calendar, CalendarRule: spec.CalendarRule, CalendarShift: spec.CalendarShift, Enabled: *spec.Enabled,
		FailurePolicy: string(def.FailurePolicy), Definition: string(data), NodeCount: graph.Len(), Inline: inline}
	row.CreatedAt = anchor.UnixMilli() // the @every anchor of the schedule on a calendar (not written)
	if row.Enabled && sched != nil {
		row.NextFireAt = jobdef.NextFire(sched, s.cfg.Clock.Now()) // on a calendar: set again by checkWorkflowRefs
	}
	return row, nil
}

// checkWorkflowRefs checks what the definition refers to in the database:
// each node's job exists in an app a may manage (a field error on
// nodes[i].job otherwise, the same whether the job is missing or of
// another app: a workflow says nothing of other apps), and the calendar is
// one of the app's or a global one; so must the jobs and workflows a node
// waits for (checkWaitRefs). An ErrInvalid names the fields in error. It
// returns the schedule on the business calendar (nil without a calendar, a
// cron or when disabled), for the preview of a draft, and sets the next
// firing of row on it.
func (s *Service) checkWorkflowRefs(ctx context.Context, a Actor, spec apitypes.WorkflowDef, row *store.Workflow) (*schedule.CalendarSchedule, error) {
	var cs *schedule.CalendarSchedule
	u := a.User
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
			return nil, err
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
	if err := s.checkWaitRefs(ctx, a, spec, named, fields); err != nil {
		return nil, err
	}
	if spec.Calendar != "" {
		cals, err := s.st.CalendarsOfApps(ctx, []string{spec.App})
		if err != nil {
			return nil, err
		}
		var id int64
		for _, cal := range cals {
			if cal.Name == spec.Calendar && (id == 0 || cal.App == spec.App) {
				id = cal.ID // the app's own before a global one, as the engine does
			}
		}
		if id == 0 {
			fields["calendar"] = "no business calendar " + strconv.Quote(spec.Calendar) + " in app " + spec.App + " or among the global ones"
		} else if cs, err = s.nextFireOnCalendar(ctx, id, row, fields); err != nil {
			return nil, err
		}
	}
	if len(fields) > 0 {
		return nil, invalidWorkflow(fields)
	}
	return cs, nil
}

// checkWaitRefs checks the runs the nodes of spec wait for into fields:
// each job (looked up already, in jobs by app and name) and each workflow
// must exist in an app a may manage (the same words whether it is missing
// or of another app), and a node must not wait for its own job when it
// names that job by id. It returns only the errors of the database.
func (s *Service) checkWaitRefs(ctx context.Context, a Actor, spec apitypes.WorkflowDef, jobs map[[2]string]store.JobKey, fields map[string]string) error {
	u := a.User
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
					return err
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
	return nil
}

// nextFireOnCalendar builds the schedule of row on its calendar id, as a
// job's (a rule the calendar's days cannot take is a field error), and
// sets row.NextFireAt to its next event (jobdef.NextEvent: the next firing,
// or an earlier candidate the calendar removes, which the leader records
// as skipped) when the workflow is enabled and has a cron. It returns only
// the errors of the database.
func (s *Service) nextFireOnCalendar(ctx context.Context, id int64, row *store.Workflow, fields map[string]string) (*schedule.CalendarSchedule, error) {
	if row.CronExpr == "" || !row.Enabled {
		return nil, nil
	}
	stored, err := s.st.Calendar(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.onCalendar(stored, row, fields), nil
}

// onCalendar is nextFireOnCalendar once the calendar is read: nil when a
// field error is recorded into fields.
func (s *Service) onCalendar(stored store.Calendar, row *store.Workflow, fields map[string]string) *schedule.CalendarSchedule {
	cal, err := stored.Build()
	if err != nil {
		fields["calendar"] = err.Error()
		return nil
	}
	sched, err := schedule.Parse(schedule.Spec{Expr: row.CronExpr, Zone: row.TimeZone, JobKey: "workflow:" + row.App + "/" + row.Name, Anchor: time.UnixMilli(row.CreatedAt)})
	if err != nil {
		fields["cron"] = err.Error()
		return nil
	}
	cs, err := schedule.WithCalendar(sched, cal, jobrules.CalendarPolicy(store.JobCalendar{CalendarRule: row.CalendarRule, CalendarShift: row.CalendarShift}))
	if err != nil {
		fields["calendar_rule"] = err.Error()
		return nil
	}
	row.NextFireAt = jobdef.NextEvent(cs, s.cfg.Clock.Now())
	return cs
}

// Workflows lists the workflows of the apps a may see, without their
// definitions, by id after after; limit outside 1-500 is 100.
func (s *Service) Workflows(ctx context.Context, a Actor, after int64, limit int) ([]apitypes.Workflow, error) {
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	rows, err := s.st.WorkflowsOfApps(ctx, after, limit, a.User.AppList())
	if err != nil {
		return nil, err
	}
	out := make([]apitypes.Workflow, 0, len(rows))
	for _, w := range rows {
		v, _ := WorkflowView(w) // no definition in lists: cannot fail
		out = append(out, v)
	}
	return out, nil
}

// StoredWorkflow reads workflow id for a: ErrNotFound when it does not
// exist or is of an app a may not see.
func (s *Service) StoredWorkflow(ctx context.Context, a Actor, id int64) (store.Workflow, error) {
	w, err := s.st.Workflow(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !a.User.AppAllowed(w.App)) {
		return w, notFound("workflow", id)
	}
	return w, err
}

// Workflow returns workflow id with its definition.
func (s *Service) Workflow(ctx context.Context, a Actor, id int64) (apitypes.Workflow, error) {
	w, err := s.StoredWorkflow(ctx, a, id)
	if err != nil {
		return apitypes.Workflow{}, err
	}
	return WorkflowView(w)
}

// CreateWorkflow validates spec and stores it as a new workflow of an app
// a may manage. First what is wrong with the input (ErrInvalid), which
// says nothing of others' data; then whether a may manage the app
// (ErrForbidden); then the references (ErrInvalid). A taken name is an
// ErrConflict naming name.
func (s *Service) CreateWorkflow(ctx context.Context, a Actor, spec apitypes.WorkflowSpec) (apitypes.Workflow, error) {
	row, err := s.workflowRow(spec.WorkflowDef, s.cfg.Clock.Now())
	if err != nil {
		return apitypes.Workflow{}, err
	}
	if err := mayManageWorkflow(a, spec.App); err != nil {
		return apitypes.Workflow{}, err
	}
	if err := s.checkNodeSlots(ctx, spec.WorkflowDef); err != nil {
		return apitypes.Workflow{}, err
	}
	if _, err := s.checkWorkflowRefs(ctx, a, spec.WorkflowDef, &row); err != nil {
		return apitypes.Workflow{}, err
	}
	row.CreatedBy = a.User.Username
	id, err := s.st.CreateWorkflow(ctx, row)
	if errors.Is(err, store.ErrConflict) {
		return apitypes.Workflow{}, refuse(ErrConflict, err.Error(), map[string]msg.Msg{"name": msg.New(msg.WorkflowNameTaken, "app", row.App)})
	}
	if err != nil {
		return apitypes.Workflow{}, err
	}
	return s.savedWorkflow(ctx, a, id, "workflow.create", nil)
}

// savedWorkflow reads workflow id back, audits action with its summary
// (and before, when set) and returns it.
func (s *Service) savedWorkflow(ctx context.Context, a Actor, id int64, action string, before *apitypes.Workflow) (apitypes.Workflow, error) {
	w, err := s.st.Workflow(ctx, id)
	if err != nil {
		return apitypes.Workflow{}, err
	}
	v, err := WorkflowView(w)
	if err != nil {
		return apitypes.Workflow{}, err
	}
	s.wake()
	var detail any = workflowSummary(v)
	if before != nil {
		detail = map[string]any{"before": before, "after": workflowSummary(v)}
	}
	s.audit(ctx, a, w.App, action, workflowObject(id), detail)
	return v, nil
}

// UpdateWorkflow replaces the definition of workflow id with spec,
// guarded by the version spec says it read (ErrConflict when it changed
// since). The app and name stay (ErrInvalid naming them otherwise).
func (s *Service) UpdateWorkflow(ctx context.Context, a Actor, id int64, spec apitypes.WorkflowSpec) (apitypes.Workflow, error) {
	old, err := s.StoredWorkflow(ctx, a, id)
	if err != nil {
		return apitypes.Workflow{}, err
	}
	if err := KeepIdentity("a workflow and cannot change", &spec.App, &spec.Name, old.App, old.Name); err != nil {
		return apitypes.Workflow{}, err
	}
	if err := mayManageWorkflow(a, old.App); err != nil {
		return apitypes.Workflow{}, err
	}
	if err := VersionGiven(spec.Version, old.Version); err != nil {
		return apitypes.Workflow{}, err
	}
	row, err := s.workflowRow(spec.WorkflowDef, time.UnixMilli(old.CreatedAt))
	if err != nil {
		return apitypes.Workflow{}, err
	}
	if err := s.checkNodeSlots(ctx, spec.WorkflowDef); err != nil {
		return apitypes.Workflow{}, err
	}
	if _, err := s.checkWorkflowRefs(ctx, a, spec.WorkflowDef, &row); err != nil {
		return apitypes.Workflow{}, err
	}
	row.ID, row.Version, row.UpdatedBy = old.ID, spec.Version, a.User.Username
	err = s.st.UpdateWorkflow(ctx, row)
	if errors.Is(err, store.ErrConflict) {
		return apitypes.Workflow{}, refuse(ErrConflict, err.Error(), nil)
	}
	if err != nil {
		return apitypes.Workflow{}, err
	}
	old.Definition = ""
	before, _ := WorkflowView(old) // no definition: cannot fail
	return s.savedWorkflow(ctx, a, old.ID, "workflow.update", &before)
}

// DeleteWorkflow deletes workflow id; the store's refusal (a run in
// progress) is an ErrConflict.
func (s *Service) DeleteWorkflow(ctx context.Context, a Actor, id int64) error {
	w, err := s.StoredWorkflow(ctx, a, id)
	if err != nil {
		return err
	}
	if err := mayManageWorkflow(a, w.App); err != nil {
		return err
	}
	err = s.st.DeleteWorkflow(ctx, w.ID)
	if errors.Is(err, store.ErrConflict) {
		return refuse(ErrConflict, err.Error(), nil)
	}
	if err != nil {
		return err
	}
	s.audit(ctx, a, w.App, "workflow.delete", workflowObject(w.ID), map[string]any{"name": w.Name, "version": w.Version})
	s.wake()
	return nil
}

// ValidateWorkflow checks a workflow definition as a save would — the
// graph, the schedule, the jobs its nodes name (in apps a may manage) —
// without saving it, and returns its drawing and next firings: the
// console's editor previews the draft as it is typed. Every mistake is an
// ErrInvalid naming its field, as on save.
func (s *Service) ValidateWorkflow(ctx context.Context, a Actor, spec apitypes.WorkflowSpec) (apitypes.WorkflowValidation, error) {
	now := s.cfg.Clock.Now()
	row, err := s.workflowRow(spec.WorkflowDef, now)
	if err != nil {
		return apitypes.WorkflowValidation{}, err
	}
	if err := mayManageWorkflow(a, row.App); err != nil {
		return apitypes.WorkflowValidation{}, err
	}
	cs, err := s.checkWorkflowRefs(ctx, a, spec.WorkflowDef, &row)
	if err != nil {
		return apitypes.WorkflowValidation{}, err
	}
	layout, err := layoutOf(row)
	if err != nil {
		return apitypes.WorkflowValidation{}, err
	}
	out := apitypes.WorkflowValidation{Valid: true, Layout: layout, Next: []apitypes.WorkflowFiring{}}
	switch {
	case cs != nil:
		// On a business calendar: the firings as the engine makes them,
		// shifted ones at their new instant (the firings the calendar
		// removes are recorded as skipped runs, not listed here).
		for _, f := range cs.Preview(now, workflowPreviewFirings) {
			out.Next = append(out.Next, apitypes.WorkflowFiring{At: f.At.UTC(), Local: f.Local.Format(previewLayout),
				BusinessDate: f.Local.Format(time.DateOnly)})
		}
	case row.CronExpr != "":
		row.CreatedAt = now.UnixMilli() // the @every anchor of a new workflow
		sc, err := workflowrun.ScheduleOf(row)
		if err != nil { // workflowRow parsed it: not reached
			return apitypes.WorkflowValidation{}, err
		}
		for _, f := range sc.Preview(now, workflowPreviewFirings) {
			out.Next = append(out.Next, apitypes.WorkflowFiring{At: f.At.UTC(), Local: f.Local.Format(previewLayout),
				BusinessDate: f.Local.Format(time.DateOnly)})
		}
	}
	return out, nil
}

// WorkflowLayout returns the layered drawing of workflow id's graph (its
// current version), computed by admin/workflow so that the console, the
// CLI and tests draw the same picture.
func (s *Service) WorkflowLayout(ctx context.Context, a Actor, id int64) (apitypes.WorkflowLayout, error) {
	w, err := s.StoredWorkflow(ctx, a, id)
	if err != nil {
		return apitypes.WorkflowLayout{}, err
	}
	return layoutOf(w)
}

// layoutOf lays out a stored workflow's definition. A stored definition
// passed validation when it was saved; failing now is an internal error.
func layoutOf(w store.Workflow) (apitypes.WorkflowLayout, error) {
	var def workflow.Definition
	if err := json.Unmarshal([]byte(w.Definition), &def); err != nil {
		return apitypes.WorkflowLayout{}, fmt.Errorf("workflow %d: stored definition: %w", w.ID, err)
	}
	g, err := workflow.Validate(def)
	if err != nil {
		return apitypes.WorkflowLayout{}, fmt.Errorf("workflow %d: stored definition: %w", w.ID, err)
	}
	l := g.Layout()
	out := apitypes.WorkflowLayout{WorkflowID: w.ID, Version: w.Version, Layers: l.Layers, Rows: l.Rows, Crossings: l.Crossings,
		Nodes: make([]apitypes.WorkflowLayoutNode, len(l.Nodes)), Edges: make([]apitypes.WorkflowLayoutEdge, len(l.Edges))}
	for i, n := range l.Nodes {
		out.Nodes[i] = apitypes.WorkflowLayoutNode{Key: n.Key, Layer: n.Layer, Row: n.Row, X: n.X, Y: n.Y}
	}
	for i, e := range l.Edges {
		pts := make([]apitypes.WorkflowPoint, len(e.Points))
		for j, p := range e.Points {
			pts[j] = apitypes.WorkflowPoint{X: p.X, Y: p.Y}
		}
		out.Edges[i] = apitypes.WorkflowLayoutEdge{From: e.From, To: e.To, Points: pts}
	}
	return out, nil
}
