package scheduler

import (
	"context"
	"time"

	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/placement"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// pushJob is the background push loop of one executor; again asks it to
// look for unacknowledged attempts once more when it is done (new ones were
// placed there meanwhile).
type pushJob struct {
	epoch int64
	execs []store.Executor // online executors of its app: its address, and where to move slots if it fails
	again bool
}

// pushExecutors pushes each executor of ids every attempt placed on it that
// it has not acknowledged, whatever their runs: one request per PushBatch
// slots, each executor in a goroutine of its own, so that an executor that
// does not answer (frozen, partitioned) delays neither the loop nor the
// pushes to other executors. One push loop per executor runs at a time;
// asking again while it runs makes it look once more when it is done. A
// push that fails moves those slots to the other executors of execs right
// away. ctx ends the pushes (the leader loop's context: a replica that
// stops leading stops pushing); WaitPushes waits for them.
func (s *Scheduler) pushExecutors(ctx context.Context, epoch int64, execs []store.Executor, ids []int64) {
	for _, id := range ids {
		s.pushMu.Lock()
		if job, ok := s.pushing[id]; ok {
			job.again, job.execs, job.epoch = true, execs, epoch
			s.pushMu.Unlock()
			continue
		}
		job := &pushJob{epoch: epoch, execs: execs}
		s.pushing[id] = job
		s.pushWG.Add(1)
		s.pushMu.Unlock()
		go s.pushLoop(ctx, id, job)
	}
}

// pushLoop pushes the executor's unacknowledged attempts, then again while
// asked to.
func (s *Scheduler) pushLoop(ctx context.Context, executorID int64, job *pushJob) {
	defer s.pushWG.Done()
	for {
		s.pushMu.Lock()
		epoch, execs := job.epoch, job.execs
		job.again = false
		s.pushMu.Unlock()
		var after int64 // keyset: a token the executor refused is not pushed twice in a round
		for ctx.Err() == nil {
			ds, err := s.store.DispatchOfExecutor(ctx, executorID, after, s.cfg.PushBatch)
			if err != nil {
				s.log.Error("load assignments to push", "executor_id", executorID, "err", err)
				break
			}
			if len(ds) == 0 || !s.pushTo(ctx, epoch, executorID, ds, execs) || len(ds) < s.cfg.PushBatch {
				break
			}
			after = ds[len(ds)-1].Token
		}
		s.pushMu.Lock()
		if !job.again || ctx.Err() != nil {
			delete(s.pushing, executorID)
			s.pushMu.Unlock()
			return
		}
		s.pushMu.Unlock()
	}
}

// pushTo sends one executor a batch of its unacknowledged attempts and
// records which tokens it accepted; it reports whether the push went
// through. If the push fails, the slots move to the other executors of
// execs with new tokens (the failed executor may be down; if it is alive it
// learns from its next heartbeat that the tokens are no longer its own),
// and are pushed there; with no other executor they wait for heartbeats.
func (s *Scheduler) pushTo(ctx context.Context, epoch, executorID int64, ds []store.DispatchSlot, execs []store.Executor) bool {
	addr := ""
	var others []store.Executor
	for _, e := range execs {
		if e.ID == executorID {
			addr = e.Address
		} else {
			others = append(others, e)
		}
	}
	if addr == "" {
		e, err := s.store.Executor(ctx, executorID)
		if err != nil {
			return false // heartbeat responses deliver the slots
		}
		addr = e.Address
	}
	select {
	case s.pushSem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	// An executor that reads the push after the bound (it was frozen)
	// refuses it: by then the slots may be on their way elsewhere. The
	// executor compares the bound with its own wall clock (it has no
	// database), so the bound is the wall clock too, not Config.Clock
	// (docs/architecture.md, "Clocks").
	validUntil := time.Now().Add(s.cfg.Timing.LostAfter / 2).UnixMilli()
	resp, err := s.push.Assign(ctx, addr, protocol.AssignRequest{Assignments: dispatch.BuildAssignments(ds), ValidUntilMS: validUntil})
	<-s.pushSem
	if err == nil {
		s.recordAccepted(ctx, executorID, resp)
		return true
	}
	s.log.Warn("push failed", "executor_id", executorID, "address", addr, "slots", len(ds), "err", err)
	if ctx.Err() != nil {
		return false
	}
	moved := map[int64]bool{} // executors that got slots
	for _, d := range ds {
		targets := targetsFor(others, d.Handler)
		if len(targets) == 0 {
			continue
		}
		to := placement.Spread(1, targets, d.RunID+int64(d.Slot))[0]
		tok, err := s.store.Reassign(ctx, epoch, store.Attempt{Token: d.Token, RunID: d.RunID, Slot: d.Slot, Attempt: d.Attempt, Failures: d.Failures}, to, s.cfg.Timing.LostAfter)
		if err != nil {
			s.log.Error("move slot after a failed push", "run_id", d.RunID, "slot", d.Slot, "err", err)
			continue
		}
		if tok > 0 {
			moved[to] = true
			s.count(func(st *Stats) { st.Reassigned++ })
		}
	}
	if len(moved) > 0 {
		s.log.Warn("push failed: slots moved to other executors", "executor_id", executorID, "to", keys(moved))
		s.pushExecutors(ctx, epoch, others, keys(moved))
	}
	return false
}

// recordAccepted records what an executor answered to a push: the tokens it
// started at once as running, the others it accepted as acknowledged
// (queued there: work stealing may move them).
func (s *Scheduler) recordAccepted(ctx context.Context, executorID int64, resp protocol.AssignResponse) {
	started := make(map[int64]bool, len(resp.Started))
	for _, t := range resp.Started {
		started[t] = true
	}
	queued := make([]int64, 0, len(resp.Accepted))
	running := make([]int64, 0, len(resp.Started))
	for _, t := range resp.Accepted {
		if started[t] {
			running = append(running, t)
		} else {
			queued = append(queued, t)
		}
	}
	if err := s.store.RecordAccepted(ctx, executorID, queued, running, resp.AcceptSeq); err != nil {
		s.log.Error("record accepted tokens", "executor_id", executorID, "err", err)
	}
}

// inBackground runs f in a goroutine that WaitPushes waits for.
func (s *Scheduler) inBackground(f func()) {
	s.pushWG.Add(1)
	go func() {
		defer s.pushWG.Done()
		f()
	}()
}

// WaitPushes waits for the pushes, cancellations and work-stealing rounds
// started in the background (by AssignPending, RecoverLost, PlaceUnplaced,
// StealWork) to finish.
func (s *Scheduler) WaitPushes() { s.pushWG.Wait() }

// cancelTokens pushes cancellations in the background, one request per
// executor. A lost cancellation is not a problem: the executor learns at its
// next heartbeat that the tokens are no longer current.
func (s *Scheduler) cancelTokens(ctx context.Context, active []store.ActiveToken, reason string) {
	byAddr := map[string][]int64{}
	for _, a := range active {
		byAddr[a.Address] = append(byAddr[a.Address], a.Token)
	}
	for addr, tokens := range byAddr {
		s.inBackground(func() {
			if err := s.push.Cancel(ctx, addr, protocol.CancelRequest{Tokens: tokens, Reason: reason}); err != nil {
				s.log.Warn("cancel push failed; the executor learns it at its next heartbeat", "address", addr, "err", err)
			}
		})
	}
}
