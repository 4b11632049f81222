package scheduler

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// The kinds of deadline a run can miss (Observer.DeadlineMissed, the label
// of shardjob_deadlines_missed_total).
const (
	DeadlineStart  = "start"  // its first slot had not started: run_late_start
	DeadlineFinish = "finish" // it had not finished: run_deadline_missed
)

// DeadlineKinds lists the kinds, for metrics.
var DeadlineKinds = []string{DeadlineStart, DeadlineFinish}

// deadlinesPerTick bounds the runs one deadline check reads; the rest wait
// for the next tick (one indexed query each).
const deadlinesPerTick = 1000

// DeadlineDecision is what the leader does about a run whose earliest
// unchecked deadline has passed.
type DeadlineDecision struct {
	LateStart bool          // raise run_late_start
	Missed    bool          // raise run_deadline_missed
	Cancel    bool          // and cancel the run (deadline_action cancel, run still active)
	Next      sql.NullInt64 // the next deadline to check (NULL: none left)
}

// DecideDeadlines decides about run r at nowMS (Unix ms, the leader's
// clock). A deadline is unchecked while it is at or after r.DeadlineCheckAt;
// those at or before nowMS are checked now:
//
//   - start: met when the first slot started at or before it; a run that
//     ended before it without starting (cancelled, failed for want of an
//     executor) did not start late; otherwise it is late;
//   - finish: met when the run finished at or before it; otherwise missed,
//     and cancelled by action cancel while still pending or running.
func DecideDeadlines(r store.DueDeadline, nowMS int64) DeadlineDecision {
	var d DeadlineDecision
	unchecked := func(at sql.NullInt64) bool {
		return at.Valid && r.DeadlineCheckAt.Valid && at.Int64 >= r.DeadlineCheckAt.Int64
	}
	before := func(t sql.NullInt64, limit int64) bool { return t.Valid && t.Int64 <= limit }
	later := func(at sql.NullInt64) {
		if !d.Next.Valid || at.Int64 < d.Next.Int64 {
			d.Next = at
		}
	}
	if s := r.StartDeadlineAt; unchecked(s) {
		if s.Int64 > nowMS {
			later(s)
		} else if !before(r.FirstStartedAt, s.Int64) && !before(r.FinishedAt, s.Int64) {
			d.LateStart = true
		}
	}
	if f := r.FinishDeadlineAt; unchecked(f) {
		if f.Int64 > nowMS {
			later(f)
		} else if !before(r.FinishedAt, f.Int64) {
			d.Missed = true
			active := r.Status == store.RunPending || r.Status == store.RunRunning
			d.Cancel = active && r.DeadlineAction == store.DeadlineCancel
		}
	}
	return d
}

// CheckDeadlines is the leader's deadline duty: one indexed query for the
// runs whose earliest unchecked deadline has passed; for each, the alarms
// (deduplicated per run and kind, so that a check repeated by the next
// leader raises nothing twice), the cancel of action cancel (the run state
// machine's, pushed to the executors as the API does), and the next
// deadline to check.
func (s *Scheduler) CheckDeadlines(ctx context.Context) error {
	now := s.cfg.Clock.Now().UnixMilli()
	due, err := s.store.DeadlinesDue(ctx, now, deadlinesPerTick)
	if err != nil || len(due) == 0 {
		return err
	}
	checked := make([]store.DeadlineChecked, 0, len(due))
	for _, r := range due {
		d := DecideDeadlines(r, now)
		if d.LateStart {
			if err := s.raiseDeadline(ctx, r, DeadlineStart, store.AlarmRunLateStart, "warning",
				msg.New(msg.AlarmRunLateStart, "app", r.App, "job", r.JobName, "run", r.ID,
					"scheduled", fmtMS(r.ScheduledAt), "deadline", fmtMS(r.StartDeadlineAt.Int64))); err != nil {
				return err
			}
		}
		if d.Missed {
			code := msg.AlarmDeadlineMissed
			if d.Cancel {
				reason := msg.New(msg.RunDeadlineCancelled, "deadline", fmtMS(r.FinishDeadlineAt.Int64))
				active, cancelled, err := s.runs.Cancel(ctx, r.ID, reason)
				if err != nil {
					return err
				}
				if cancelled {
					code = msg.AlarmDeadlineCancel
					s.cancelTokens(ctx, active, reason.String())
					s.log.Warn("run cancelled: finish deadline passed", "run_id", r.ID, "job", r.App+"/"+r.JobName, "slots", len(active))
				}
			}
			if err := s.raiseDeadline(ctx, r, DeadlineFinish, store.AlarmRunDeadlineMissed, "critical",
				msg.New(code, "app", r.App, "job", r.JobName, "run", r.ID, "scheduled", fmtMS(r.ScheduledAt),
					"deadline", fmtMS(r.FinishDeadlineAt.Int64), "status", r.Status)); err != nil {
				return err
			}
		}
		checked = append(checked, store.DeadlineChecked{RunID: r.ID, Next: d.Next})
	}
	return s.store.MarkDeadlinesChecked(ctx, checked)
}

// raiseDeadline records the alarm of a missed deadline of run r, once per
// run and kind, and counts it when this call recorded it.
func (s *Scheduler) raiseDeadline(ctx context.Context, r store.DueDeadline, kind, alarm, severity string, text msg.Msg) error {
	ok, err := s.store.RaiseAlarm(ctx, store.Alarm{
		Kind: alarm, Severity: severity, App: r.App,
		JobID: sql.NullInt64{Int64: r.JobID, Valid: true}, RunID: sql.NullInt64{Int64: r.ID, Valid: true},
		DedupKey: fmt.Sprintf("%s:%d", alarm, r.ID),
		Msg:      text, RaisedBy: s.cfg.ID,
	})
	if err != nil || !ok {
		return err
	}
	s.log.Warn("run missed a deadline", "kind", kind, "run_id", r.ID, "job", r.App+"/"+r.JobName, "alarm", text.String())
	if s.cfg.Observer != nil {
		s.cfg.Observer.DeadlineMissed(kind)
	}
	return nil
}

// fmtMS writes an instant (Unix ms) as RFC 3339 in UTC.
func fmtMS(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
