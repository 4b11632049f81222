package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/backfill"
	"github.com/shardjob/shardjob/admin/internal/fielderr"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// backfillJob creates the runs of a plain job for a range of business
// dates (or, as a dry run, lists what it would do): 201 with the plan and
// the backfill's id, 200 for a dry run. Field errors name from, to,
// parallel or params. The job of a workflow's inline node is 409 (it runs
// with its workflow: backfill the workflow), a job that does not exist or
// of an app the caller may not see 404.
func (s *Server) backfillJob(c *gin.Context) {
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var req apitypes.JobBackfill
	if !decode(c, &req) {
		return
	}
	if req.Parallel == 0 {
		req.Parallel = 1
	}
	breq := backfill.Request{From: req.From, To: req.To, NewestFirst: req.NewestFirst, Parallel: req.Parallel, OnlyMissing: req.OnlyMissing}
	_, fields := backfill.Dates(breq)
	if !backfillRequestValid(c, fields, req.Params) {
		return
	}
	ctx := c.Request.Context()
	loc, err := schedule.ValidateZone(j.TimeZone)
	if err != nil {
		loc = time.UTC // a stored zone that no longer loads: its runs are planned in UTC
	}
	next, err := s.jobFirings(ctx, j)
	if err != nil {
		s.internal(c, err)
		return
	}
	first, _ := backfill.DayStart(req.From, loc) // checked by Dates
	last, _ := backfill.DayStart(req.To, loc)
	found, err := s.st.JobRunsOfRange(ctx, j.ID, first.UnixMilli(), last.AddDate(0, 0, 1).UnixMilli(), req.From, req.To)
	if err != nil {
		s.internal(c, err)
		return
	}
	runs := make([]backfill.JobRun, len(found))
	for i, r := range found {
		runs[i] = backfill.JobRun{ID: r.ID, ScheduledAt: r.ScheduledAt, Status: r.Status, WorkflowDate: r.WorkflowDate}
	}
	plan, fields := backfill.PlanJob(breq, loc, next, runs)
	if !backfillRequestValid(c, fields, "") {
		return
	}
	out := apitypes.JobBackfillPlan{DryRun: req.DryRun, Dates: make([]apitypes.JobBackfillDate, len(plan))}
	for i, d := range plan {
		out.Dates[i] = apitypes.JobBackfillDate{Date: d.Date, Action: d.Action, ScheduledAt: d.ScheduledAt.UTC(), RunID: d.RunID}
		if d.Action == backfill.Create {
			out.Created++
		}
	}
	object := "job/" + strconv.FormatInt(j.ID, 10)
	detail := map[string]any{"from": req.From, "to": req.To, "parallel": req.Parallel, "newest_first": req.NewestFirst,
		"only_missing": req.OnlyMissing, "dry_run": req.DryRun, "dates": len(plan), "created": out.Created}
	if req.DryRun {
		s.audit(c, j.App, "job.backfill", object, detail)
		c.JSON(http.StatusOK, out)
		return
	}
	user := currentUser(c).Username
	id, made, created, err := s.createJobBackfill(ctx, store.JobBackfill{JobID: j.ID, App: j.App, FromDate: req.From, ToDate: req.To,
		NewestFirst: req.NewestFirst, Parallel: req.Parallel, OnlyMissing: req.OnlyMissing, CreatedBy: user},
		jobBackfillRuns(j, plan, req.Params, s.cfg.Clock.Now()))
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		fail(c, http.StatusNotFound, "job "+c.Param("id")+" does not exist")
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	out.BackfillID, out.Created = id, 0
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
	detail["backfill_id"], detail["created"] = id, out.Created
	s.audit(c, j.App, "job.backfill", object, detail)
	s.wake()
	c.JSON(http.StatusCreated, out)
}

// createJobBackfill writes a job backfill fenced by the leader's epoch,
// reading the epoch again once if a new leader was elected in between.
func (s *Server) createJobBackfill(ctx context.Context, b store.JobBackfill, runs []store.NewRun) (int64, []store.Run, []bool, error) {
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
func jobBackfillRuns(j store.Job, plan []backfill.JobDate, params string, now time.Time) []store.NewRun {
	var out []store.NewRun
	for _, d := range plan {
		if d.Action != backfill.Create {
			continue
		}
		r := jobrules.NewRun(j, d.ScheduledAt.UnixMilli(), store.TriggerBackfill, store.RunPending)
		if params != "" {
			r.Params = params
		}
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
func (s *Server) jobFirings(ctx context.Context, j store.Job) (backfill.Next, error) {
	sc, err := jobrules.ScheduleOf(j)
	if err != nil {
		return nil, nil //nolint:nilerr // no schedule: midnight of each date
	}
	if !j.HasCalendar() {
		return sc.Next, nil
	}
	_, cal, err := s.ops.CalendarFor(ctx, j.CalendarID, j.App)
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

// backfillRequestValid answers 400 naming the fields in error (from, to,
// parallel from backfill.Dates, and params: empty or a JSON object) of a
// backfill of a job or a workflow, and returns false, when there are any.
func backfillRequestValid(c *gin.Context, fields map[string]msg.Msg, params string) bool {
	if m, bad := runParamsError(params); bad {
		if fields == nil {
			fields = map[string]msg.Msg{}
		}
		fields["params"] = m
	}
	if len(fields) == 0 {
		return true
	}
	c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: fielderr.Format("invalid backfill", jobdef.FieldMsgs(fields).English()), Fields: fields})
	return false
}

// listJobBackfills lists the backfills of a job, newest first
// (?before=ID&limit=N, at most 500, default 50).
func (s *Server) listJobBackfills(c *gin.Context) {
	j, ok := s.loadJob(c)
	if !ok {
		return
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	list, err := s.st.JobBackfills(c.Request.Context(), j.ID, before, limit)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.JobBackfillView, 0, len(list))
	for _, b := range list {
		out = append(out, apitypes.JobBackfillView{ID: b.ID, JobID: b.JobID, From: b.FromDate, To: b.ToDate, NewestFirst: b.NewestFirst,
			Parallel: b.Parallel, OnlyMissing: b.OnlyMissing, CreatedBy: b.CreatedBy, CreatedAt: msTime(b.CreatedAt),
			Runs: b.Runs, Pending: b.Pending, Running: b.Running, Succeeded: b.Succeeded})
	}
	c.JSON(http.StatusOK, gin.H{"backfills": out})
}
