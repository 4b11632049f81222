package scheduler

import (
	"context"

	"github.com/shardjob/shardjob/admin/placement"
	"github.com/shardjob/shardjob/admin/store"
)

// unplacedPage is how many unplaced attempts the leader reads at once.
const unplacedPage = 1000

// PlaceUnplaced puts attempts waiting for an executor (retries, manual
// retries from the API, slots a concurrency cap held back) on online
// executors of their app that have the handler — another executor than the
// previous attempt's when there is one — as far as the caps allow, and
// pushes them.
func (s *Scheduler) PlaceUnplaced(ctx context.Context, epoch int64) error {
	caps, err := s.newCapRound(ctx)
	if err != nil {
		return err
	}
	return s.placeUnplaced(ctx, epoch, caps)
}

// placeUnplaced pages through every unplaced attempt, oldest first, so that
// slots a cap holds back do not hide the ones behind them. It places each
// page in one transaction fenced by the epoch.
func (s *Scheduler) placeUnplaced(ctx context.Context, epoch int64, caps *capRound) error {
	online := map[string][]store.Executor{}
	placed := map[string]map[int64]bool{} // app → executors that got attempts
	var after int64
	for {
		waiting, err := s.store.UnplacedAttempts(ctx, after, unplacedPage)
		if err != nil {
			return err
		}
		if len(waiting) == 0 {
			break
		}
		after = waiting[len(waiting)-1].Token
		var capped []int64
		for _, u := range waiting {
			if u.JobMaxRunningSlots > 0 {
				capped = append(capped, u.JobID)
			} else {
				caps.forgetJob(u.JobID)
			}
		}
		if err := caps.countJobs(ctx, capped); err != nil {
			return err
		}
		if waiting, err = fairSlots(ctx, caps, waiting); err != nil {
			return err
		}
		appOf := make(map[int64]string, len(waiting))
		var ps []store.Placement
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
			room, _, err := caps.room(ctx, u.App, u.JobID, "", u.JobMaxRunningSlots, 1)
			if err != nil {
				return err
			}
			if room == 0 {
				continue // waits for room under its app's or job's cap
			}
			caps.take(u.App, u.JobID, 1)
			to := placement.Spread(1, targets, u.RunID+int64(u.Slot)+int64(u.Attempt))[0]
			ps = append(ps, store.Placement{Token: u.Token, ExecutorID: to})
			appOf[u.Token] = u.App
		}
		done, err := s.store.PlaceAttempts(ctx, epoch, s.cfg.Timing.LostAfter, ps)
		if err != nil {
			return err
		}
		for _, p := range done {
			addTarget(placed, appOf[p.Token], p.ExecutorID)
		}
		if len(waiting) < unplacedPage {
			break
		}
	}
	for app, ids := range placed {
		s.pushExecutors(ctx, epoch, online[app], keys(ids))
	}
	return nil
}

// fairSlots orders a page of waiting slots so that apps take the
// platform's capacity by their weights (fairshare.go), when it is short
// for them; otherwise the page is left as it is (oldest first).
func fairSlots(ctx context.Context, caps *capRound, waiting []store.Unplaced) ([]store.Unplaced, error) {
	if caps.globalMax <= 0 {
		return waiting, nil
	}
	apps := make([]string, len(waiting))
	for i, u := range waiting {
		apps[i] = u.App
	}
	short, err := caps.share(ctx, apps, int64(len(waiting)))
	if err != nil || !short {
		return waiting, err
	}
	return fairOrder(waiting, func(u store.Unplaced) string { return u.App }, func(store.Unplaced) int64 { return 1 }, caps.appUsed, caps.weight), nil
}
