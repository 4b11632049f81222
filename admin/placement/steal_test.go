package placement

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// remainingMakespan is the predicted makespan of the unstarted slots, each
// executor's list scheduled over its lanes as Steal sees it.
func remainingMakespan(remaining map[int64][]SlotCost, nodes []Node) float64 {
	ms := 0.0
	for id, slots := range remaining {
		owner := make([]int64, len(slots))
		costs := make([]SlotCost, len(slots))
		for i, c := range slots {
			owner[i] = id
			costs[i] = SlotCost{Slot: i, Cost: c.Cost}
		}
		ms = max(ms, Makespan(owner, costs, nodes))
	}
	return ms
}

// apply moves the stolen slots to the idle executor.
func apply(remaining map[int64][]SlotCost, idle int64, stolen []int) map[int64][]SlotCost {
	out := map[int64][]SlotCost{}
	take := map[int]bool{}
	for _, s := range stolen {
		take[s] = true
	}
	for _, id := range slices.Sorted(maps.Keys(remaining)) {
		for _, c := range remaining[id] {
			if take[c.Slot] {
				out[idle] = append(out[idle], c)
			} else {
				out[id] = append(out[id], c)
			}
		}
	}
	return out
}

func TestSteal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		idle      int64
		remaining map[int64][]SlotCost
		nodes     []Node
		want      []int
	}{
		{
			name: "takes from the busiest, largest slot that fits first",
			idle: 3,
			remaining: map[int64][]SlotCost{
				1: {{Slot: 0, Cost: 8}, {Slot: 1, Cost: 4}, {Slot: 2, Cost: 2}, {Slot: 3, Cost: 2}}, // 16
				2: {{Slot: 4, Cost: 5}, {Slot: 5, Cost: 1}},                                         // 6
			},
			nodes: nodesOf(1, 2, 3),
			// 8 would leave the victim at 8 and the thief at 8: allowed.
			// Then node 1 (8) vs thief (8): nothing to gain.
			want: []int{0},
		},
		{
			name: "never past the victim: a single big slot stays",
			idle: 2,
			remaining: map[int64][]SlotCost{
				1: {{Slot: 7, Cost: 10}},
			},
			nodes: nodesOf(1, 2),
			want:  nil,
		},
		{
			name: "a fast thief takes more",
			idle: 2,
			remaining: map[int64][]SlotCost{
				1: unit(12, 1, nil),
			},
			nodes: []Node{{ID: 1, Capacity: 1, Speed: 1}, {ID: 2, Capacity: 1, Speed: 2}},
			want:  []int{0, 1, 2, 3, 4, 5, 6, 7}, // 4 left on 1 (4 s), 8 on 2 (4 s)
		},
		{
			name: "the victim's lanes count",
			idle: 2,
			remaining: map[int64][]SlotCost{
				1: unit(9, 1, nil), // 4 lanes: 3 s
			},
			nodes: []Node{{ID: 1, Capacity: 4, Speed: 1}, {ID: 2, Capacity: 1, Speed: 1}},
			want:  []int{0}, // 8 left: 2 s, thief 1 s; 7 left would still take 2 s
		},
		{
			name: "switches victim as loads change, ties go to the lower ID",
			idle: 9,
			remaining: map[int64][]SlotCost{
				2: {{Slot: 0, Cost: 3}, {Slot: 1, Cost: 3}, {Slot: 2, Cost: 3}},
				1: {{Slot: 3, Cost: 3}, {Slot: 4, Cost: 3}, {Slot: 5, Cost: 3}},
			},
			nodes: nodesOf(1, 2, 9),
			want:  []int{3, 0},
		},
		{
			name:      "idle executor unknown",
			idle:      5,
			remaining: map[int64][]SlotCost{1: unit(4, 1, nil)},
			nodes:     nodesOf(1),
			want:      nil,
		},
		{
			name:      "victims unknown to nodes are left alone",
			idle:      2,
			remaining: map[int64][]SlotCost{7: unit(4, 1, nil)},
			nodes:     nodesOf(2),
			want:      nil,
		},
		{
			name:      "nothing remaining",
			idle:      2,
			remaining: nil,
			nodes:     nodesOf(1, 2),
			want:      nil,
		},
		{
			name: "unmeasured slots get the mean",
			idle: 2,
			remaining: map[int64][]SlotCost{
				1: {{Slot: 0, Cost: 6}, {Slot: 1}, {Slot: 2}}, // 6+6+6
			},
			nodes: nodesOf(1, 2),
			want:  []int{0}, // 12 left, thief 6
		},
		{
			name: "the thief's own unstarted slots count",
			idle: 2,
			remaining: map[int64][]SlotCost{
				1: {{Slot: 0, Cost: 5}, {Slot: 1, Cost: 4}},
				2: {{Slot: 2, Cost: 4}},
			},
			nodes: nodesOf(1, 2),
			want:  nil, // taking 4 makes the thief 8 > victim 5
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Steal(tc.idle, tc.remaining, tc.nodes)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, remainingMakespan(apply(tc.remaining, tc.idle, got), tc.nodes),
				remainingMakespan(tc.remaining, tc.nodes))
		})
	}
}

func TestStealNeverIncreasesMakespan(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 12))
	stole := 0
	for iter := range 500 {
		n := 2 + rng.IntN(5)
		nodes := make([]Node, n)
		for i := range nodes {
			nodes[i] = Node{ID: int64(i + 1), Capacity: 1 + rng.IntN(4), Speed: 0.3 + rng.Float64()*1.7}
		}
		idle := nodes[rng.IntN(n)].ID
		remaining := map[int64][]SlotCost{}
		slot := 0
		for _, nd := range nodes {
			if nd.ID == idle && rng.IntN(2) == 0 {
				continue
			}
			for range rng.IntN(30) {
				remaining[nd.ID] = append(remaining[nd.ID], SlotCost{Slot: slot, Cost: float64(1 + rng.IntN(50))})
				slot++
			}
		}
		before := remainingMakespan(remaining, nodes)
		got := Steal(idle, remaining, nodes)
		after := apply(remaining, idle, got)
		require.LessOrEqual(t, remainingMakespan(after, nodes), before*(1+1e-12), "iteration %d", iter)
		require.Equal(t, got, Steal(idle, remaining, nodes), "deterministic")
		// Nothing more to take once done, and nothing taken from the thief.
		require.Empty(t, Steal(idle, after, nodes), "iteration %d", iter)
		for _, s := range got {
			for _, c := range remaining[idle] {
				require.NotEqual(t, c.Slot, s)
			}
		}
		if len(got) > 0 {
			stole++
		}
	}
	require.Greater(t, stole, 100)
}
