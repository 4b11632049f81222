// This file: the executor's counters and state as a Stats snapshot.

package sdk

import "time"

// Stats is a snapshot of an executor's state and counters, for metrics.
type Stats struct {
	Running        int // handlers running now
	Queued         int // accepted slots waiting for capacity
	PendingResults int // results not yet acknowledged by an admin

	Started   uint64 // handlers started
	Succeeded uint64 // slots finished succeeded
	Failed    uint64 // slots finished failed (including unknown handler, timeout, panic)
	Cancelled uint64 // slots finished cancelled

	ResultsAccepted uint64 // results acknowledged as accepted
	ResultsRejected uint64 // results acknowledged as rejected (stale token)
	// Refused counts slot assignments not accepted: while stopping, or
	// because MaxPendingResults was reached.
	Refused uint64
	// Released counts queued slots given back unstarted to the admin (work
	// stealing: an idle executor runs them instead).
	Released uint64

	Heartbeats        uint64 // heartbeats an admin answered
	HeartbeatFailures uint64 // heartbeats no admin answered
	ResultFailures    uint64 // result requests no admin answered
	// LastHeartbeat is when an admin last answered a heartbeat (zero: never).
	LastHeartbeat time.Time

	// Records counted by finished slots (Task.AddProcessed and the like).
	RecordsProcessed, RecordsSkipped, RecordsFailed, RecordsUncertain uint64

	ExecutorID int64  // the id the admin gave this executor (0 until it answered)
	Admin      string // the admin requests go to first
}

// Stats returns a snapshot of the executor's state and counters.
func (e *Executor) Stats() Stats {
	e.mu.Lock()
	s := e.stats
	s.Running, s.Queued, s.PendingResults = e.running, len(e.queue), len(e.pending)
	s.ExecutorID = e.executorID
	s.LastHeartbeat = e.lastBeat
	e.mu.Unlock()
	s.Admin = e.client.current()
	return s
}
