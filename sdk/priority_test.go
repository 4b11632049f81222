package sdk

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestQueuedSlotsStartByPriority: an executor at capacity starts its queued
// slots the most urgent first, and in arrival order within a priority,
// whatever order they arrived in.
func TestQueuedSlotsStartByPriority(t *testing.T) {
	t.Parallel()
	fa := newFakeAdmin(t, testSecret)
	started := make(chan int64, 20)
	release := make(chan struct{}, 20)
	h := func(ctx context.Context, task *Task) error {
		started <- task.Token
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	e := newExecutor(t, []string{fa.URL()}, map[string]Handler{"work": h}, func(c *Config) { c.Capacity = 1 })
	blocker := run("work", 100)
	require.Equal(t, []int64{100}, fa.assignPush(t, e, blocker))
	require.Equal(t, int64(100), recv(t, started, "the first slot to start"))

	assignment := func(runID int64, prio string, tokens ...int64) protocol.RunAssignment {
		ra := run("work", tokens...)
		ra.RunID, ra.Priority = runID, prio
		return ra
	}
	// Arrival order: low, normal, critical, high, normal, low.
	fa.assignPush(t, e, assignment(1, "low", 201), assignment(2, "", 202), assignment(3, "critical", 203))
	fa.assignPush(t, e, assignment(4, "high", 204), assignment(5, "normal", 205), assignment(6, "low", 206))
	require.Equal(t, 6, e.Stats().Queued)
	var order []int64
	for range 6 {
		release <- struct{}{}
		order = append(order, recv(t, started, "a queued slot to start"))
	}
	require.Equal(t, []int64{203, 204, 202, 205, 201, 206}, order)
	release <- struct{}{}
	fa.waitFor(t, "every result", func(f *fakeAdmin) bool { return len(f.results) == 7 })
}

// TestNextQueuedAgesWaitingSlots: a slot that has waited counts one
// priority higher per aging interval; among equals the older (earlier in
// the queue, which is in arrival order) goes first.
func TestNextQueuedAgesWaitingSlots(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	const aging = time.Minute
	q := func(p protocol.Priority, ago time.Duration) *slot { return &slot{priority: p, queued: now.Add(-ago)} }
	for _, c := range []struct {
		name  string
		queue []*slot
		want  int
	}{
		{"arrival order within a priority", []*slot{q(protocol.PriorityNormal, time.Second), q(protocol.PriorityNormal, 2*time.Second)}, 0},
		{"critical before normal", []*slot{q(protocol.PriorityNormal, 30*time.Second), q(protocol.PriorityCritical, 0)}, 1},
		{"low aged 3 intervals ties with critical and is older", []*slot{q(protocol.PriorityLow, 3*aging), q(protocol.PriorityCritical, 0)}, 0},
		{"low aged 2 intervals is high: below critical", []*slot{q(protocol.PriorityLow, 2*aging+59*time.Second), q(protocol.PriorityCritical, 0)}, 1},
		{"low aged 1 interval beats a new normal only when first", []*slot{q(protocol.PriorityLow, aging), q(protocol.PriorityNormal, 0)}, 0},
	} {
		require.Equal(t, c.want, nextQueued(c.queue, now, aging), c.name)
	}
	require.Equal(t, 1, nextQueued([]*slot{q(protocol.PriorityLow, time.Hour), q(protocol.PriorityNormal, 0)}, now, -1), "no aging")
}
