package placement

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// unit returns n slots of the given cost, owned by owner(slot) last time.
func unit(n int, cost float64, owner func(slot int) int64) []SlotCost {
	out := make([]SlotCost, n)
	for i := range out {
		out[i] = SlotCost{Slot: i, Cost: cost}
		if owner != nil {
			out[i].LastOwner = owner(i)
		}
	}
	return out
}

// withCosts returns slots 0..len(c)-1 with those costs and no last owner.
func withCosts(c ...float64) []SlotCost {
	out := make([]SlotCost, len(c))
	for i, v := range c {
		out[i] = SlotCost{Slot: i, Cost: v}
	}
	return out
}

func nodesOf(ids ...int64) []Node {
	out := make([]Node, len(ids))
	for i, id := range ids {
		out[i] = Node{ID: id, Capacity: 1, Speed: 1}
	}
	return out
}

// perNode sums the costs placed on each node.
func perNode(owner []int64, costs []SlotCost) map[int64]float64 {
	out := map[int64]float64{}
	for _, c := range costs {
		out[owner[c.Slot]] += c.Cost
	}
	return out
}

func approx(t *testing.T, want, got float64, msgAndArgs ...any) {
	t.Helper()
	if want == got {
		return
	}
	require.InDelta(t, want, got, 1e-9*math.Max(math.Abs(want), 1), msgAndArgs...)
}

func TestBalanceLPTKnownCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		costs []SlotCost
		nodes []Node
		want  float64 // makespan
		opt   float64 // the optimum, when LPT misses it
		load  map[int64]float64
	}{
		{
			name:  "identical nodes, optimal",
			costs: withCosts(7, 5, 4, 3, 1),
			nodes: nodesOf(1, 2),
			want:  10, load: map[int64]float64{1: 10, 2: 10},
		},
		{
			name:  "three nodes, perfect fit",
			costs: withCosts(5, 5, 4, 4, 3, 3),
			nodes: nodesOf(3, 1, 2),
			want:  8, load: map[int64]float64{1: 8, 2: 8, 3: 8},
		},
		{
			name:  "LPT misses a perfect fit by one",
			costs: withCosts(8, 7, 6, 5, 4, 3, 2, 1),
			nodes: nodesOf(1, 2, 3),
			want:  13, opt: 12,
		},
		{
			name:  "fast and slow node",
			costs: withCosts(4, 2, 2, 1, 1),
			nodes: []Node{{ID: 1, Capacity: 1, Speed: 2}, {ID: 2, Capacity: 1, Speed: 1}},
			want:  3.5, load: map[int64]float64{1: 7, 2: 3},
		},
		{
			name:  "largest slot dominates and goes to the fastest node",
			costs: withCosts(10, 1, 1, 1),
			nodes: []Node{{ID: 1, Capacity: 1, Speed: 1}, {ID: 2, Capacity: 1, Speed: 2}},
			want:  5, load: map[int64]float64{2: 10, 1: 3},
		},
		{
			name:  "capacity is lanes: one node of 3 equals three nodes of 1",
			costs: withCosts(7, 5, 4, 3, 3, 2),
			nodes: []Node{{ID: 9, Capacity: 3, Speed: 1}},
			want:  9, // optimal: 7 alone leaves 17 for two lanes
		},
		{
			name:  "unmeasured slots get the mean of the measured ones",
			costs: withCosts(4, 0, 0, 4),
			nodes: nodesOf(1, 2),
			want:  8,
		},
		{
			name:  "Graham's tight example: 7 against 6 = 4/3 - 1/6",
			costs: withCosts(3, 3, 2, 2, 2),
			nodes: nodesOf(1, 2),
			want:  7, opt: 6,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan := Balance(tc.costs, tc.nodes, DefaultMargin)
			require.Len(t, plan.Owner, len(tc.costs))
			approx(t, tc.want, plan.Makespan)
			approx(t, plan.Makespan, Makespan(plan.Owner, tc.costs, tc.nodes))
			require.Zero(t, plan.Moved)
			if tc.load != nil {
				require.Equal(t, tc.load, perNode(plan.Owner, tc.costs))
			}
			lb := LowerBound(tc.costs, tc.nodes)
			if tc.opt != 0 {
				m := 0
				for _, n := range tc.nodes {
					m += n.Capacity
				}
				require.LessOrEqual(t, plan.Makespan, (4.0/3-1/(3*float64(m)))*tc.opt+1e-9)
			} else {
				require.GreaterOrEqual(t, plan.Makespan, lb-1e-9)
			}
		})
	}
}

// optimum is the best makespan over every assignment of slots to lanes
// (nodes of capacity 1), by brute force.
func optimum(costs []float64, speeds []float64) float64 {
	load := make([]float64, len(speeds))
	best := math.Inf(1)
	var rec func(j int, cur float64)
	rec = func(j int, cur float64) {
		if cur >= best {
			return
		}
		if j == len(costs) {
			best = cur
			return
		}
		for i := range load {
			load[i] += costs[j]
			rec(j+1, math.Max(cur, load[i]/speeds[i]))
			load[i] -= costs[j]
		}
	}
	rec(0, 0)
	return best
}

func TestBalanceWithinLPTBoundsOfOptimum(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	worst := map[bool]float64{}
	for range 400 {
		m := 2 + rng.IntN(2)
		n := m + 1 + rng.IntN(6)
		uniform := rng.IntN(2) == 0
		nodes := make([]Node, m)
		speeds := make([]float64, m)
		for i := range nodes {
			speeds[i] = 1
			if uniform {
				speeds[i] = 0.25 + rng.Float64()*1.75
			}
			nodes[i] = Node{ID: int64(i + 1), Capacity: 1, Speed: speeds[i]}
		}
		cs := make([]float64, n)
		for j := range cs {
			cs[j] = float64(1 + rng.IntN(20))
		}
		plan := Balance(withCosts(cs...), nodes, 0)
		opt := optimum(cs, speeds)
		bound := 4.0/3 - 1/(3*float64(m)) // Graham
		if uniform {
			bound = 2 * float64(m) / float64(m+1) // Gonzalez, Ibarra, Sahni
		}
		require.LessOrEqual(t, plan.Makespan, bound*opt*(1+1e-9), "costs %v speeds %v", cs, speeds)
		require.GreaterOrEqual(t, plan.Makespan, opt*(1-1e-9))
		worst[uniform] = math.Max(worst[uniform], plan.Makespan/opt)
	}
	t.Logf("worst LPT/optimum: identical %.3f, uniform %.3f", worst[false], worst[true])
}

func TestBalanceStickiness(t *testing.T) {
	t.Parallel()
	blocks := func(size int) func(int) int64 { return func(s int) int64 { return int64(s/size + 1) } }

	t.Run("balanced cluster with noise moves nothing", func(t *testing.T) {
		t.Parallel()
		rng := rand.New(rand.NewPCG(1, 2))
		costs := unit(64, 10, blocks(16))
		for i := range costs {
			costs[i].Cost *= 1 + 0.03*(2*rng.Float64()-1)
		}
		nodes := []Node{{1, 2, 1}, {2, 2, 1}, {3, 2, 1}, {4, 2, 1}}
		plan := Balance(costs, nodes, DefaultMargin)
		require.Zero(t, plan.Moved)
		for _, c := range costs {
			require.Equal(t, c.LastOwner, plan.Owner[c.Slot])
		}
		// Without a margin the same input would be reshuffled for a sliver.
		require.Positive(t, Balance(costs, nodes, 0).Moved)
	})

	t.Run("a node joining receives its share, nothing else moves", func(t *testing.T) {
		t.Parallel()
		costs := unit(64, 1, blocks(16))
		plan := Balance(costs, nodesOf(1, 2, 3, 4, 5), DefaultMargin)
		require.Equal(t, 12, plan.Moved) // 64 = 4×13 + 12: the fewest moves for makespan 13
		approx(t, 13, plan.Makespan)
		for _, c := range costs {
			if plan.Owner[c.Slot] != c.LastOwner {
				require.Equal(t, int64(5), plan.Owner[c.Slot])
			}
		}
	})

	t.Run("a node joining, skewed costs: few moves, mostly to it", func(t *testing.T) {
		t.Parallel()
		costs, nodes := zipfCluster(3, 512, 4)
		before := Balance(costs, nodes, DefaultMargin) // settle first
		for i := range costs {
			costs[i].LastOwner = before.Owner[i]
		}
		settled := Balance(costs, nodes, DefaultMargin)
		require.Zero(t, settled.Moved)
		nodes = append(nodes, Node{ID: 5, Capacity: 4, Speed: 1})
		plan := Balance(costs, nodes, DefaultMargin)
		lb := LowerBound(costs, nodes)
		require.Less(t, plan.Makespan, lb*(1+DefaultMargin))
		require.Less(t, plan.Moved, len(costs)/10)
		toNew, total := 0.0, 0.0
		for _, c := range costs {
			total += c.Cost
			if plan.Owner[c.Slot] != c.LastOwner {
				require.NotEqual(t, int64(5), c.LastOwner)
				if plan.Owner[c.Slot] == 5 {
					toNew += c.Cost
				}
			}
		}
		share := total * 4 / (4*0.5 + 4*0.75 + 4*1 + 4*0.5 + 4*1) // node 5's throughput share
		require.Greater(t, toNew, 0.9*share)
		t.Logf("moved %d of %d slots, %.0f of cost to the new node (its share %.0f), makespan %.1f, lower bound %.1f",
			plan.Moved, len(costs), toNew, share, plan.Makespan, lb)
	})

	t.Run("a node leaving moves only its slots", func(t *testing.T) {
		t.Parallel()
		costs := unit(64, 1, blocks(16))
		plan := Balance(costs, nodesOf(1, 2, 3), DefaultMargin)
		require.Equal(t, 16, plan.Moved)
		approx(t, 22, plan.Makespan) // ⌈64/3⌉
		for _, c := range costs {
			if c.LastOwner != 4 {
				require.Equal(t, c.LastOwner, plan.Owner[c.Slot])
			}
		}
		require.Equal(t, map[int64]int{1: 22, 2: 21, 3: 21}, counts(plan.Owner))
	})

	t.Run("the margin decides", func(t *testing.T) {
		t.Parallel()
		// Node 1 holds 10+10+1 = 21, node 2 holds 10+9 = 19: moving the 1
		// gives 20, 4.8% better.
		costs := []SlotCost{{0, 10, 1}, {1, 10, 1}, {2, 1, 1}, {3, 10, 2}, {4, 9, 2}}
		nodes := nodesOf(1, 2)
		stay := Balance(costs, nodes, 0.05)
		require.Zero(t, stay.Moved)
		approx(t, 21, stay.Makespan)
		move := Balance(costs, nodes, 0.04)
		require.Equal(t, 1, move.Moved)
		approx(t, 20, move.Makespan)
		require.Equal(t, int64(2), move.Owner[2])
		never := Balance(costs, nodes, 1)
		require.Zero(t, never.Moved)
	})

	t.Run("new slots and slots of a gone owner are placed greedily", func(t *testing.T) {
		t.Parallel()
		costs := []SlotCost{{0, 4, 1}, {1, 4, 2}, {2, 2, 0}, {3, 2, 9}}
		plan := Balance(costs, nodesOf(1, 2), DefaultMargin)
		require.Equal(t, []int64{1, 2, 1, 2}, plan.Owner)
		require.Equal(t, 1, plan.Moved) // slot 3 left node 9; slot 2 is new
		approx(t, 6, plan.Makespan)
	})

	t.Run("an overloaded node keeps one slot", func(t *testing.T) {
		t.Parallel()
		costs := []SlotCost{{0, 9, 1}, {1, 9, 1}, {2, 9, 1}}
		plan := Balance(costs, nodesOf(1, 2, 3), DefaultMargin)
		approx(t, 9, plan.Makespan)
		require.Equal(t, 2, plan.Moved)
		require.Equal(t, map[int64]int{1: 1, 2: 1, 3: 1}, counts(plan.Owner))
	})
}

// zipfCluster is a realistic input: Zipf costs, n nodes of capacity 4 and
// unequal speeds, no history.
func zipfCluster(seed uint64, slots, n int) ([]SlotCost, []Node) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	z := rand.NewZipf(rng, 1.2, 1, 200)
	costs := make([]SlotCost, slots)
	for i := range costs {
		costs[i] = SlotCost{Slot: i, Cost: float64(z.Uint64() + 1)}
	}
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: int64(i + 1), Capacity: 4, Speed: 0.5 + float64(i%3)*0.25}
	}
	return costs, nodes
}

func TestImproveNeverWorsens(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 17))
	for iter := range 300 {
		costs, nodes := randomInput(rng)
		p := newProblem(costs, 0, nodes)
		if p.n == 0 {
			continue
		}
		sticky := p.place(true)
		steps := rng.IntN(p.n + 1)
		got := p.improve(sticky, 0, steps)
		require.LessOrEqual(t, p.makespan(got), p.makespan(sticky), "iteration %d", iter)
		changed := 0
		for s := range got {
			require.True(t, got[s] >= 0 && got[s] < len(p.nodes))
			if got[s] != sticky[s] {
				changed++
			}
		}
		require.LessOrEqual(t, changed, steps)
	}
}

func TestRelabelKeepsSlotsOnInterchangeableNodes(t *testing.T) {
	t.Parallel()
	// Nodes 1, 2, 3 are interchangeable, node 4 is faster. Last time slots
	// 0-1 ran on 1, 2-3 on 2, 4-5 on 3, 6 on 4.
	owners := []int64{1, 1, 2, 2, 3, 3, 4}
	costs := make([]SlotCost, len(owners))
	for s, o := range owners {
		costs[s] = SlotCost{Slot: s, Cost: 1, LastOwner: o}
	}
	nodes := []Node{{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 2}}
	p := newProblem(costs, 0, nodes)
	// A plan with the same groups under rotated labels (node indexes).
	assign := []int{1, 1, 2, 2, 0, 0, 3}
	before := p.makespan(assign)
	p.relabel(assign)
	require.Equal(t, []int{0, 0, 1, 1, 2, 2, 3}, assign)
	require.Equal(t, before, p.makespan(assign))
	require.Zero(t, p.moved(assign))
	// Groups split between last owners: the largest overlaps win.
	assign = []int{2, 0, 0, 1, 1, 2, 3}
	p.relabel(assign)
	require.Equal(t, 3, p.moved(assign))
}

func TestBalanceRespectsCapacityAndSpeed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		slots int
		nodes []Node
		want  map[int64]int
	}{
		{"capacity", 8, []Node{{1, 1, 1}, {2, 3, 1}}, map[int64]int{1: 2, 2: 6}},
		{"speed", 9, []Node{{1, 1, 1}, {2, 1, 0.5}}, map[int64]int{1: 6, 2: 3}},
		{"speed × capacity", 12, []Node{{1, 1, 2}, {2, 2, 1}, {3, 4, 0.5}}, map[int64]int{1: 4, 2: 4, 3: 4}},
		{"capacity above the slot count", 3, []Node{{1, 100, 1}, {2, 1, 1}}, map[int64]int{1: 3}},
		{"defaults: capacity 0 and speed 0 count as 1", 4, []Node{{1, 0, 0}, {2, -3, math.NaN()}}, map[int64]int{1: 2, 2: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			costs := unit(tc.slots, 1, nil)
			plan := Balance(costs, tc.nodes, DefaultMargin)
			require.Equal(t, tc.want, counts(plan.Owner))
			approx(t, LowerBound(costs, tc.nodes), plan.Makespan)
		})
	}
}

func TestMakespanAtLeastLowerBound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	for iter := range 500 {
		costs, nodes := randomInput(rng)
		lb := LowerBound(costs, nodes)
		plan := Balance(costs, nodes, rng.Float64()*0.2)
		require.GreaterOrEqual(t, plan.Makespan, lb*(1-1e-9), "iteration %d", iter)
		approx(t, plan.Makespan, Makespan(plan.Owner, costs, nodes))
		// Any complete placement, not only Balance's.
		owner := make([]int64, len(plan.Owner))
		for s := range owner {
			owner[s] = nodes[rng.IntN(len(nodes))].ID
		}
		require.GreaterOrEqual(t, Makespan(owner, costs, nodes), lb*(1-1e-9), "iteration %d", iter)
	}
}

// randomInput draws up to 200 slots (some unmeasured, some with last
// owners, some gone) and 1 to 8 nodes of random capacity and speed.
func randomInput(rng *rand.Rand) ([]SlotCost, []Node) {
	nodes := make([]Node, 1+rng.IntN(8))
	for i := range nodes {
		nodes[i] = Node{ID: int64(i + 1), Capacity: 1 + rng.IntN(4), Speed: 0.2 + rng.Float64()*1.8}
	}
	costs := make([]SlotCost, rng.IntN(200))
	for i := range costs {
		costs[i] = SlotCost{Slot: i, Cost: math.Exp(rng.NormFloat64() * 1.5)}
		if rng.IntN(10) == 0 {
			costs[i].Cost = 0
		}
		if rng.IntN(2) == 0 {
			costs[i].LastOwner = int64(1 + rng.IntN(len(nodes)+1))
		}
	}
	return costs, nodes
}

func TestBalanceDeterministicAndOrderIndependent(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	for range 50 {
		costs, nodes := randomInput(rng)
		want := Balance(costs, nodes, DefaultMargin)
		c2 := append([]SlotCost(nil), costs...)
		n2 := append([]Node(nil), nodes...)
		rng.Shuffle(len(c2), func(i, j int) { c2[i], c2[j] = c2[j], c2[i] })
		rng.Shuffle(len(n2), func(i, j int) { n2[i], n2[j] = n2[j], n2[i] })
		require.Equal(t, want, Balance(c2, n2, DefaultMargin))
		require.Equal(t, want, Balance(costs, nodes, DefaultMargin))
	}
}

func TestBalanceDegenerateInputs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		costs     []SlotCost
		nodes     []Node
		margin    float64
		wantOwner []int64
		wantMS    float64
	}{
		{"no nodes", unit(3, 1, nil), nil, 0.05, nil, 0},
		{"only node ID 0", unit(3, 1, nil), []Node{{0, 1, 1}}, 0.05, nil, 0},
		{"no slots", nil, nodesOf(1), 0.05, nil, 0},
		{"only invalid slots", []SlotCost{{-1, 1, 0}, {MaxSlots, 1, 0}}, nodesOf(1), 0.05, nil, 0},
		{"zero costs count as 1", unit(4, 0, nil), nodesOf(1, 2), 0.05, []int64{1, 2, 1, 2}, 2},
		{"NaN, Inf and negative costs count as unmeasured", withCosts(math.NaN(), math.Inf(1), -5, 3), nodesOf(1), 0.05, []int64{1, 1, 1, 1}, 12},
		{"huge costs are capped", withCosts(1e300, 1e300), nodesOf(1, 2), 0.05, []int64{1, 2}, MaxCost},
		{"a gap in the slots is placed as unmeasured", []SlotCost{{0, 2, 0}, {2, 2, 0}}, nodesOf(1, 2), 0.05, []int64{1, 2, 1}, 4},
		{"a repeated slot takes its last entry", []SlotCost{{0, 100, 0}, {1, 1, 0}, {0, 1, 0}}, nodesOf(1, 2), 0.05, []int64{1, 2}, 1},
		{"a repeated node ID counts once", unit(2, 1, nil), []Node{{1, 1, 1}, {1, 5, 5}}, 0.05, []int64{1, 1}, 2},
		{"NaN margin counts as 0", unit(2, 1, nil), nodesOf(1, 2), math.NaN(), []int64{1, 2}, 1},
		{"negative margin counts as 0", unit(2, 1, nil), nodesOf(1, 2), -3, []int64{1, 2}, 1},
		{"negative node IDs are fine", unit(2, 1, nil), nodesOf(-2, -1), 0.05, []int64{-2, -1}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan := Balance(tc.costs, tc.nodes, tc.margin)
			require.Equal(t, tc.wantOwner, plan.Owner)
			approx(t, tc.wantMS, plan.Makespan)
			approx(t, tc.wantMS, Makespan(plan.Owner, tc.costs, tc.nodes))
			require.GreaterOrEqual(t, plan.Makespan, LowerBound(tc.costs, tc.nodes)*(1-1e-9))
		})
	}
	require.Zero(t, Makespan(nil, nil, nil))
	require.Zero(t, LowerBound(nil, nodesOf(1)))
	require.Zero(t, LowerBound(unit(3, 1, nil), nil))
	// Slots whose owner is not a node are not counted.
	require.Equal(t, 2.0, Makespan([]int64{1, 7, 0, 1}, unit(4, 1, nil), nodesOf(1)))
	// Owner entries beyond the costs count as unmeasured slots.
	require.Equal(t, 6.0, Makespan([]int64{1, 1, 1}, withCosts(2, 2), nodesOf(1)))
}

func FuzzBalance(f *testing.F) {
	f.Add([]byte{3, 1, 2, 10, 2, 1, 10, 3, 4, 3, 5, 1, 7, 2, 0, 0, 9, 3}, 1.0, 0.05)
	f.Add([]byte{0, 1, 2, 3}, 1.0, 0.0)
	f.Add([]byte{1, 0, 0, 0, 255, 255, 255}, math.Inf(1), math.NaN())
	f.Add([]byte{2, 5, 1, 1, 5, 1, 1, 0, 0, 0, 0}, 1e-300, -1.0)
	f.Fuzz(func(t *testing.T, data []byte, scale, margin float64) {
		costs, nodes := decodeInput(data, scale)
		plan := Balance(costs, nodes, margin)
		ids := map[int64]bool{}
		for _, n := range nodes {
			if n.ID != 0 {
				ids[n.ID] = true
			}
		}
		maxSlot := -1
		for _, c := range costs {
			if c.Slot >= 0 && c.Slot < MaxSlots {
				maxSlot = max(maxSlot, c.Slot)
			}
		}
		if len(ids) == 0 || maxSlot < 0 {
			require.Nil(t, plan.Owner)
			require.Zero(t, plan.Makespan)
			return
		}
		require.Len(t, plan.Owner, maxSlot+1)
		for s, id := range plan.Owner {
			require.True(t, ids[id], "slot %d on %d, not a node", s, id)
		}
		ms := Makespan(plan.Owner, costs, nodes)
		require.False(t, math.IsNaN(ms) || math.IsInf(ms, 0))
		require.InDelta(t, ms, plan.Makespan, 1e-9*math.Max(ms, 1))
		require.GreaterOrEqual(t, plan.Makespan, LowerBound(costs, nodes)*(1-1e-9))
		require.True(t, plan.Moved >= 0 && plan.Moved <= len(plan.Owner))
	})
}

// decodeInput turns fuzz bytes into an input: the first byte is the node
// count (mod 17), then 3 bytes per node (ID mod 8, so repeats and 0 occur;
// capacity; speed), then 3 bytes per slot (slot number, with repeats, gaps
// and out-of-range values; cost, times scale; last owner).
func decodeInput(data []byte, scale float64) ([]SlotCost, []Node) {
	if len(data) == 0 {
		return nil, nil
	}
	n := int(data[0]) % 17
	data = data[1:]
	var nodes []Node
	for i := 0; i < n && len(data) >= 3; i++ {
		nodes = append(nodes, Node{ID: int64(data[0] % 8), Capacity: int(data[1]%9) - 1, Speed: float64(data[2]) / 64})
		data = data[3:]
	}
	var costs []SlotCost
	for len(data) >= 3 {
		slot := int(data[0])
		if slot >= 250 {
			slot = -slot // invalid slots
		} else if slot >= 200 {
			slot += MaxSlots // beyond the limit
		}
		costs = append(costs, SlotCost{Slot: slot, Cost: float64(data[1]) * scale, LastOwner: int64(data[2] % 9)})
		data = data[3:]
	}
	return costs, nodes
}
