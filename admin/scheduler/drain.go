package scheduler

import (
	"context"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// DrainRequested gives back the queued slots of executors an operator asked
// to drain: the leader asks each to release its queued tokens (in the
// background, one request at a time per executor) and replaces the released
// ones by unplaced attempts, which PlaceUnplaced puts on other executors.
// Running slots finish where they are; drained executors get no new slots
// (store.OnlineExecutors leaves them out).
func (s *Scheduler) DrainRequested(ctx context.Context) error {
	draining, err := s.store.DrainingExecutors(ctx)
	if err != nil || len(draining) == 0 {
		return err
	}
	for _, e := range draining {
		queued, err := s.store.QueuedOn(ctx, e.ID, 1000)
		if err != nil {
			return err
		}
		if len(queued) == 0 {
			continue
		}
		s.pushMu.Lock()
		if s.releasing[e.ID] { // one drain request in flight per executor
			s.pushMu.Unlock()
			continue
		}
		s.releasing[e.ID] = true
		s.pushMu.Unlock()
		tokens := make([]int64, len(queued))
		for i, a := range queued {
			tokens[i] = a.Token
		}
		s.inBackground(func() {
			defer func() {
				s.pushMu.Lock()
				delete(s.releasing, e.ID)
				s.pushMu.Unlock()
			}()
			resp, err := s.push.Release(ctx, e.Address, protocol.ReleaseRequest{Tokens: tokens, Reason: "an operator drains this executor"})
			if err != nil {
				s.log.Warn("drain: release request failed; retrying next tick", "executor_id", e.ID, "err", err)
				return
			}
			n, err := s.store.ReleaseAttempts(ctx, e.ID, resp.Released)
			if err != nil {
				s.log.Error("drain: move released slots", "executor_id", e.ID, "err", err)
				return
			}
			if n > 0 {
				s.log.Info("drain: queued slots given back to be placed elsewhere", "executor_id", e.ID, "slots", n)
				s.Wake()
			}
		})
	}
	return nil
}
