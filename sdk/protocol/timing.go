package protocol

import "time"

// Defaults of Timing, the one place they are written.
const (
	// DefaultHeartbeat is the executors' heartbeat period (Timing.Heartbeat).
	DefaultHeartbeat = 2 * time.Second
	// LostAfterBeats is how many heartbeat periods of silence make an
	// executor lost when Timing.LostAfter is not set.
	LostAfterBeats = 3
)

// Timing is the heartbeat timing of the protocol, which the admin's parts
// (scheduler, executor endpoints, XXL-JOB support) share and which the
// heartbeat response tells executors (HeartbeatResponse.IntervalMS and
// LostAfterMS). Zero fields take the defaults (WithDefaults).
type Timing struct {
	// Heartbeat is the executors' heartbeat period (--heartbeat-interval).
	// Default DefaultHeartbeat (2s).
	Heartbeat time.Duration
	// LostAfter is the heartbeat silence (database clock) after which an
	// executor is lost: its unfinished attempts move elsewhere. Default
	// LostAfterBeats × Heartbeat (6s).
	LostAfter time.Duration
}

// WithDefaults fills zero (or negative) fields.
func (t Timing) WithDefaults() Timing {
	if t.Heartbeat <= 0 {
		t.Heartbeat = DefaultHeartbeat
	}
	if t.LostAfter <= 0 {
		t.LostAfter = LostAfterBeats * t.Heartbeat
	}
	return t
}
