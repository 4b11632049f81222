package workflowrun

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
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
	d := schedule.Plan(sc, time.UnixMilli(w.NextFireAt.Int64), now, schedule.MisfireConfig{})
	kind := store.TriggerCron
	if d.Misfired {
		kind = store.TriggerCatchUp
	}
	created := 0
	add := func(at time.Time, status string, reason msg.Msg) error {
		_, ok, err := tx.CreateWorkflowRun(ctx, epoch, store.NewWorkflowRun{
			WorkflowID: w.ID, App: w.App, RunKey: store.WorkflowRunKeyAt(at.UnixMilli()), WorkflowVersion: w.Version,
			ScheduledAt: at.UnixMilli(), BusinessDate: at.In(loc).Format(time.DateOnly), TriggerKind: kind, Status: status, Reason: reason,
		})
		if ok && status == store.RunPending {
			created++
		}
		return err
	}
	for _, at := range d.Fire {
		if err := add(at, store.RunPending, msg.Msg{}); err != nil {
			return created, err
		}
	}
	for _, at := range d.Skipped {
		reason := msg.New(msg.RunSkippedMisfire, "policy", string(schedule.MisfireRunOnce), "threshold_ms", schedule.DefaultMisfireThreshold.Milliseconds())
		if err := add(at, store.RunSkipped, reason); err != nil {
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
