package apitypes

import "time"

// QueueView is GET /api/v1/queue: what waits to start, per app the user
// may see (docs/tenancy.md, "The queue"). It reads at most Limit due
// pending runs and Limit waiting slots, oldest first; Partial says that
// more wait than it read, so that its counts are lower bounds.
type QueueView struct {
	Apps    []QueueApp `json:"apps"`
	Partial bool       `json:"partial"`
	Limit   int        `json:"limit"`
	// At is when the view was read (the admin's clock).
	At time.Time `json:"at"`
}

// QueueApp is what waits of one app.
type QueueApp struct {
	App string `json:"app"`
	// MaxRunningSlots is the app's concurrency cap (null: none) and
	// RunningSlots its slots placed on executors now (with a cap only).
	MaxRunningSlots *int64 `json:"max_running_slots"`
	RunningSlots    *int64 `json:"running_slots,omitempty"`
	// WaitingRuns are due runs that have not started (pending);
	// WaitingSlots slots of started runs that wait for an executor (held
	// back by a cap, or a retry not placed yet).
	WaitingRuns  int64 `json:"waiting_runs"`
	WaitingSlots int64 `json:"waiting_slots"`
	// OldestSince is when the oldest waiting run was due, or the run of the
	// oldest waiting slot started.
	OldestSince *time.Time `json:"oldest_since,omitempty"`
	// Priorities splits the waiting runs and slots by priority, the most
	// urgent first (those with nothing waiting left out).
	Priorities []QueuePriority `json:"priorities"`
	// Reasons says why the waiting runs wait, as they show it (the most
	// runs first); "" for runs due that the leader has not looked at yet.
	Reasons []QueueReason `json:"reasons"`
}

// QueuePriority is what waits of one app at one priority.
type QueuePriority struct {
	Priority string `json:"priority"`
	Runs     int64  `json:"runs"`
	Slots    int64  `json:"slots"`
}

// QueueReason is how many waiting runs of one app show one reason.
type QueueReason struct {
	Reason string `json:"reason"`
	Runs   int64  `json:"runs"`
}
