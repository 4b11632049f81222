package scheduler

import (
	"context"

	"github.com/shardjob/shardjob/admin/placement"
	"github.com/shardjob/shardjob/admin/store"
)

// PlaceUnplaced puts attempts waiting for an executor (retries, manual
// retries from the API) on online executors of their app that have the
// handler — another executor than the previous attempt's when there is one
// — and pushes them.
func (s *Scheduler) PlaceUnplaced(ctx context.Context, epoch int64) error {
	waiting, err := s.store.UnplacedAttempts(ctx, 1000)
	if err != nil || len(waiting) == 0 {
		return err
	}
	online := map[string][]store.Executor{}
	placed := map[string]map[int64]bool{} // app → executors that got attempts
	for _, u := range waiting {
		execs, ok := online[u.App]
		if !ok {
			if execs, err = s.store.OnlineExecutors(ctx, u.App, s.cfg.Timing.LostAfter.Milliseconds()); err != nil {
				return err
			}
			online[u.App] = execs
		}
		targets := targetsFor(execs, u.Handler)
		if len(targets) > 1 && u.PreviousExecutor.Valid {
			others := targets[:0:0]
			for _, t := range targets {
				if t.ID != u.PreviousExecutor.Int64 {
					others = append(others, t)
				}
			}
			targets = others
		}
		if len(targets) == 0 {
			continue // waits for an executor with the handler
		}
		to := placement.Spread(1, targets, u.RunID+int64(u.Slot)+int64(u.Attempt))[0]
		ok, err = s.store.PlaceAttempt(ctx, u.Token, to, s.cfg.Timing.LostAfter)
		if err != nil {
			return err
		}
		if ok {
			addTarget(placed, u.App, to)
		}
	}
	for app, ids := range placed {
		s.pushExecutors(ctx, epoch, online[app], keys(ids))
	}
	return nil
}
