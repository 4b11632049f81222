package xxljob

import (
	"context"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Run probes the registered XXL-JOB executors every Timing.Heartbeat until
// ctx ends (see ProbeOnce). It returns when ctx is done and the probes in
// flight have finished. Every admin replica may run it: its writes are
// guarded (a beat only refreshes an online executor, a redispatch is
// claimed by one replica, a lost result is recorded once).
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Timing.Heartbeat)
	defer t.Stop()
	for {
		if err := s.ProbeOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("XXL-JOB probe round failed", "err", err)
		}
		if !s.waitTick(ctx, t.C) {
			return
		}
	}
}

// waitTick waits for the next probe round (true) or the end of ctx (false),
// sending held attempts when a callback asks for it meanwhile (kickHeld).
func (s *Service) waitTick(ctx context.Context, tick <-chan time.Time) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case id := <-s.kick:
			s.sendHeld(ctx, id)
		}
	}
}

// sendHeld sends at once the held attempts of an executor one of whose
// attempts a callback has just ended: the next slot of that handler need
// not wait for the next probe.
func (s *Service) sendHeld(ctx context.Context, executorID int64) {
	e, err := s.st.Executor(ctx, executorID)
	if err != nil {
		s.log.Warn("send held XXL-JOB attempts", "executor_id", executorID, "err", err)
		return
	}
	if e.State == store.ExecutorOnline || e.State == store.ExecutorDraining {
		s.redispatch(ctx, e, true)
	}
}

// kickHeld asks Run to send the held attempts of an executor now (see
// sendHeld); it never blocks: a full queue leaves them to the next probe.
func (s *Service) kickHeld(executorID int64) {
	if len(s.busyOf(executorID)) == 0 {
		return
	}
	select {
	case s.kick <- executorID:
	default:
	}
}

// ProbeOnce runs one round:
//
//   - beat: each online XXL-JOB executor is asked whether it is alive; when
//     it answers the admin records a heartbeat on its behalf and renews the
//     leases of its attempts, as a shardjob heartbeat does. An executor that
//     stops answering is marked lost by the leader after LostAfter, like any
//     other, and its slots move (scheduler.RecoverLost).
//   - redispatch: attempts placed on an executor that answered but whose
//     run call never got through are sent again (XXL-JOB executors have no
//     heartbeat response to carry them).
//   - lost results: running attempts without a callback past their job's
//     timeout (or ResultTimeout) plus ResultGrace fail as timed out; the
//     job's retry policy decides what follows.
func (s *Service) ProbeOnce(ctx context.Context) error {
	execs, err := s.st.XXLExecutors(ctx)
	if err != nil {
		return err
	}
	sem := make(chan struct{}, s.cfg.ProbeConcurrency)
	var wg sync.WaitGroup
	for _, e := range execs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-sem }()
			s.probe(ctx, e)
		})
	}
	wg.Wait()
	return s.failOverdue(ctx)
}

func (s *Service) probe(ctx context.Context, e store.Executor) {
	t, err := s.target(e.App, e.Address, e.Version)
	if err != nil {
		s.log.Warn("XXL-JOB executor of an app without an access token is not probed (it will be marked lost)", "app", e.App, "address", e.Address)
		return
	}
	bctx, cancel := context.WithTimeout(ctx, min(s.cfg.RequestTimeout, s.cfg.Timing.Heartbeat))
	err = s.client.Beat(bctx, t)
	cancel()
	if err != nil {
		s.log.Debug("XXL-JOB executor did not answer beat", "app", e.App, "address", e.Address, "err", err)
		return
	}
	alive, err := s.st.XXLBeat(ctx, e.ID)
	if err != nil {
		s.log.Error("record XXL-JOB beat", "executor_id", e.ID, "err", err)
		return
	}
	if alive {
		s.redispatch(ctx, e, false)
		s.checkIdle(ctx, e, t)
	}
}

// redispatch sends again the attempts of e whose run call did not get
// through (after RedispatchAfter), and at once those it refused as busy
// (their slot's job id had a task running there: the slot waits in the
// admin, probe after probe, until the executor takes it) or that dispatch
// held (not their handler's turn). kicked: a callback just ended an attempt
// there, the held ones are sent whenever they were last tried.
func (s *Service) redispatch(ctx context.Context, e store.Executor, kicked bool) {
	after := s.cfg.RedispatchAfter.Milliseconds()
	busyAfter := s.cfg.Timing.Heartbeat.Milliseconds() / 2 // not twice in one probe round
	if kicked {
		busyAfter = 0
	}
	busy := s.busyOf(e.ID)
	since := after
	if len(busy) > 0 {
		since = 0 // every unaccepted one, to tell which busy ones are still waiting
	}
	const limit = 256
	ds, err := s.st.XXLUnacked(ctx, e.ID, since, limit)
	if err != nil {
		s.log.Error("load unaccepted XXL-JOB attempts", "executor_id", e.ID, "err", err)
		return
	}
	if len(ds) < limit {
		// Busy attempts that are no longer unaccepted here (ended, moved)
		// are forgotten.
		still := make(map[int64]bool, len(ds))
		for _, d := range ds {
			still[d.Token] = true
		}
		for t := range busy {
			if !still[t] {
				s.setBusy(t, e.ID, false)
			}
		}
	}
	claimed := ds[:0]
	for _, d := range ds {
		olderThan := after
		if busy[d.Token] {
			olderThan = min(busyAfter, after)
		}
		ok, err := s.st.ClaimRedispatch(ctx, d.Token, e.ID, olderThan)
		if err != nil {
			s.log.Error("claim XXL-JOB attempt for redispatch", "token", d.Token, "err", err)
			return
		}
		if ok {
			claimed = append(claimed, d)
		}
	}
	if len(claimed) == 0 {
		return
	}
	ref := store.ExecutorRef{ID: e.ID, App: e.App, Protocol: store.ProtocolXXLJob, Version: e.Version}
	resp, err := s.dispatch(ctx, ref, e.Address, protocol.AssignRequest{Assignments: dispatch.BuildAssignments(claimed)})
	if err != nil {
		s.log.Warn("redispatch to XXL-JOB executor failed; tried again later", "address", e.Address, "err", err)
		return
	}
	if err := s.st.AckAttempts(ctx, e.ID, resp.Accepted); err != nil {
		s.log.Error("acknowledge redispatched XXL-JOB attempts", "executor_id", e.ID, "err", err)
	}
	s.log.Info("sent unaccepted attempts to XXL-JOB executor again", "address", e.Address, "attempts", len(claimed), "accepted", len(resp.Accepted))
}

// failOverdue fails running XXL-JOB attempts whose callback is overdue.
func (s *Service) failOverdue(ctx context.Context) error {
	over, err := s.st.XXLOverdue(ctx, s.cfg.ResultTimeout.Milliseconds(), s.cfg.ResultGrace.Milliseconds(), 256)
	if err != nil || len(over) == 0 {
		return err
	}
	now, err := s.st.NowMS(ctx)
	if err != nil {
		return err
	}
	outcomes := make([]store.SlotOutcome, len(over))
	for i, o := range over {
		limit := time.Duration(o.TimeoutMS) * time.Millisecond
		what := msg.New(msg.LimitJobTimeout)
		if o.TimeoutMS <= 0 {
			limit, what = s.cfg.ResultTimeout, msg.New(msg.LimitDefaultTimeout)
		}
		outcomes[i] = store.SlotOutcome{ExecutorID: o.ExecutorID, SlotResult: protocol.SlotResult{
			Token: o.Token, Status: store.AttemptFailed, FinishedAt: now, ErrorClass: protocol.ClassTimeout,
		}, Reason: msg.New(msg.AttemptXXLNoCallback, "limit", limit, "limit_kind", what, "grace", s.cfg.ResultGrace)}
	}
	accepted, err := s.runs.FinishAttempts(ctx, outcomes)
	if err != nil {
		return err
	}
	for i, ok := range accepted {
		if !ok {
			continue
		}
		s.log.Warn("XXL-JOB slot timed out without a callback: killing it on the executor", "run_id", over[i].RunID, "slot", over[i].Slot, "token", over[i].Token)
		// Stop the task, so that the slot's job id is free for the retry
		// (an executor that runs one task per job id refuses the next).
		info, t, err := s.attemptOnXXL(ctx, over[i].Token)
		if err != nil {
			s.log.Warn("kill of a timed-out XXL-JOB slot", "token", over[i].Token, "err", err)
			continue
		}
		s.killSlots(ctx, t, []store.JobSlot{{JobID: info.JobID, Slot: info.Slot}}, "timed out without a callback")
	}
	return nil
}
