package executorsvc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/names"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Heartbeat registers or refreshes the executor of req and answers what it
// must run and what it must forget. In order: it refuses an address that is
// a live XXL-JOB executor's, records the heartbeat (the lease of every
// attempt the executor holds), records a new incarnation (a restarted
// process: the slots of the previous one are lost), reconciles the slots
// the executor accepted against those it reports, records which tokens it
// accepted and started, moves the tokens it gave back, and, unless it
// drains, delivers its unacknowledged slots.
//
// Errors: ErrInvalid (identity fields missing or too long, an app name
// that is not a name, an address that is not an http(s) base URL), ErrConflict
// (the instance id belongs to another app, the address to a live XXL-JOB
// executor), or a database error.
func (s *Service) Heartbeat(ctx context.Context, req protocol.HeartbeatRequest) (protocol.HeartbeatResponse, error) {
	if req.InstanceID == "" || req.App == "" || req.Address == "" ||
		len(req.InstanceID) > maxInstanceIDLen || len(req.App) > maxAppLen || len(req.Address) > maxAddressLen {
		return protocol.HeartbeatResponse{}, invalid(fmt.Sprintf("instance_id (≤%d), app (≤%d) and address (≤%d) are required", maxInstanceIDLen, maxAppLen, maxAddressLen))
	}
	if p := names.Problem(req.App); p != "" {
		return protocol.HeartbeatResponse{}, invalid("app " + strconv.Quote(req.App) + ": " + p)
	}
	if _, err := protocol.ParseAddress(req.Address); err != nil {
		return protocol.HeartbeatResponse{}, invalid("address " + strconv.Quote(req.Address) + ": " + err.Error() + "; set the address the admin reaches this executor at")
	}
	if err := s.addressFree(ctx, req); err != nil {
		return protocol.HeartbeatResponse{}, err
	}
	ex, err := s.st.Heartbeat(ctx, store.ExecutorInfo{
		InstanceID: req.InstanceID, App: req.App, Address: req.Address, Capacity: max(req.Capacity, 1),
		Version: req.Version, Handlers: req.Handlers, Draining: req.Draining,
	})
	if err != nil {
		return protocol.HeartbeatResponse{}, err
	}
	if ex.App != req.App {
		return protocol.HeartbeatResponse{}, conflict("instance_id is registered for app " + ex.App)
	}
	if req.Incarnation != "" && req.Incarnation != ex.Incarnation {
		if len(req.Incarnation) > maxIncarnationLen {
			return protocol.HeartbeatResponse{}, invalid(fmt.Sprintf("incarnation: at most %d characters", maxIncarnationLen))
		}
		if err := s.reincarnate(ctx, ex, req); err != nil {
			return protocol.HeartbeatResponse{}, err
		}
	}
	running := make([]int64, 0, len(req.Running))
	var queued, started []int64
	for _, r := range req.Running {
		running = append(running, r.Token)
		if r.Progress == protocol.ProgressQueued {
			queued = append(queued, r.Token)
		} else {
			started = append(started, r.Token)
		}
	}
	resp := protocol.HeartbeatResponse{ExecutorID: ex.ID, IntervalMS: s.cfg.Timing.Heartbeat.Milliseconds(), LostAfterMS: s.cfg.Timing.LostAfter.Milliseconds()}
	if err := s.reconcile(ctx, ex, req, running); err != nil {
		return protocol.HeartbeatResponse{}, err
	}
	if len(running) > 0 {
		// One write per token: marking started acknowledges too.
		if err := s.st.RecordAccepted(ctx, ex.ID, queued, started, req.AcceptSeq); err != nil {
			return protocol.HeartbeatResponse{}, err
		}
		stale, err := s.st.StaleTokens(ctx, ex.ID, running)
		if err != nil {
			return protocol.HeartbeatResponse{}, err
		}
		resp.Cancel = stale
	}
	if len(req.Released) > 0 {
		// Tokens given back for work stealing that the leader did not move
		// (it stopped leading in between): move them now; then tell the
		// executor to forget every released token that is no longer its own.
		if len(req.Released) > maxReleasedPerHeartbeat {
			req.Released = req.Released[:maxReleasedPerHeartbeat]
		}
		if n, err := s.st.ReleaseAttempts(ctx, ex.ID, req.Released); err != nil {
			return protocol.HeartbeatResponse{}, err
		} else if n > 0 {
			s.log.Info("moved slots an executor gave back", "executor_id", ex.ID, "slots", n)
		}
		gone, err := s.st.StaleTokens(ctx, ex.ID, req.Released)
		if err != nil {
			return protocol.HeartbeatResponse{}, err
		}
		resp.Cancel = append(resp.Cancel, gone...)
	}
	// The heartbeat itself (executor.last_heartbeat, database clock) is the
	// lease of every attempt the executor holds: nothing is written per
	// attempt (RecoverLost moves the attempts of a silent executor).
	if !req.Draining {
		slots, err := s.st.UnackedFor(ctx, ex.ID, maxAssignmentsPerHeartbeat)
		if err != nil {
			return protocol.HeartbeatResponse{}, err
		}
		resp.Assignments = dispatch.BuildAssignments(slots)
		if len(resp.Assignments) > 0 {
			// Read later than this (the executor froze), they are ignored.
			// The executor compares the bound with its own wall clock, so the
			// bound is the wall clock too (docs/architecture.md, "Clocks").
			resp.AssignmentsValidUntilMS = time.Now().Add(s.cfg.Timing.LostAfter / 2).UnixMilli()
		}
	}
	return resp, nil
}

// addressFree refuses (ErrConflict) a heartbeat whose address is the
// address of a live XXL-JOB executor: the admin finds the executor to push
// to by its address, so an address belongs to one protocol at a time.
// Shardjob executors may share one (a restarted process under a new
// instance id takes over its predecessor's address).
func (s *Service) addressFree(ctx context.Context, req protocol.HeartbeatRequest) error {
	live, err := s.st.LiveExecutorsAt(ctx, req.Address, req.InstanceID, s.cfg.Timing.LostAfter.Milliseconds())
	if err != nil {
		return err
	}
	for _, e := range live {
		if e.Protocol == store.ProtocolXXLJob {
			s.log.Warn("refused heartbeat: its address is a live XXL-JOB executor's", "instance", req.InstanceID, "app", req.App, "address", req.Address, "xxljob_executor_id", e.ID)
			return conflict(fmt.Sprintf(
				"address %s is the address of a live XXL-JOB executor: an address belongs to one executor protocol at a time. Give this executor the URL it really listens on (AdvertiseURL); the address is free again %s after the XXL-JOB executor stops answering", req.Address, s.cfg.Timing.LostAfter))
		}
	}
	return nil
}

// reincarnate records a new process behind an executor. If another process
// was behind it before (the instance restarted under the same instance id
// before anyone declared it lost), the slots that process held are lost at
// once and placed again, except those the new process reports as its own.
// It returns only database errors.
func (s *Service) reincarnate(ctx context.Context, ex store.Executor, req protocol.HeartbeatRequest) error {
	keep := append(slices.Clone(req.Unsent), req.Released...)
	for _, r := range req.Running {
		keep = append(keep, r.Token)
	}
	moved, changed, err := s.st.Reincarnate(ctx, ex.ID, ex.Incarnation, req.Incarnation, keep)
	if err != nil {
		return err
	}
	if !changed || ex.Incarnation == "" {
		return nil
	}
	s.log.Warn("executor restarted under the same instance id: the slots of its previous process are lost and placed again",
		"executor_id", ex.ID, "instance", ex.InstanceID, "moved", moved)
	if moved > 0 {
		if _, err := s.st.RaiseAlarm(ctx, store.Alarm{
			Kind: store.AlarmExecutorLost, Severity: "warning", App: ex.App,
			DedupKey: fmt.Sprintf("executor_lost:restart:%d:%s", ex.ID, req.Incarnation),
			Msg:      msg.New(msg.AlarmExecutorRestart, "executor", ex.InstanceID, "app", ex.App, "slots", moved),
		}); err != nil {
			s.log.Warn("cannot record the executor_lost alarm", "err", err)
		}
		s.wake() // the leader places them (on this replica if it leads)
	}
	return nil
}

// reconcile loses at once the slots the executor process acknowledged and no
// longer reports (see store.Reconcile), raises an executor_lost alarm for
// them and wakes the leader to place them again. It returns only database
// errors.
func (s *Service) reconcile(ctx context.Context, ex store.Executor, req protocol.HeartbeatRequest, running []int64) error {
	if req.AcceptSeq <= 0 || req.Incarnation == "" {
		return nil // an executor that does not number what it accepts
	}
	reported := slices.Concat(running, req.Released, req.Unsent)
	moved, err := s.st.Reconcile(ctx, ex.ID, req.AcceptSeq, reported)
	if err != nil {
		return err
	}
	if len(moved) == 0 {
		return nil
	}
	s.log.Warn("executor no longer reports slots it accepted: they are lost and placed again",
		"executor_id", ex.ID, "instance", ex.InstanceID, "slots", len(moved), "tokens", moved[:min(len(moved), maxLoggedTokens)])
	if _, err := s.st.RaiseAlarm(ctx, store.Alarm{
		Kind: store.AlarmExecutorLost, Severity: "warning",
		DedupKey: fmt.Sprintf("executor_lost:reconcile:%d:%s:%d", ex.ID, req.Incarnation, req.AcceptSeq),
		Msg:      msg.New(msg.AlarmSlotsUnreported, "executor", ex.InstanceID, "app", ex.App, "slots", len(moved), "token", moved[0]),
	}); err != nil {
		s.log.Warn("cannot record the executor_lost alarm", "err", err)
	}
	s.wake()
	return nil
}
