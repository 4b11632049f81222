package sdk

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// progressQueued is the progress reported for an accepted slot waiting for
// capacity.
const progressQueued = protocol.ProgressQueued

// minHedgeAfter bounds hedgeAfter from below: a heartbeat is not sent twice
// only because an admin took a few hundred milliseconds.
const minHedgeAfter = 250 * time.Millisecond

// heartbeatLoop sends a heartbeat at once, then every interval (the admin's
// interval_ms when it gives one), and whenever kicked, until ctx ends.
func (e *Executor) heartbeatLoop(ctx context.Context) {
	defer e.loops.Done()
	interval := e.cfg.HeartbeatInterval
	timer := time.NewTimer(0)
	defer timer.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-e.hbKick:
		}
		next, admin, err := e.heartbeat(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			e.mu.Lock()
			e.stats.HeartbeatFailures++
			e.notifyLocked()
			e.mu.Unlock()
			if !failing {
				e.log.Warn("heartbeat failed on every admin: retrying every interval", "err", err, "interval", interval)
			} else {
				e.log.Debug("heartbeat failed", "err", err)
			}
			failing = true
		default:
			if failing {
				e.log.Info("heartbeat answered again", "admin", admin)
			}
			failing = false
			if next > 0 && next != interval {
				e.log.Debug("heartbeat interval set by admin", "interval", next)
				interval = next
			}
			kick(e.resRetry)
		}
		e.pruneFinished(time.Now())
		timer.Reset(interval)
	}
}

// heartbeat sends one heartbeat and applies the response. It returns the
// interval the admin asked for (0 for none) and the admin that answered.
func (e *Executor) heartbeat(ctx context.Context) (time.Duration, string, error) {
	req := e.heartbeatRequest()
	var resp protocol.HeartbeatResponse
	admin, err := e.client.postHedged(ctx, protocol.PathHeartbeat, req, &resp, e.hedgeAfter())
	if req.Draining {
		e.mu.Lock()
		if !e.drainBeatSent {
			e.drainBeatSent = true
			close(e.drainBeat)
		}
		e.mu.Unlock()
	}
	if err != nil {
		return 0, "", err
	}
	e.client.addAdmins(resp.Admins)
	e.mu.Lock()
	if resp.ExecutorID != 0 && resp.ExecutorID != e.executorID {
		e.log.Info("registered with admin", "admin", admin, "executor_id", resp.ExecutorID)
		e.executorID = resp.ExecutorID
	}
	if resp.IntervalMS > 0 {
		e.adminInterval = max(time.Duration(resp.IntervalMS)*time.Millisecond, minAdminInterval)
	}
	if resp.LostAfterMS > 0 {
		e.lostAfter = time.Duration(resp.LostAfterMS) * time.Millisecond
	}
	e.notifyLocked()
	e.mu.Unlock()
	switch {
	case len(resp.Assignments) == 0:
	case protocol.Expired(resp.AssignmentsValidUntilMS, time.Now()):
		// Read late (frozen in between): the admin may have moved them;
		// a later heartbeat delivers what is still ours.
		e.log.Warn("ignoring the assignments of a heartbeat response read after they expired (was this process frozen?)", "runs", len(resp.Assignments), "admin", admin)
	default:
		e.accept(resp.Assignments, "heartbeat") // its next heartbeat reports what started
	}
	if len(resp.Cancel) > 0 {
		e.cancel(resp.Cancel, "", "heartbeat")
		e.forgetReleased(resp.Cancel)
	}
	// Only now, with what moved elsewhere cancelled, is the contact fresh:
	// queued slots held back by a stale contact start (startQueuedLocked).
	// Counted here too, with lastBeat: an answered heartbeat is one that
	// has been applied (readiness and the tests go by it).
	e.mu.Lock()
	e.stats.Heartbeats++
	e.lastBeat = time.Now()
	e.startQueuedLocked()
	e.notifyLocked()
	e.mu.Unlock()
	var next time.Duration
	if resp.IntervalMS > 0 {
		next = max(time.Duration(resp.IntervalMS)*time.Millisecond, minAdminInterval)
	}
	return next, admin, nil
}

// lossThresholdLocked is the heartbeat silence after which the admins
// declare this executor lost: as the admin says, or three heartbeat
// intervals until one does.
func (e *Executor) lossThresholdLocked() time.Duration {
	if e.lostAfter > 0 {
		return e.lostAfter
	}
	interval := e.cfg.HeartbeatInterval
	if e.adminInterval > 0 {
		interval = e.adminInterval
	}
	return protocol.LostAfterBeats * interval
}

// contactStaleLocked reports whether no admin has answered a heartbeat for
// half the loss threshold (or ever): the admins may have declared this
// process lost and moved its slots, so it asks before starting anything it
// queued (see startQueuedLocked).
func (e *Executor) contactStaleLocked(now time.Time) bool {
	return e.lastBeat.IsZero() || now.Sub(e.lastBeat) > e.lossThresholdLocked()/2
}

// hedgeAfter is how long a heartbeat waits for an admin before it asks the
// next one too: a quarter of the loss threshold (three heartbeat intervals
// until an admin tells it), so that a frozen or overloaded admin does not
// get a live executor declared lost by the others.
func (e *Executor) hedgeAfter() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return max(e.lossThresholdLocked()/4, minHedgeAfter)
}

// heartbeatRequest snapshots the executor: identity, and every accepted
// unfinished token (running ones with their progress, queued ones as
// "queued") in token order.
func (e *Executor) heartbeatRequest() protocol.HeartbeatRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	req := protocol.HeartbeatRequest{
		InstanceID: e.cfg.InstanceID,
		App:        e.cfg.App,
		Address:    e.addr,
		Capacity:   e.cfg.Capacity,
		Version:    e.cfg.Version,
		Handlers:   e.handlerNamesLocked(),
		Labels:     e.cfg.Labels,
		Draining:   e.state != stateRunning,
		// The process behind the instance id: a restart is told apart
		// from a heartbeat that came late.
		Incarnation: e.incarnation,
		AcceptSeq:   e.acceptSeq,
	}
	for _, r := range e.pending {
		req.Unsent = append(req.Unsent, r.Token)
	}
	slices.Sort(req.Unsent)
	for tok, s := range e.slots {
		p := progressQueued
		if s.cancel != nil {
			p = s.task.progress()
		}
		req.Running = append(req.Running, protocol.RunningSlot{Token: tok, Progress: p})
	}
	slices.SortFunc(req.Running, func(a, b protocol.RunningSlot) int { return cmp.Compare(a.Token, b.Token) })
	for tok := range e.released {
		req.Released = append(req.Released, tok)
	}
	slices.Sort(req.Released)
	return req
}

// pruneFinished forgets tokens whose result was acknowledged more than
// finishedRetention ago.
func (e *Executor) pruneFinished(now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for tok, acked := range e.finished {
		if !acked.IsZero() && now.Sub(acked) > finishedRetention {
			delete(e.finished, tok)
		}
	}
}
