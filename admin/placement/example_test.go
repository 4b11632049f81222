package placement_test

import (
	"fmt"

	"github.com/shardjob/shardjob/admin/placement"
)

// A fourth executor joins a job whose 12 slots ran on three: the slots stay
// where they were, except the share the newcomer needs.
func ExampleBalance() {
	costs := make([]placement.SlotCost, 12)
	for slot := range costs {
		costs[slot] = placement.SlotCost{Slot: slot, Cost: 10, LastOwner: int64(1 + slot/4)}
	}
	nodes := []placement.Node{
		{ID: 1, Capacity: 1, Speed: 1},
		{ID: 2, Capacity: 1, Speed: 1},
		{ID: 3, Capacity: 1, Speed: 1},
		{ID: 4, Capacity: 1, Speed: 1}, // new
	}
	plan := placement.Balance(costs, nodes, placement.DefaultMargin)
	fmt.Println(plan.Owner)
	fmt.Printf("makespan %.0f s (lower bound %.0f s), %d slots moved\n",
		plan.Makespan, placement.LowerBound(costs, nodes), plan.Moved)
	// Output:
	// [4 1 1 1 4 2 2 2 4 3 3 3]
	// makespan 30 s (lower bound 30 s), 3 slots moved
}

// Executor 2 ran out of work; executor 1 still has four slots queued.
func ExampleSteal() {
	remaining := map[int64][]placement.SlotCost{
		1: {{Slot: 0, Cost: 40}, {Slot: 1, Cost: 30}, {Slot: 2, Cost: 20}, {Slot: 3, Cost: 10}},
	}
	nodes := []placement.Node{{ID: 1, Capacity: 1, Speed: 1}, {ID: 2, Capacity: 1, Speed: 1}}
	fmt.Println(placement.Steal(2, remaining, nodes))
	// Output:
	// [0 3]
}
