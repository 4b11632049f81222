package cluster

import (
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// ExecutorView is an entry of GET /api/v1/executors.
type ExecutorView struct {
	ID            int64     `json:"id"`
	InstanceID    string    `json:"instance_id"`
	App           string    `json:"app"`
	State         string    `json:"state"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
}

// Terminal are the statuses of a run that has ended.
var Terminal = map[string]bool{"succeeded": true, "failed": true, "partially_failed": true, "cancelled": true}

// ExecutorOf returns the executor id of an attempt, 0 when it has none.
func ExecutorOf(a apitypes.Attempt) int64 {
	if a.ExecutorID == nil {
		return 0
	}
	return *a.ExecutorID
}

// AttemptString describes an attempt in one line, for failure messages.
func AttemptString(a apitypes.Attempt) string {
	return fmt.Sprintf("token %d (slot %d, attempt %d, executor %d): %s current=%v processed=%d skipped=%d failed=%d uncertain=%d %s",
		a.Token, a.Slot, a.Attempt, ExecutorOf(a), a.Status, a.Current, a.Processed, a.Skipped, a.Failed, a.Uncertain, a.Error)
}

// Current returns the current attempt of every slot.
func Current(atts []apitypes.Attempt) map[int]apitypes.Attempt {
	m := map[int]apitypes.Attempt{}
	for _, a := range atts {
		if a.Current {
			m[a.Slot] = a
		}
	}
	return m
}
