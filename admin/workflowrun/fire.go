package workflowrun

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
)

// Fire creates the runs of the enabled workflows whose cron firing is due
// (Config.Clock), in one transaction fenced by epoch per Batch workflows:
// schedule.Plan decides, as for jobs, which firings run and which are
// recorded as skipped (misfire policy run_once, threshold 60s: a leader
// that was away fires the latest missed firing once and records the
// others). Each run is keyed by its scheduled instant
// (store.WorkflowRunKeyAt), so a firing created twice — by two leaders
// across a failover — is one run; its business date is the scheduled day
// in the workflow's zone. It returns how many runs it created.
func (e *Engine) Fire(ctx context.Context, epoch int64) (int, error) {
	total := 0
	for {
		n, claimed, err := e.fireBatch(ctx, epoch)
		total += n
		if err != nil || claimed < e.cfg.Batch {
			return total, err
		}
	}
}

func (e *Engine) fireBatch(ctx context.Context, epoch int64) (created, claimed int, err error) {
	now := e.cfg.Clock.Now()
	err = e.st.Tx(ctx, func(tx *store.Tx) error {
		created, claimed = 0, 0
		if err := tx.CheckEpoch(ctx, epoch); err != nil {
			return err
		}
		due, err := tx.DueWorkflows(ctx, now.UnixMilli(), e.cfg.Batch)
		if err != nil {
			return err
		}
		claimed = len(due)
		for _, w := range due {
			n, err := e.fireOne(ctx, tx, epoch, w, now)
			if err != nil {
				return err
			}
			created += n
		}
		return nil
	})
	switch {
	case err == nil:
		e.count(func(s *Stats) { s.Fired += int64(created) })
	case errors.Is(err, store.ErrStaleEpoch):
		e.count(func(s *Stats) { s.StaleAborts++ })
	}
	return created, claimed, err
}

// ScheduleOf parses the schedule of workflow w as the engine fires it: its
// H fields hashed by "workflow:app/name", anchored at its creation. The
// watchdog's gap audit expects the same firings.
func ScheduleOf(w store.Workflow) (*schedule.Schedule, error) {
	return schedule.Parse(schedule.Spec{Expr: w.CronExpr, Zone: w.TimeZone, JobKey: "workflow:" + w.App + "/" + w.Name, Anchor: time.UnixMilli(w.CreatedAt)})
}

// fireOne creates the due runs of workflow w and moves its next firing.
func (e *Engine) fireOne(ctx context.Context, tx *store.Tx, epoch int64, w store.Workflow, now time.Time) (int, error) {
	sc, err := ScheduleOf(w)
	if err != nil {
		// A stored schedule that no longer parses (zone data changed):
		// stop firing it and say why, rather than loop on it.
		e.cfg.Logger.Error("workflow schedule is invalid; its firing stops", "workflow_id", w.ID, "workflow", w.App+"/"+w.Name, "err", err)
		return 0, tx.SetWorkflowNextFire(ctx, w.ID, w.Version, sql.NullInt64{})
	}
	loc, err := time.LoadLocation(w.TimeZone)
	if err != nil {
		loc = time.UTC // Parse accepted the zone: not reached
	}
	created := 0
	add := func(at time.Time, kind, status string, reason msg.Msg) error {
		_, ok, err := tx.CreateWorkflowRun(ctx, epoch, store.NewWorkflowRun{
			WorkflowID: w.ID, App: w.App, RunKey: store.WorkflowRunKeyAt(at.UnixMilli()), WorkflowVersion: w.Version,
			ScheduledAt: at.UnixMilli(), BusinessDate: at.In(loc).Format(time.DateOnly), TriggerKind: kind, Status: status, Reason: reason,
		})
		if ok && status == store.RunPending {
			created++
		}
		return err
	}
	if w.Calendar != "" {
		return created, e.fireOnCalendar(ctx, tx, w, sc, now, add)
	}
	d := schedule.Plan(sc, time.UnixMilli(w.NextFireAt.Int64), now, schedule.MisfireConfig{})
	kind := store.TriggerCron
	if d.Misfired {
		kind = store.TriggerCatchUp
	}
	for _, at := range d.Fire {
		if err := add(at, kind, store.RunPending, msg.Msg{}); err != nil {
			return created, err
		}
	}
	for _, at := range d.Skipped {
		reason := msg.New(msg.RunSkippedMisfire, "policy", string(schedule.MisfireRunOnce), "threshold_ms", schedule.DefaultMisfireThreshold.Milliseconds())
		if err := add(at, kind, store.RunSkipped, reason); err != nil {
			return created, err
		}
	}
	next := sql.NullInt64{}
	if !d.Next.IsZero() {
		next = sql.NullInt64{Int64: d.Next.UnixMilli(), Valid: true}
	}
	if err := tx.SetWorkflowNextFire(ctx, w.ID, w.Version, next); err != nil {
		return created, err
	}
	return created, nil
}

// fireOnCalendar fires workflow w, whose schedule sc is on the business
// calendar it names (the app's own, else a global one), with the jobs'
// calendar planning (scheduler.PlanCalendar, misfire policy run_once,
// threshold 60s): a firing the calendar removes is recorded as a skipped
// run keyed by its scheduled instant with the reason (a holiday, a
// non-working day…), a shifted firing runs keyed by its moved instant, and
// a run's business date is the day of its (moved) instant in the
// workflow's zone. A calendar that no longer exists or no longer builds,
// or a schedule that no longer fits it, stops the firing (next NULL) with
// an error in the log, as for jobs.
func (e *Engine) fireOnCalendar(ctx context.Context, tx *store.Tx, w store.Workflow, sc *schedule.Schedule, now time.Time,
	add func(at time.Time, kind, status string, reason msg.Msg) error) error {
	stop := func(why string, err error) error {
		e.cfg.Logger.Error(why+"; its firing stops", "workflow_id", w.ID, "workflow", w.App+"/"+w.Name, "calendar", w.Calendar, "err", err)
		return tx.SetWorkflowNextFire(ctx, w.ID, w.Version, sql.NullInt64{})
	}
	id, found, err := tx.CalendarIDByName(ctx, w.App, w.Calendar)
	if err != nil {
		return err
	}
	if !found {
		return stop("workflow's calendar does not exist", nil)
	}
	row, err := tx.Calendar(ctx, id)
	if err != nil {
		return err
	}
	cal, err := row.Build()
	if err != nil {
		return stop("workflow's calendar does not load", err)
	}
	// A workflow saved with a calendar before migration 0028 has no rule:
	// business_days_only, the API's default.
	rule := cmp.Or(w.CalendarRule, "business_days_only")
	cs, err := schedule.WithCalendar(sc, cal, jobrules.CalendarPolicy(store.JobCalendar{CalendarRule: rule, CalendarShift: w.CalendarShift}))
	if err != nil {
		return stop("workflow schedule is invalid on its calendar", err)
	}
	j := store.Job{App: w.App, Name: w.Name, TimeZone: w.TimeZone, MisfirePolicy: string(schedule.MisfireRunOnce),
		MisfireMS: schedule.DefaultMisfireThreshold.Milliseconds(), OverlapPolicy: string(schedule.OverlapAllow)}
	runs, next := scheduler.PlanCalendar(j, cs, time.UnixMilli(w.NextFireAt.Int64), now)
	for _, r := range runs {
		if err := add(time.UnixMilli(r.ScheduledAt), r.TriggerKind, r.Status, r.Reason); err != nil {
			return err
		}
	}
	return tx.SetWorkflowNextFire(ctx, w.ID, w.Version, next)
}
