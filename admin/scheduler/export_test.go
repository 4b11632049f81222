package scheduler

import (
	"context"
	"maps"
	"slices"
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

// FireOwnedOnce fires one round of the owned partitions' due jobs, as
// FireOwned does in a loop.
func (s *Scheduler) FireOwnedOnce(ctx context.Context) (more bool, err error) {
	owned, _ := s.cfg.Partitions.Owned()
	return s.fireAll(ctx, fireScope{parts: slices.Sorted(maps.Keys(owned)), owned: owned, all: len(owned) == s.store.PartitionCount()})
}
