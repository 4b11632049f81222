package scheduler

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/shardjob/shardjob/admin/store"
)

// Owner gives the scheduling partitions this replica owns, each with the
// epoch it claimed in the database, and a channel closed at the next
// change (ownership.Keeper).
type Owner interface {
	Owned() (map[int]int64, <-chan struct{})
}

// fillEvery is how often the fire loop fills the partition of the jobs
// that have none (store.FillJobPartitions: one index read when there are
// none).
const fillEvery = time.Second

// FireOwned fires the due jobs of the partitions this replica owns
// (Config.Partitions) until ctx ends, on every replica, leader or not: in
// each transaction it reads their epochs with a shared lock, claims only
// their due jobs and records each run with its partition's epoch, so a
// replica that lost a partition (a hand-over while it was paused) writes
// nothing for it. Between rounds it sleeps until the next job of its
// partitions enters the pre-read window or one of them is resumed (at most
// PollInterval), until Wake, or until its partitions change. It starts the
// leader's start round at once (Wake) when it created runs; a leader in
// another process finds them within its PollInterval. Without
// Config.Partitions it returns at once: Lead fires.
func (s *Scheduler) FireOwned(ctx context.Context) {
	if s.cfg.Partitions == nil {
		return
	}
	log := s.log.With("loop", "fire_owned")
	var lastFill time.Time
	for ctx.Err() == nil {
		owned, changed := s.cfg.Partitions.Owned()
		if len(owned) == 0 {
			select {
			case <-ctx.Done():
			case <-changed:
			}
			continue
		}
		if now := s.cfg.Clock.Now(); now.Sub(lastFill) >= fillEvery {
			lastFill = now
			if n, err := s.store.FillJobPartitions(ctx); err != nil {
				log.Warn("cannot fill the partition of new jobs", "err", err)
			} else if n > 0 {
				log.Info("jobs given their partition", "count", n)
			}
		}
		scope := fireScope{parts: slices.Sorted(maps.Keys(owned)), owned: owned, all: len(owned) == s.store.PartitionCount()}
		before := s.Stats()
		more, err := s.fireAll(ctx, scope)
		if after := s.Stats(); after.Fired > before.Fired {
			s.wakeLeader()
		}
		var wait time.Duration
		switch {
		case errors.Is(err, store.ErrStaleEpoch):
			// A partition moved away: the keeper drops it at the next
			// assignment (changed), or the next round finds it gone.
			s.count(func(st *Stats) { st.StaleAborts++ })
			log.Warn("a partition's epoch fence refused a firing: it was handed over; waiting for the new assignment", "err", err)
			wait = time.Second
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			log.Error("firing the owned partitions failed", "err", err)
			wait = time.Second
		case more:
			continue // a backlog: go straight on
		default:
			wait = s.nextFireWait(ctx, scope)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-s.fireWake:
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// nextFireWait is how long the fire loop may sleep: until the next job of
// its partitions enters the pre-read window or a pause of one ends, at
// most PollInterval.
func (s *Scheduler) nextFireWait(ctx context.Context, scope fireScope) time.Duration {
	wait := s.cfg.PollInterval
	now := s.cfg.Clock.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.HintTimeout)
	defer cancel()
	var next, end sql.NullInt64
	var nextErr, endErr error
	if scope.all {
		next, nextErr = s.store.NextDue(ctx)
		end, endErr = s.store.NextPauseEnd(ctx)
	} else {
		next, nextErr = s.store.NextDueIn(ctx, scope.parts)
		end, endErr = s.store.NextPauseEndIn(ctx, scope.parts)
	}
	if nextErr == nil && next.Valid {
		wait = min(wait, time.UnixMilli(next.Int64).Add(-s.window).Sub(now))
	}
	if endErr == nil && end.Valid {
		wait = min(wait, time.UnixMilli(end.Int64).Sub(now))
	}
	return max(wait, time.Millisecond)
}
