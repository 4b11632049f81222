package xxljob

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// idleCheck is what the idle check knows of a running attempt: when its
// executor was last asked about it and since when it says it is idle for
// the attempt's job id (zero: it runs it).
type idleCheck struct {
	executorID int64
	checked    time.Time
	idleSince  time.Time
}

// checkIdle asks an XXL-JOB executor that answered its beat about the slots
// it has run for longer than Config.IdleCheckAfter without a callback: its
// idleBeat for the slot's job id (SlotJobID). An executor that says it is
// busy still has the slot (running or queued); one that says it is idle,
// and says so again at least Config.IdleConfirm later while no callback
// came, has lost it — a callback lost on the way (xxl-job-executor-go does
// not send one again), a restart that forgot the task — and the slot is
// lost and placed again (loseIdle), long before the result timeout
// (Config.ResultTimeout) would fail it, and also when the job has none. An
// unreadable answer or an unreachable executor decides nothing: the beat
// decides whether the executor lives.
func (s *Service) checkIdle(ctx context.Context, e store.Executor, t Target) {
	const limit = 64
	running, err := s.st.XXLRunningSince(ctx, e.ID, s.cfg.IdleCheckAfter.Milliseconds(), limit)
	if err != nil {
		s.log.Error("load running XXL-JOB attempts for the idle check", "executor_id", e.ID, "err", err)
		return
	}
	s.pruneIdle(e.ID, running, len(running) < limit)
	for _, r := range running {
		now := s.cfg.Clock.Now()
		c := s.idleOf(r.Token, e.ID)
		if c.idleSince.IsZero() && now.Sub(c.checked) < s.cfg.IdleCheckAfter {
			continue // asked lately: it had it
		}
		if !c.idleSince.IsZero() && now.Sub(c.idleSince) < s.cfg.IdleConfirm {
			continue // a callback in flight gets IdleConfirm to arrive
		}
		id := SlotJobID(r.JobID, r.Slot)
		bctx, cancel := context.WithTimeout(ctx, min(s.cfg.RequestTimeout, s.cfg.Timing.Heartbeat))
		err := s.client.IdleBeat(bctx, t, id)
		cancel()
		var ce *CallError
		switch {
		case err == nil && c.idleSince.IsZero():
			s.log.Info("XXL-JOB executor says it is idle for a running slot without a callback: asked again after the confirm time", "address", e.Address, "run_id", r.RunID, "slot", r.Slot, "token", r.Token, "xxl_job_id", id, "confirm", s.cfg.IdleConfirm)
			s.setIdle(r.Token, idleCheck{executorID: e.ID, checked: now, idleSince: now})
		case err == nil:
			s.loseIdle(ctx, e, r, now.Sub(c.idleSince))
		case errors.As(err, &ce):
			s.setIdle(r.Token, idleCheck{executorID: e.ID, checked: now}) // busy: it has the slot
		default:
			s.log.Debug("XXL-JOB idleBeat not answered; the executor's slots are asked about again at its next probe", "address", e.Address, "token", r.Token, "err", err)
			return // not one call per slot to an executor that does not answer
		}
	}
}

// loseIdle loses a running attempt its executor has twice said it does not
// have (store.XXLLoseIdle: lost, placed again with a new token) and raises
// an executor_lost alarm.
func (s *Service) loseIdle(ctx context.Context, e store.Executor, r store.RunningAttempt, apart time.Duration) {
	id := SlotJobID(r.JobID, r.Slot)
	apart = apart.Round(time.Millisecond)
	reason := msg.New(msg.AttemptXXLIdleLost, "address", e.Address, "apart", apart, "xxl_job_id", id)
	lost, err := s.st.XXLLoseIdle(ctx, r.Token, e.ID, reason)
	s.forgetIdle(r.Token)
	if err != nil {
		s.log.Error("lose idle XXL-JOB attempt", "token", r.Token, "err", err)
		return
	}
	if !lost {
		return // its callback came meanwhile, or it moved
	}
	n := s.idleLost.Add(1)
	s.log.Warn("XXL-JOB executor no longer runs a slot and sent no callback: the slot is lost and placed again", "address", e.Address, "run_id", r.RunID, "slot", r.Slot, "token", r.Token, "xxl_job_id", id, "idle_for", apart, "idle_lost_total", n)
	if _, err := s.st.RaiseAlarm(ctx, store.Alarm{
		Kind: store.AlarmExecutorLost, Severity: "warning", App: e.App,
		JobID: nullInt(r.JobID), RunID: nullInt(r.RunID),
		DedupKey: fmt.Sprintf("executor_lost:xxl_idle:%d", r.Token),
		Msg: msg.New(msg.AlarmXXLSlotIdle, "executor", e.InstanceID, "app", e.App, "slot", r.Slot, "run", r.RunID,
			"token", r.Token, "xxl_job_id", id),
	}); err != nil {
		s.log.Warn("cannot record the executor_lost alarm", "err", err)
	}
}

// idleOf returns what is known of a token (zero when never asked).
func (s *Service) idleOf(token, executorID int64) idleCheck {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.idle[token]
	if !ok || c.executorID != executorID {
		return idleCheck{executorID: executorID}
	}
	return c
}

func (s *Service) setIdle(token int64, c idleCheck) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle[token] = c
}

// forgetIdle drops a token that ended.
func (s *Service) forgetIdle(token int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.idle, token)
}

// pruneIdle forgets the tokens of an executor that no longer run there
// (complete: running is all of them).
func (s *Service) pruneIdle(executorID int64, running []store.RunningAttempt, complete bool) {
	if !complete {
		return
	}
	still := make(map[int64]bool, len(running))
	for _, r := range running {
		still[r.Token] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, c := range s.idle {
		if c.executorID == executorID && !still[t] {
			delete(s.idle, t)
		}
	}
}

func nullInt(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: v != 0} }
