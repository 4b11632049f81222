package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// Lead runs the leader loop for one term until ctx ends or the epoch is
// taken by another admin. It first records the epoch in the database.
func (s *Scheduler) Lead(ctx context.Context, epoch int64) {
	log := s.log.With("epoch", epoch)
	ok, err := s.store.ClaimEpoch(ctx, epoch, s.cfg.ID)
	if err != nil {
		log.Error("cannot record leader epoch; not leading this term", "err", err)
		return
	}
	if !ok {
		rec, _ := s.store.Leader(ctx)
		log.Warn("a larger or equal epoch is already recorded; not leading this term", "recorded_epoch", rec.Epoch, "holder", rec.Holder)
		return
	}
	log.Info("leading")
	defer log.Info("stopped leading")
	s.mu.Lock()
	s.capBounds = nil    // a new term counts every cap afresh
	s.startBuckets = nil // and starts with full start-rate buckets
	s.mu.Unlock()
	if _, err := s.store.RaiseAlarm(ctx, store.Alarm{
		Kind: store.AlarmLeaderChange, Severity: "info", RaisedBy: s.cfg.ID,
		DedupKey: fmt.Sprintf("leader_change:%d", epoch),
		Msg:      msg.New(msg.AlarmLeaderChange, "replica", s.cfg.ID, "epoch", epoch),
	}); err != nil {
		log.Warn("cannot record the leader_change alarm", "err", err)
	}
	defer s.WaitPushes() // ctx is done: pushes in flight end promptly
	lastRecover := time.Time{}
	for {
		more, err := s.tick(ctx, epoch, &lastRecover)
		if err != nil {
			if errors.Is(err, store.ErrStaleEpoch) {
				s.count(func(st *Stats) { st.StaleAborts++ })
				log.Warn("epoch fence refused a write: another admin leads; stepping down", "err", err)
				return
			}
			if ctx.Err() != nil {
				return
			}
			log.Error("scheduler tick failed", "err", err)
		}
		if more && err == nil {
			// Due runs are left (a herd): go straight on.
			if ctx.Err() != nil {
				return
			}
			continue
		}
		wait := s.nextWait(ctx)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// tick does one round of the leader's duties, in this order (doc.go says
// what each does). more is true when due runs are left to start: the loop
// goes straight on instead of waiting. more is also true when jobs are left
// to fire.
func (s *Scheduler) tick(ctx context.Context, epoch int64, lastRecover *time.Time) (more bool, err error) {
	// fire.go, then start.go: each stops at its budget when work is left,
	// so that a tick neither fires without starting nor starts without
	// firing.
	// With partitions, every replica fires its own (FireOwned).
	var fireMore bool
	if s.cfg.Partitions == nil {
		if fireMore, err = s.fireAll(ctx, leaderScope(epoch)); err != nil {
			return false, err
		}
	}
	// retry.go, then place.go: the slots of started runs waiting for an
	// executor (retries, slots a cap held back) are placed before new runs
	// start, so that under a cap (caps.go) started work goes first.
	// breaker.go: circuit breakers open, probe and close before retries
	// and starts, which they hold.
	if err := s.CheckBreakers(ctx, epoch); err != nil {
		return false, err
	}
	if err := s.RetryFailed(ctx, epoch); err != nil {
		return false, err
	}
	caps, err := s.newCapRound(ctx)
	if err != nil {
		return false, err
	}
	if err := s.placeUnplaced(ctx, epoch, caps); err != nil {
		return false, err
	}
	if more, err = s.assignPending(ctx, epoch, caps); err != nil {
		return false, err
	}
	s.capHeld.Store(caps.held)
	more = more || fireMore
	if err := s.resolvePlaced(ctx); err != nil {
		return false, err
	}
	// steal.go
	if !s.cfg.DisableWorkStealing {
		if err := s.StealWork(ctx, epoch); err != nil {
			return false, err
		}
	}
	// deadline.go: one indexed query for runs past an unchecked deadline.
	if err := s.CheckDeadlines(ctx); err != nil {
		return false, err
	}
	if now := s.cfg.Clock.Now(); now.Sub(*lastRecover) >= s.cfg.Timing.Heartbeat/2 {
		*lastRecover = now
		// drain.go. Drains change rarely: look for them at the pace of loss
		// detection, not on every tick of the loop.
		if err := s.DrainRequested(ctx); err != nil {
			return false, err
		}
		// recover.go: lost executors, then unacknowledged attempts.
		if err := s.RecoverLost(ctx, epoch); err != nil {
			return false, err
		}
		if err := s.FailUnacknowledged(ctx); err != nil {
			return false, err
		}
	}
	return more, nil
}

// nextWait is how long the loop may sleep: until the next job enters the
// pre-read window, the next early-created run is due or a pause ends, at
// most PollInterval. With partitions the first and the last are the fire
// loops' (nextFireWait): a job due in another replica's partition must not
// wake this one before that replica fired it.
func (s *Scheduler) nextWait(ctx context.Context) time.Duration {
	wait := s.cfg.PollInterval
	now := s.cfg.Clock.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.HintTimeout)
	defer cancel()
	if s.cfg.Partitions != nil {
		if next, err := s.store.NextPendingAfter(ctx, now.UnixMilli()); err == nil && next.Valid {
			wait = min(wait, time.UnixMilli(next.Int64).Sub(now))
		}
		return max(wait, time.Millisecond)
	}
	if next, err := s.store.NextDue(ctx); err == nil && next.Valid {
		wait = min(wait, time.UnixMilli(next.Int64).Add(-s.window).Sub(now))
	}
	if next, err := s.store.NextPendingAfter(ctx, now.UnixMilli()); err == nil && next.Valid {
		wait = min(wait, time.UnixMilli(next.Int64).Sub(now))
	}
	if end, err := s.store.NextPauseEnd(ctx); err == nil && end.Valid { // a job paused until then resumes
		wait = min(wait, time.UnixMilli(end.Int64).Sub(now))
	}
	return max(wait, time.Millisecond)
}
