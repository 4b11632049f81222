package scheduler

import (
	"context"
	"errors"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/placement"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// RecoverLost marks silent executors lost, marks gone those lost for longer
// than ForgetLostAfter, and moves the unfinished slots of lost and gone
// executors to online executors of the same app with new, larger tokens.
func (s *Scheduler) RecoverLost(ctx context.Context, epoch int64) error {
	n, err := s.store.MarkLostExecutors(ctx, s.cfg.Timing.LostAfter.Milliseconds())
	if err != nil {
		return err
	}
	if n > 0 {
		s.log.Warn("executors lost (no heartbeat)", "count", n, "after", s.cfg.Timing.LostAfter)
	}
	if n, err = s.store.ResolveExecutorsBack(ctx); err != nil {
		return err
	}
	if n > 0 {
		s.log.Info("executor_lost alarms resolved: their executors heartbeat again", "count", n)
	}
	if n, err = s.store.ForgetLostExecutors(ctx, s.cfg.ForgetLostAfter.Milliseconds()); err != nil {
		return err
	}
	if n > 0 {
		s.log.Info("lost executors forgotten: marked gone, no longer listed by default", "count", n, "silent_for", s.cfg.ForgetLostAfter)
	}
	lost, err := s.store.LostAttempts(ctx, 1000)
	if err != nil || len(lost) == 0 {
		return err
	}
	runs := map[int64]store.Run{}
	handlers := map[int64]string{}
	online := map[string][]store.Executor{}
	moved := map[string]map[int64]bool{} // app → executors that got slots
	for _, a := range lost {
		r, ok := runs[a.RunID]
		if !ok {
			if r, err = s.store.Run(ctx, a.RunID); err != nil {
				return err
			}
			runs[a.RunID] = r
			job, err := s.store.Job(ctx, r.JobID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			handlers[a.RunID] = job.Handler
		}
		execs, ok := online[r.App]
		if !ok {
			if execs, err = s.store.OnlineExecutors(ctx, r.App, s.cfg.Timing.LostAfter.Milliseconds()); err != nil {
				return err
			}
			online[r.App] = execs
		}
		targets := targetsFor(execs, handlers[a.RunID])
		if len(targets) == 0 {
			continue // nobody to take it yet; try next tick
		}
		to := placement.Spread(1, targets, a.RunID+int64(a.Slot))[0]
		tok, err := s.store.Reassign(ctx, epoch, a, to, s.cfg.Timing.LostAfter)
		if err != nil {
			return err
		}
		if tok > 0 {
			addTarget(moved, r.App, to)
			s.count(func(st *Stats) { st.Reassigned++ })
			s.log.Info("slot moved off lost executor", "run_id", a.RunID, "slot", a.Slot, "old_token", a.Token, "new_token", tok, "executor_id", to)
		}
	}
	for app, ids := range moved {
		s.pushExecutors(ctx, epoch, online[app], keys(ids))
	}
	return nil
}

// FailUnacknowledged fails the attempts their executors have not
// acknowledged within DispatchTimeout (refused, or never taken although
// pushed and delivered in heartbeats), through the same path as a result
// reporting the failure: the job's retry policy then places another attempt
// or ends the run, and the attempt says why.
func (s *Scheduler) FailUnacknowledged(ctx context.Context) error {
	stuck, err := s.store.UnacknowledgedAttempts(ctx, s.cfg.DispatchTimeout.Milliseconds(), 1000)
	if err != nil || len(stuck) == 0 {
		return err
	}
	now := s.cfg.Clock.Now().UnixMilli()
	outcomes := make([]store.SlotOutcome, len(stuck))
	for i, u := range stuck {
		outcomes[i] = store.SlotOutcome{ExecutorID: u.ExecutorID, SlotResult: protocol.SlotResult{
			Token: u.Token, Status: store.AttemptFailed, FinishedAt: now, ErrorClass: protocol.ClassTimeout,
		}, Reason: msg.New(msg.AttemptNotAcked, "executor", u.InstanceID, "timeout", s.cfg.DispatchTimeout)}
	}
	accepted, err := s.runs.FinishAttempts(ctx, outcomes)
	if err != nil {
		return err
	}
	n := 0
	for _, ok := range accepted {
		if ok {
			n++
		}
	}
	if n > 0 {
		s.log.Warn("attempts never acknowledged by their executors failed", "attempts", n, "after", s.cfg.DispatchTimeout)
	}
	return nil
}
