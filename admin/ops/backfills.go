package ops

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/backfill"
	"github.com/shardjob/shardjob/admin/internal/fielderr"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// backfillRefusal is the ErrInvalid naming the fields in error of a
// backfill of a job or a workflow (from, to, parallel from the plan, and
// params: empty or a JSON object); nil when there are none.
func backfillRefusal(fields map[string]msg.Msg, params string) error {
	if m, bad := runParamsError(params); bad {
		if fields == nil {
			fields = map[string]msg.Msg{}
		}
		fields["params"] = m
	}
	if len(fields) == 0 {
		return nil
	}
	return refuse(ErrInvalid, fielderr.Format("invalid backfill", jobdef.FieldMsgs(fields).English()), fields)
}

// backfillDetail is the audit detail of a backfill request and its plan.
func backfillDetail(from, to string, parallel int, newestFirst, onlyMissing, dryRun bool, dates, created int) map[string]any {
	return map[string]any{"from": from, "to": to, "parallel": parallel, "newest_first": newestFirst,
		"only_missing": onlyMissing, "dry_run": dryRun, "dates": dates, "created": created}
}

// BackfillWorkflow creates the runs of workflow id for a range of business
// dates (or, as a dry run, says what it would do) and returns the plan,
// with the backfill's id when it was created. Parallel 0 is 1. An
// ErrInvalid names from, to, parallel or params.
func (s *Service) BackfillWorkflow(ctx context.Context, a Actor, id int64, req apitypes.WorkflowBackfill) (apitypes.WorkflowBackfillPlan, error) {
	w, reach, err := s.actingWorkflow(ctx, a, id)
	if err != nil {
		return apitypes.WorkflowBackfillPlan{}, err
	}
	if req.Parallel == 0 {
		req.Parallel = 1
	}
	if err := s.checkBackfillQuota(ctx, w.App, req.Parallel); err != nil {
		return apitypes.WorkflowBackfillPlan{}, err
	}
	existing, err := s.st.RunsOfDates(ctx, w.ID, req.From, req.To)
	if err != nil {
		return apitypes.WorkflowBackfillPlan{}, err
	}
	plan, fields := workflowrun.PlanBackfill(workflowrun.BackfillRequest{From: req.From, To: req.To, NewestFirst: req.NewestFirst,
		Parallel: req.Parallel, OnlyMissing: req.OnlyMissing}, existing)
	if req.Priority != "" {
		if fields == nil {
			fields = map[string]msg.Msg{}
		}
		fields["priority"] = msg.New(msg.BackfillNoPriority)
	}
	if err := backfillRefusal(fields, req.Params); err != nil {
		return apitypes.WorkflowBackfillPlan{}, err
	}
	out := apitypes.WorkflowBackfillPlan{DryRun: req.DryRun, Dates: make([]apitypes.WorkflowBackfillDate, len(plan))}
	for i, d := range plan {
		out.Dates[i] = apitypes.WorkflowBackfillDate{Date: d.Date, Action: d.Action, RunID: d.RunID}
		if d.Action == workflowrun.BackfillCreate {
			out.Created++
		}
	}
	detail := backfillDetail(req.From, req.To, req.Parallel, req.NewestFirst, req.OnlyMissing, req.DryRun, len(plan), out.Created)
	if req.DryRun {
		s.audit(ctx, a, w.App, "workflow.backfill", workflowObject(w.ID), detail)
		s.auditReach(ctx, a, reach, "workflow.backfill", workflowObject(w.ID), detail)
		return out, nil
	}
	loc, err := time.LoadLocation(w.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	rec, err := s.st.Leader(ctx)
	if err != nil {
		return apitypes.WorkflowBackfillPlan{}, err
	}
	runs := workflowrun.BackfillRuns(w, plan, loc, req.Params, a.User.Username)
	bid, made, created, err := s.st.CreateBackfill(ctx, rec.Epoch, store.Backfill{WorkflowID: w.ID, App: w.App,
		FromDate: req.From, ToDate: req.To, NewestFirst: req.NewestFirst, Parallel: req.Parallel, OnlyMissing: req.OnlyMissing,
		CreatedBy: a.User.Username}, runs)
	if err != nil {
		return apitypes.WorkflowBackfillPlan{}, err
	}
	out.BackfillID, out.Created = bid, 0
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
	detail["backfill_id"], detail["created"] = bid, out.Created
	s.audit(ctx, a, w.App, "workflow.backfill", workflowObject(w.ID), detail)
	s.auditReach(ctx, a, reach, "workflow.backfill", workflowObject(w.ID), detail)
	s.wakeWorkflows()
	return out, nil
}

// BackfillJob creates the runs of plain job id for a range of business
// dates (or, as a dry run, says what it would do) and returns the plan,
// with the backfill's id when it was created. Parallel 0 is 1. An
// ErrInvalid names from, to, parallel or params; the job of a workflow's
// inline node is an ErrConflict (it runs with its workflow: backfill the
// workflow), a job that does not exist or of an app a may not see
// ErrNotFound.
func (s *Service) BackfillJob(ctx context.Context, a Actor, id int64, req apitypes.JobBackfill) (apitypes.JobBackfillPlan, error) {
	j, err := s.OwnJob(ctx, a, id)
	if err != nil {
		return apitypes.JobBackfillPlan{}, err
	}
	reach, err := s.jobActing(ctx, a, j)
	if err != nil {
		return apitypes.JobBackfillPlan{}, err
	}
	if req.Parallel == 0 {
		req.Parallel = 1
	}
	if err := s.checkBackfillQuota(ctx, j.App, req.Parallel); err != nil {
		return apitypes.JobBackfillPlan{}, err
	}
	breq := backfill.Request{From: req.From, To: req.To, NewestFirst: req.NewestFirst, Parallel: req.Parallel, OnlyMissing: req.OnlyMissing}
	_, fields := backfill.Dates(breq)
	prio, m := runPriority(j, req.Priority)
	if !m.IsZero() {
		if fields == nil {
			fields = map[string]msg.Msg{}
		}
		fields["priority"] = m
	}
	if err := backfillRefusal(fields, req.Params); err != nil {
		return apitypes.JobBackfillPlan{}, err
	}
	loc, err := schedule.ValidateZone(j.TimeZone)
	if err != nil {
		loc = time.UTC // a stored zone that no longer loads: its runs are planned in UTC
	}
	next, err := s.jobFirings(ctx, j)
	if err != nil {
		return apitypes.JobBackfillPlan{}, err
	}
	first, _ := backfill.DayStart(req.From, loc) // checked by Dates
	last, _ := backfill.DayStart(req.To, loc)
	found, err := s.st.JobRunsOfRange(ctx, j.ID, first.UnixMilli(), last.AddDate(0, 0, 1).UnixMilli(), req.From, req.To)
	if err != nil {
		return apitypes.JobBackfillPlan{}, err
	}
	runs := make([]backfill.JobRun, len(found))
	for i, r := range found {
		runs[i] = backfill.JobRun{ID: r.ID, ScheduledAt: r.ScheduledAt, Status: r.Status, WorkflowDate: r.WorkflowDate}
	}
	plan, fields := backfill.PlanJob(breq, loc, next, runs)
	if err := backfillRefusal(fields, ""); err != nil {
		return apitypes.JobBackfillPlan{}, err
	}
	out := apitypes.JobBackfillPlan{DryRun: req.DryRun, Dates: make([]apitypes.JobBackfillDate, len(plan))}
	for i, d := range plan {
		out.Dates[i] = apitypes.JobBackfillDate{Date: d.Date, Action: d.Action, ScheduledAt: d.ScheduledAt.UTC(), RunID: d.RunID}
		if d.Action == backfill.Create {
			out.Created++
		}
	}
	detail := backfillDetail(req.From, req.To, req.Parallel, req.NewestFirst, req.OnlyMissing, req.DryRun, len(plan), out.Created)
	if req.DryRun {
		s.audit(ctx, a, j.App, "job.backfill", jobObject(j.ID), detail)
		s.auditReach(ctx, a, reach, "job.backfill", jobObject(j.ID), detail)
		return out, nil
	}
	bid, made, created, err := s.createJobBackfill(ctx, store.JobBackfill{JobID: j.ID, App: j.App, FromDate: req.From, ToDate: req.To,
		NewestFirst: req.NewestFirst, Parallel: req.Parallel, OnlyMissing: req.OnlyMissing, CreatedBy: a.User.Username},
		jobBackfillRuns(j, plan, req.Params, prio, s.cfg.Clock.Now()))
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		return apitypes.JobBackfillPlan{}, notFound("job", id)
	}
	if err != nil {
		return apitypes.JobBackfillPlan{}, err
	}
	out.BackfillID, out.Created = bid, 0
	byAt := make(map[int64]int, len(made))
	for i, r := range made {
		byAt[r.ScheduledAt] = i
	}
	for i, d := range out.Dates {
		k, ok := byAt[d.ScheduledAt.UnixMilli()]
		if !ok || d.Action != backfill.Create {
			continue
		}
		out.Dates[i].RunID = made[k].ID
		if created[k] {
			out.Created++
		} else {
			out.Dates[i].Action = backfill.Exists // created by someone else since the plan
		}
	}
	detail["backfill_id"], detail["created"] = bid, out.Created
	s.audit(ctx, a, j.App, "job.backfill", jobObject(j.ID), detail)
	s.auditReach(ctx, a, reach, "job.backfill", jobObject(j.ID), detail)
	s.wake()
	return out, nil
}

// createJobBackfill writes a job backfill fenced by the leader's epoch,
// reading the epoch again once if a new leader was elected in between.
func (s *Service) createJobBackfill(ctx context.Context, b store.JobBackfill, runs []store.NewRun) (int64, []store.Run, []bool, error) {
	for try := 0; ; try++ {
		rec, err := s.st.Leader(ctx)
		if err != nil {
			return 0, nil, nil, err
		}
		id, made, created, err := s.st.CreateJobBackfill(ctx, rec.Epoch, b, runs)
		if !errors.Is(err, store.ErrStaleEpoch) || try > 0 {
			return id, made, created, err
		}
	}
}

// jobBackfillRuns are the runs a backfill of job j creates for plan (its
// dates to create, in order): each as a manual run of the date's instant
// (the job's slots, zone, records policy and params, or params when
// given), with trigger kind backfill. A deadline already past at now (a
// past date's) is left out: a backfilled date is late by design, and the
// backfill's parallelism, not the deadline, decides when it runs.
func jobBackfillRuns(j store.Job, plan []backfill.JobDate, params string, prio sql.NullInt64, now time.Time) []store.NewRun {
	var out []store.NewRun
	for _, d := range plan {
		if d.Action != backfill.Create {
			continue
		}
		r := jobrules.NewRun(j, d.ScheduledAt.UnixMilli(), store.TriggerBackfill, store.RunPending)
		if params != "" {
			r.Params = params
		}
		r.Priority = prio
		r.Deadlines = futureDeadlines(r.Deadlines, now.UnixMilli())
		out = append(out, r)
	}
	return out
}

// futureDeadlines is d without the deadlines at or before nowMS.
func futureDeadlines(d store.RunDeadlines, nowMS int64) store.RunDeadlines {
	start, finish := d.StartDeadlineAt.Int64, d.FinishDeadlineAt.Int64
	if !d.StartDeadlineAt.Valid || start <= nowMS {
		start = 0
	}
	if !d.FinishDeadlineAt.Valid || finish <= nowMS {
		finish = 0
	}
	return jobrules.DeadlinesAt(start, finish, d.DeadlineAction)
}

// jobFirings is the schedule of stored job j as the leader fires it (on its
// business calendar when it has one), for the instant of each backfilled
// date; nil when its schedule no longer parses (each date's run is then at
// its midnight).
func (s *Service) jobFirings(ctx context.Context, j store.Job) (backfill.Next, error) {
	sc, err := jobrules.ScheduleOf(j)
	if err != nil {
		return nil, nil //nolint:nilerr // no schedule: midnight of each date
	}
	if !j.HasCalendar() {
		return sc.Next, nil
	}
	_, cal, err := s.CalendarFor(ctx, j.CalendarID, j.App)
	if err != nil {
		return nil, err
	}
	cs, err := jobdef.CalendarScheduleOf(j, cal)
	if err != nil {
		return nil, nil //nolint:nilerr // no schedule on the calendar: midnight of each date
	}
	return func(after time.Time) time.Time {
		f, err := cs.Next(after)
		if err != nil {
			return time.Time{}
		}
		return f.At
	}, nil
}

// JobBackfills lists the backfills of job id, newest first, before the
// backfill of id before (0: from the newest), at most limit (the store's
// bounds).
func (s *Service) JobBackfills(ctx context.Context, a Actor, id, before int64, limit int) ([]apitypes.JobBackfillView, error) {
	j, err := s.StoredJob(ctx, a, id)
	if err != nil {
		return nil, err
	}
	list, err := s.st.JobBackfills(ctx, j.ID, before, limit)
	if err != nil {
		return nil, err
	}
	out := make([]apitypes.JobBackfillView, 0, len(list))
	for _, b := range list {
		out = append(out, apitypes.JobBackfillView{ID: b.ID, JobID: b.JobID, From: b.FromDate, To: b.ToDate, NewestFirst: b.NewestFirst,
			Parallel: b.Parallel, OnlyMissing: b.OnlyMissing, CreatedBy: b.CreatedBy, CreatedAt: msTime(b.CreatedAt),
			Runs: b.Runs, Pending: b.Pending, Running: b.Running, Succeeded: b.Succeeded})
	}
	return out, nil
}
