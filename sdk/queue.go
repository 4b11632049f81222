// This file: taking assignments (accept, by push or heartbeat response) and
// the local queue of accepted slots that wait for capacity.

package sdk

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// slot is an accepted slot attempt that has not finished: queued or running.
type slot struct {
	task    *Task
	handler Handler
	timeout time.Duration
	started time.Time               // zero while queued
	cancel  context.CancelCauseFunc // nil while queued
	// priority is the run's; queued when it was accepted (for aging).
	priority protocol.Priority
	queued   time.Time
}

// accept takes the assignments of a push or a heartbeat response and returns
// the tokens the executor holds among them: new ones and ones it already
// knows (queued, running, or finished recently) — so a push and a heartbeat
// delivering the same assignment start it once. Tokens not returned were
// refused (the executor is stopping, or MaxPendingResults is reached).
// started lists the accepted tokens that are not queued: started now, or
// already running or finished.
func (e *Executor) accept(as []protocol.RunAssignment, source string) (accepted, started []int64, seq int64) {
	now := time.Now()
	accepted = []int64{}
	refused := 0
	e.mu.Lock()
	defer e.mu.Unlock()
	// Numbered before anything is taken: every heartbeat built from now on
	// reports what this batch accepted (the admin reconciles on it).
	e.acceptSeq++
	seq = e.acceptSeq
	for i := range as {
		ra := &as[i]
		var problem string // of the run's last slot that failed before start
		failed := 0
		for _, sa := range ra.Attempts {
			if e.knownLocked(sa.Token) {
				accepted = append(accepted, sa.Token)
				_, finished := e.finished[sa.Token]
				if s, ok := e.slots[sa.Token]; ok && s.cancel != nil || finished {
					started = append(started, sa.Token) // running or finished; not queued or given back
				}
				continue
			}
			if e.state != stateRunning || len(e.slots)+len(e.pending) >= e.cfg.MaxPendingResults {
				refused++
				continue
			}
			accepted = append(accepted, sa.Token)
			t := e.newTask(ra, sa)
			h, ok := e.handlers[ra.Handler]
			bad := ""
			switch {
			case !ok:
				bad = fmt.Sprintf("no handler named %s registered on this executor (app %s)", ra.Handler, e.cfg.App)
			case ra.SlotCount < 1 || sa.Slot < 0 || sa.Slot >= ra.SlotCount:
				bad = fmt.Sprintf("invalid assignment: slot %d is outside [0, %d)", sa.Slot, ra.SlotCount)
			}
			if bad != "" {
				problem = bad
				failed++
				e.finishLocked(protocol.SlotResult{
					Token: sa.Token, Status: protocol.SlotFailed, Error: bad,
					StartedAt: now.UnixMilli(), FinishedAt: now.UnixMilli(),
				})
				started = append(started, sa.Token)
				continue
			}
			prio, _ := protocol.ParsePriority(ra.Priority) // an unknown name (a newer admin): normal
			s := &slot{task: t, handler: h, timeout: time.Duration(ra.TimeoutMS) * time.Millisecond, priority: prio, queued: now}
			e.slots[sa.Token] = s
			if e.running < e.cfg.Capacity {
				e.startLocked(s)
				started = append(started, sa.Token)
			} else {
				e.queue = append(e.queue, s)
				t.Logger.Debug("slot queued: executor at capacity", "capacity", e.cfg.Capacity, "queued", len(e.queue))
			}
		}
		if failed > 0 { // one line per run, not per slot
			e.log.Error("slots failed before start", "run_id", ra.RunID, "job", ra.JobName,
				"handler", ra.Handler, "slots", failed, "err", problem, "source", source)
		}
	}
	e.notifyLocked()
	if refused > 0 {
		e.stats.Refused += uint64(refused)
		switch {
		case e.state != stateRunning:
			e.log.Debug("ignoring assignments: executor is stopping", "slots", refused, "source", source)
		case !e.refusedLogged:
			e.refusedLogged = true
			e.log.Warn("refusing assignments: MaxPendingResults reached (results are not being acknowledged by any admin)",
				"slots", refused, "max_pending_results", e.cfg.MaxPendingResults,
				"pending_results", len(e.pending), "unfinished", len(e.slots), "source", source)
		default:
			e.log.Debug("refusing assignments: MaxPendingResults reached", "slots", refused, "source", source)
		}
	}
	return accepted, started, seq
}

func (e *Executor) knownLocked(token int64) bool {
	if _, ok := e.slots[token]; ok {
		return true
	}
	if e.released[token] {
		return true // given back: never started here, even if delivered again
	}
	_, ok := e.finished[token]
	return ok
}

func (e *Executor) newTask(ra *protocol.RunAssignment, sa protocol.SlotAttempt) *Task {
	t := &Task{
		RunID:       ra.RunID,
		JobID:       ra.JobID,
		JobName:     ra.JobName,
		Handler:     ra.Handler,
		ScheduledAt: time.UnixMilli(ra.ScheduledAt),
		Slot:        sa.Slot,
		SlotCount:   ra.SlotCount,
		Params:      ra.Params,
		SlotParam:   sa.Param,
		Token:       sa.Token,
		Attempt:     sa.Attempt,
		Workflow:    ra.Workflow,
		Logger:      e.taskLogger(ra, sa), // tagged with run_id, job, slot, token, attempt (logship.go)
	}
	if ra.Records != nil {
		t.Records = *ra.Records
	}
	return t
}

// startQueuedLocked starts queued slots while capacity allows, the most
// urgent first (nextQueued), but asks first when the contact with the admins is stale (the
// process was frozen, or cut off): it waits for a heartbeat answer, which
// cancels the queued tokens that were moved elsewhere meanwhile, and the
// heartbeat calls it again.
func (e *Executor) startQueuedLocked() {
	if e.state != stateRunning {
		return
	}
	for e.running < e.cfg.Capacity && len(e.queue) > 0 {
		if e.contactStaleLocked(time.Now()) {
			e.log.Debug("holding queued slots until an admin answers a heartbeat", "queued", len(e.queue),
				"last_heartbeat", e.lastBeat)
			kick(e.hbKick)
			return
		}
		i := nextQueued(e.queue, time.Now(), e.cfg.PriorityAging)
		next := e.queue[i]
		e.queue = slices.Delete(e.queue, i, i+1)
		e.startLocked(next)
	}
}

// nextQueued is the index in queue (arrival order) of the slot to start
// next: the first of those whose priority, aged by how long they have been
// queued, is the highest.
func nextQueued(queue []*slot, now time.Time, aging time.Duration) int {
	best, bestPrio := 0, protocol.PriorityLow-1
	for i, s := range queue {
		if p := s.priority.Aged(now.Sub(s.queued), aging); p > bestPrio {
			best, bestPrio = i, p
			if p == protocol.PriorityCritical {
				break
			}
		}
	}
	return best
}
