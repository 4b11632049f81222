package scheduler

import (
	"context"
	"time"
)

// Tick runs one round of the leader loop (tick), with loss detection due.
func (s *Scheduler) Tick(ctx context.Context, epoch int64) (more bool, err error) {
	var lastRecover time.Time
	return s.tick(ctx, epoch, &lastRecover)
}

// CapUse is what one concurrency cap allows now (caps.go).
type CapUse = capUse

// RoomFor is roomFor (caps.go).
var RoomFor = roomFor

// CapHeld reports whether the last round held work back for a cap (then
// SlotsEnded wakes the loop).
func (s *Scheduler) CapHeld() bool { return s.capHeld.Load() }
