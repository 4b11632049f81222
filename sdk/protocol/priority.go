package protocol

import (
	"fmt"
	"time"
)

// Priority is how urgent a run is (docs/tenancy.md, "Priorities"): where
// slots wait — for room under a concurrency cap on the admin, for free
// capacity in an executor's queue — more urgent ones start first, and
// waiting makes a run more urgent (Aged), so that low work is never
// starved. The zero value is PriorityLow; a run says nothing of it on the
// wire when it is normal.
type Priority int

// The priorities, least urgent first.
const (
	PriorityLow Priority = iota
	PriorityNormal
	PriorityHigh
	PriorityCritical
)

var priorityNames = [...]string{"low", "normal", "high", "critical"}

// String is the priority's name ("normal" for one out of range).
func (p Priority) String() string {
	if p < PriorityLow || p > PriorityCritical {
		return "normal"
	}
	return priorityNames[p]
}

// ParsePriority reads a priority's name; "" is PriorityNormal.
func ParsePriority(s string) (Priority, error) {
	if s == "" {
		return PriorityNormal, nil
	}
	for i, n := range priorityNames {
		if n == s {
			return Priority(i), nil
		}
	}
	return PriorityNormal, fmt.Errorf("unknown priority %q: one of critical, high, normal, low", s)
}

// Aged is the priority of work of priority p that has waited for waited:
// one level higher for every full aging waited, at most PriorityCritical.
// So low work that waits 3 × aging competes with critical work, older
// first, and waits no longer behind newer work. aging ≤ 0 turns aging off.
func (p Priority) Aged(waited, aging time.Duration) Priority {
	if aging <= 0 || waited < aging || p >= PriorityCritical {
		return p
	}
	return min(PriorityCritical, p+Priority(waited/aging))
}

// DefaultPriorityAging is how long work waits before it counts one
// priority higher, on the admin and in executors' queues alike.
const DefaultPriorityAging = 5 * time.Minute
