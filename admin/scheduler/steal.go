package scheduler

import (
	"context"
	"sync"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// StealWork gives idle capacity the slots other executors of the same app
// have accepted but not started (queued behind their capacity): an executor
// that joins mid-run, or finishes early, takes over unstarted slots at once.
// From the executor with the most queued slots it takes at most half of
// them per round (no ping-pong), newest first.
//
// Nothing moves without the victim's consent: the leader asks it to release
// the chosen tokens, the executor gives back only those it has not started
// (atomically: a token is either started there or released), and only the
// released tokens get new attempts on the thief. A slot therefore never
// runs twice because of stealing. The round runs in the background, one at
// a time; a release the leader could not follow up (it stopped leading) is
// finished by the victim's next heartbeat (see store.ReleaseAttempts).
func (s *Scheduler) StealWork(ctx context.Context, epoch int64) error {
	s.pushMu.Lock()
	busy := s.stealing
	s.pushMu.Unlock()
	if busy {
		return nil
	}
	loads, err := s.store.Loads(ctx)
	if err != nil {
		return err
	}
	queuedAnywhere := false
	for _, l := range loads {
		if l.Queued > 0 {
			queuedAnywhere = true
			break
		}
	}
	if !queuedAnywhere {
		return nil
	}
	all, err := s.store.Executors(ctx)
	if err != nil {
		return err
	}
	apps := map[string]bool{}
	for _, e := range all {
		if loads[e.ID].Queued > 0 {
			apps[e.App] = true
		}
	}
	var plan []stealPlan
	for app := range apps {
		execs, err := s.store.OnlineExecutors(ctx, app, s.cfg.Timing.LostAfter.Milliseconds())
		if err != nil {
			return err
		}
		queued := map[int64]int{}
		for _, e := range execs {
			queued[e.ID] = loads[e.ID].Queued
		}
		taken := map[int64]bool{} // tokens already planned
		victims := map[int64]int{}
		for _, thief := range execs {
			free := thief.Capacity - loads[thief.ID].Active
			for free > 0 {
				var victim *store.Executor
				for i := range execs {
					v := &execs[i]
					if v.ID != thief.ID && queued[v.ID] > 0 && (victim == nil || queued[v.ID] > queued[victim.ID]) {
						victim = v
					}
				}
				if victim == nil {
					break
				}
				take := min(free, (queued[victim.ID]+1)/2)
				atts, err := s.store.QueuedOn(ctx, victim.ID, take+len(taken))
				if err != nil {
					return err
				}
				planned := 0
				for _, a := range atts {
					if planned == take || taken[a.Token] {
						continue
					}
					if !hasHandler(thief.Handlers, a.Handler) {
						continue
					}
					i, ok := victims[victim.ID]
					if !ok {
						i = len(plan)
						victims[victim.ID] = i
						plan = append(plan, stealPlan{victim: *victim, execs: execs})
					}
					plan[i].moves = append(plan[i].moves, stealMove{attempt: a.Attempt, thief: thief.ID})
					taken[a.Token] = true
					planned++
				}
				queued[victim.ID] -= planned
				free -= planned
				if planned == 0 {
					queued[victim.ID] = 0 // nothing this thief can take from it
				}
			}
		}
	}
	if len(plan) == 0 {
		return nil
	}
	s.pushMu.Lock()
	s.stealing = true
	s.pushMu.Unlock()
	s.inBackground(func() {
		defer func() {
			s.pushMu.Lock()
			s.stealing = false
			s.pushMu.Unlock()
		}()
		var wg sync.WaitGroup
		for _, p := range plan {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.stealFrom(ctx, epoch, p)
			}()
		}
		wg.Wait()
	})
	return nil
}

// stealPlan is what one round takes from one victim.
type stealPlan struct {
	victim store.Executor
	execs  []store.Executor // online executors of the app (for the pushes)
	moves  []stealMove
}

type stealMove struct {
	attempt store.Attempt
	thief   int64
}

// stealFrom asks the victim to release the planned tokens and moves those it
// released to their thieves.
func (s *Scheduler) stealFrom(ctx context.Context, epoch int64, p stealPlan) {
	tokens := make([]int64, len(p.moves))
	for i, m := range p.moves {
		tokens[i] = m.attempt.Token
	}
	resp, err := s.push.Release(ctx, p.victim.Address, protocol.ReleaseRequest{Tokens: tokens, Reason: "an idle executor of the app takes it"})
	if err != nil {
		s.log.Warn("work stealing: release request failed; nothing moved", "executor_id", p.victim.ID, "address", p.victim.Address, "err", err)
		return
	}
	released := make(map[int64]bool, len(resp.Released))
	for _, t := range resp.Released {
		released[t] = true
	}
	thieves := map[int64]bool{}
	for _, m := range p.moves {
		if !released[m.attempt.Token] {
			continue // started meanwhile: it runs where it is
		}
		tok, err := s.store.Steal(ctx, epoch, m.attempt, m.thief, s.cfg.Timing.LostAfter)
		if err != nil {
			// The victim reports the token as released at its next
			// heartbeat, which moves it (store.ReleaseAttempts).
			s.log.Warn("work stealing: move released slot", "run_id", m.attempt.RunID, "slot", m.attempt.Slot, "err", err)
			continue
		}
		if tok == 0 {
			continue
		}
		thieves[m.thief] = true
		s.count(func(st *Stats) { st.Stolen++ })
		s.log.Info("unstarted slot moved to an idle executor", "run_id", m.attempt.RunID, "slot", m.attempt.Slot,
			"from", p.victim.ID, "to", m.thief, "old_token", m.attempt.Token, "new_token", tok)
	}
	s.pushExecutors(ctx, epoch, p.execs, keys(thieves))
}
