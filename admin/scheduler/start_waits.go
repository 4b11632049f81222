package scheduler

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/waits"
)

// holdForWaits decides for pending run r of a job with waits (job.wait_for;
// docs/workflows.md, "Waits of a plain job") with the rules of a workflow
// node's (waits.Decide): every awaited run of r's business date succeeded
// → false (r starts, even past its deadline: a start is never taken back);
// before the deadline (r's start time + wait_timeout) → held until
// HoldRecheck later (or the deadline, if sooner), its reason naming the
// missing runs, the date and the deadline; at or after it → r ends failed
// or skipped per on_timeout, with a run_wait_timeout alarm in the same
// transaction (one per run). A run a workflow node created is left alone:
// the node has its own waits.
func (st *starter) holdForWaits(ctx context.Context, r store.PendingRun) (bool, error) {
	if r.WaitFor == "" || r.TriggerKind == store.TriggerWorkflow {
		return false, nil
	}
	s := st.s
	refs, err := waits.Parse(r.WaitFor)
	if err != nil || len(refs) == 0 {
		// A saved job's waits were validated: this is a row written by
		// hand. Start the run rather than strand it.
		s.log.Warn("job waits do not parse; starting its run", "run", r.ID, "job", r.JobID, "err", err)
		return false, nil
	}
	date := businessDate(r)
	ok := make([]bool, len(refs))
	for i, ref := range refs {
		app, name, isWorkflow := ref.Target(r.App)
		if ok[i], err = st.waitSucceeded(ctx, store.WaitTarget{App: app, Name: name, Workflow: isWorkflow, Date: date}); err != nil {
			return false, err
		}
	}
	w := waits.Waits{For: refs, Timeout: r.WaitTimeout, OnTimeout: waits.OnTimeout(r.OnTimeout)}
	now := s.cfg.Clock.Now()
	d := waits.Decide(w, r.App, ok, time.UnixMilli(r.StartsAt()), now)
	switch d.Action {
	case waits.Start:
		return false, nil
	case waits.Keep:
		until := now.Add(s.cfg.HoldRecheck)
		if d.Deadline.Before(until) {
			until = d.Deadline // times out then
		}
		st.holdRun(r.ID, until, msg.New(msg.RunWaitsHeld, "waits", d.Reason(), "date", date,
			"deadline", d.Deadline.UTC().Format(time.RFC3339)))
		return true, nil
	}
	return true, s.waitTimedOut(ctx, r, w, d, date, now)
}

// waitTimedOut ends run r, whose waits timed out, failed or skipped per
// its on_timeout, and raises run_wait_timeout (critical for fail, warning
// for skip) in the same transaction: a run that is no longer pending (a
// cancel, another leader's end) is left alone and raises nothing, and the
// alarm's key is the run's, so that it is raised once.
func (s *Scheduler) waitTimedOut(ctx context.Context, r store.PendingRun, w waits.Waits, d waits.Decision, date string, now time.Time) error {
	to, action, severity := store.RunFailed, "failed", "critical"
	if d.OnTimeout == waits.Skip {
		to, action, severity = store.RunSkipped, "skipped", "warning"
	}
	reason := msg.New(msg.RunWaitTimedOut, "timeout", w.TimeoutOrDefault(), "waits", d.Reason(), "date", date, "action", string(d.OnTimeout))
	ended := false
	err := s.store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		ended, err = tx.TransitionRun(ctx, store.RunTransition{ID: r.ID, From: store.RunPending, To: to,
			FinishedAt: sql.NullInt64{Int64: now.UnixMilli(), Valid: true}, Reason: reason})
		if err != nil || !ended {
			return err
		}
		return tx.RaiseAlarms(ctx, store.Alarm{
			Kind: store.AlarmRunWaitTimeout, Severity: severity, RaisedBy: s.cfg.ID, App: r.App,
			JobID: sql.NullInt64{Int64: r.JobID, Valid: true}, RunID: sql.NullInt64{Int64: r.ID, Valid: true},
			DedupKey: fmt.Sprintf("run_wait_timeout:%d", r.ID),
			Msg: msg.New(msg.AlarmRunWaitTimeout, "app", r.App, "job", r.JobName, "run", r.ID, "date", date,
				"timeout", w.TimeoutOrDefault(), "waits", d.Reason(), "action", action),
		})
	})
	if err != nil {
		return fmt.Errorf("run %d: end after its waits timed out: %w", r.ID, err)
	}
	if ended {
		s.log.Warn("run's waits timed out", "run", r.ID, "app", r.App, "job", r.JobName, "date", date, "missing", d.Reason(), "status", to)
	}
	return nil
}

// waitSucceeded is store.WaitSucceeded, each target and date asked once
// per round of the start path: a herd of runs waiting for the same run
// costs one query (two for a job) per target.
func (st *starter) waitSucceeded(ctx context.Context, t store.WaitTarget) (bool, error) {
	if v, ok := st.waitsMet[t]; ok {
		return v, nil
	}
	v, err := st.s.store.WaitSucceeded(ctx, t)
	if err != nil {
		return false, err
	}
	if st.waitsMet == nil {
		st.waitsMet = map[store.WaitTarget]bool{}
	}
	st.waitsMet[t] = v
	return v, nil
}

// businessDate is r's business date (YYYY-MM-DD): its scheduled day in the
// zone of its firing (Run.TimeZone: its job's zone when it was created, or
// for a job with several zones the one that fired; a zone that no longer
// loads counts as UTC). The runs of an awaited job count the same way
// (store.WaitSucceeded), so that a job waiting for another of the same
// zone and day finds its run.
func businessDate(r store.PendingRun) string {
	loc, err := time.LoadLocation(r.TimeZone)
	if err != nil {
		loc = time.UTC
	}
	return time.UnixMilli(r.ScheduledAt).In(loc).Format(time.DateOnly)
}
