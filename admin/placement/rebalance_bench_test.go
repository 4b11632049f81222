package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sim is a simulated cluster for BenchmarkRebalance: slots with true costs,
// executors with true speeds, and an "admin" that only sees the durations.
type sim struct {
	trueCost  []float64
	trueNodes []Node // true speeds
	rng       *rand.Rand
	noise     float64 // actual duration = true cost / true speed × (1 ± noise)

	// What the admin knows.
	cost       []float64 // EWMA cost per slot, 0 = never measured
	costOn     []int64   // executor that ran the slot when its cost was last measured
	speed      map[int64]float64
	alphaCost  float64
	alphaSpeed float64
}

func newSim(seed uint64, slots int, speeds []float64, capacity int) *sim {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	z := rand.NewZipf(rng, 1.2, 1, 1000)
	s := &sim{
		trueCost:   make([]float64, slots),
		rng:        rng,
		noise:      0.05,
		cost:       make([]float64, slots),
		costOn:     make([]int64, slots),
		speed:      map[int64]float64{},
		alphaCost:  0.5,
		alphaSpeed: 0.5,
	}
	for i := range s.trueCost {
		s.trueCost[i] = float64(z.Uint64() + 1) // seconds on a speed-1 executor
	}
	for i, sp := range speeds {
		id := int64(i + 1)
		s.trueNodes = append(s.trueNodes, Node{ID: id, Capacity: capacity, Speed: sp})
		s.speed[id] = 1 // nothing measured yet
	}
	return s
}

// nodes are the executors as the admin sees them.
func (s *sim) nodes() []Node {
	out := make([]Node, len(s.trueNodes))
	for i, n := range s.trueNodes {
		out[i] = Node{ID: n.ID, Capacity: n.Capacity, Speed: s.speed[n.ID]}
	}
	return out
}

// costs are the admin's SlotCost inputs with the given last owners.
func (s *sim) costs(owner []int64) []SlotCost {
	out := make([]SlotCost, len(s.cost))
	for i := range out {
		out[i] = SlotCost{Slot: i, Cost: s.cost[i]}
		if owner != nil {
			out[i].LastOwner = owner[i]
		}
	}
	return out
}

// run executes one run with the given owners: every executor starts its
// slots in descending predicted cost (as the admin dispatches them), each on
// the first free lane, taking the true duration with noise. It returns the
// true makespan and feeds the durations to the admin's estimates.
func (s *sim) run(owner []int64) float64 {
	pred := newProblem(s.costs(nil), len(owner), nil) // predicted costs with defaults, and their LPT order
	dur := make([]float64, len(owner))
	makespan := 0.0
	for _, n := range s.trueNodes {
		l := lanes{free: n.Capacity}
		for _, slot := range pred.order {
			if owner[slot] != n.ID {
				continue
			}
			d := s.trueCost[slot] / n.Speed * (1 + s.noise*(2*s.rng.Float64()-1))
			dur[slot] = d
			l.add(d)
		}
		makespan = max(makespan, l.max)
	}
	// Speeds first, from the slots whose cost was measured on another
	// executor, then costs, normalised by the updated speed.
	for _, n := range s.trueNodes {
		predicted, actual := 0.0, 0.0
		for slot, id := range owner {
			if id == n.ID && s.cost[slot] > 0 && s.costOn[slot] != n.ID {
				predicted += s.cost[slot]
				actual += dur[slot]
			}
		}
		s.speed[n.ID] = UpdateSpeed(s.speed[n.ID], predicted, actual, s.alphaSpeed)
	}
	for slot, id := range owner {
		s.cost[slot] = UpdateCost(s.cost[slot], dur[slot]*s.speed[id], s.alphaCost)
		s.costOn[slot] = id
	}
	return makespan
}

// BenchmarkRebalance simulates a job of 1024 slots with Zipf-distributed
// costs (s = 1.2) on 4 executors of capacity 4 and true speeds 1, 1, 0.7 and
// 0.4: run 1 is placed by Spread (nothing known), the next ones by Balance
// on the costs and speeds the admin measured (procedure of the package
// documentation, ±5% noise on every duration). The metrics are the true
// makespan of each run over the true lower bound, averaged over simSeeds
// clusters: avg-x for Spread, runN-x after N rebalanced runs, and the worst
// cluster after two. The second sub-benchmark times one Balance of 1024
// slots onto 8 executors that must move slots.
func BenchmarkRebalance(b *testing.B) {
	const simSeeds, rebalanced = 10, 3
	b.Run("simulation", func(b *testing.B) {
		var mean []float64
		var worst2 float64
		var moved []int
		for b.Loop() {
			mean, moved, worst2 = make([]float64, rebalanced+1), make([]int, rebalanced), 0
			for seed := uint64(1); seed <= simSeeds; seed++ {
				ratios, m := simulateRebalance(seed, rebalanced)
				for r := range ratios {
					mean[r] += ratios[r] / simSeeds
				}
				for r := range m {
					moved[r] += m[r]
				}
				worst2 = max(worst2, ratios[2])
			}
		}
		b.ReportMetric(mean[0], "avg-x")
		for r := 1; r <= rebalanced; r++ {
			b.ReportMetric(mean[r], fmt.Sprintf("run%d-x", r))
		}
		b.ReportMetric(worst2, "run2-worst-x")
		b.Logf("makespan / lower bound over %d clusters: average allocation %.3f, after 1, 2, 3 rebalanced runs %.3f (worst after 2: %.3f); slots moved per Balance %v of 1024",
			simSeeds, mean[0], mean[1:], worst2, perRun(moved, simSeeds))
	})
	b.Run("balance-1024x8", func(b *testing.B) {
		costs, nodes := balanceInput(2, 1024, 8)
		var plan Plan
		for b.Loop() {
			plan = Balance(costs, nodes, DefaultMargin)
		}
		b.Logf("Balance 1024 slots × 8 executors: predicted makespan %.0f s (lower bound %.0f s, sticky %.0f s), %d slots moved",
			plan.Makespan, LowerBound(costs, nodes), Makespan(lastOwners(costs), costs, nodes), plan.Moved)
	})
}

func perRun(total []int, n int) []int {
	out := make([]int, len(total))
	for i, v := range total {
		out[i] = v / n
	}
	return out
}

func lastOwners(costs []SlotCost) []int64 {
	out := make([]int64, len(costs))
	for _, c := range costs {
		out[c.Slot] = c.LastOwner
	}
	return out
}

// simulateRebalance returns the true makespan ratios of the Spread run and
// of the rebalanced runs of one simulated cluster, and the slots moved by
// each Balance.
func simulateRebalance(seed uint64, rebalanced int) ([]float64, []int) {
	s := newSim(seed, 1024, []float64{1.0, 1.0, 0.7, 0.4}, 4)
	trueCosts := make([]SlotCost, len(s.trueCost))
	for i, c := range s.trueCost {
		trueCosts[i] = SlotCost{Slot: i, Cost: c}
	}
	lb := LowerBound(trueCosts, s.trueNodes)

	ex := make([]Executor, len(s.trueNodes))
	for i, n := range s.trueNodes {
		ex[i] = Executor{ID: n.ID, Capacity: n.Capacity}
	}
	owner := Spread(len(s.trueCost), ex, 0)
	ratios := []float64{s.run(owner) / lb}
	var moved []int
	for range rebalanced {
		plan := Balance(s.costs(owner), s.nodes(), DefaultMargin)
		owner = plan.Owner
		moved = append(moved, plan.Moved)
		ratios = append(ratios, s.run(owner)/lb)
	}
	return ratios, moved
}

// balanceInput is a Balance input of the worst kind: Zipf costs, unequal
// speeds and capacities, last owners from Spread (so all three candidate
// plans are built).
func balanceInput(seed uint64, slots, nodes int) ([]SlotCost, []Node) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	z := rand.NewZipf(rng, 1.2, 1, 1000)
	ns := make([]Node, nodes)
	ex := make([]Executor, nodes)
	for i := range ns {
		ns[i] = Node{ID: int64(i + 1), Capacity: 2 + i%3, Speed: 0.4 + 0.6*rng.Float64()}
		ex[i] = Executor{ID: ns[i].ID, Capacity: ns[i].Capacity}
	}
	owner := Spread(slots, ex, 0)
	costs := make([]SlotCost, slots)
	for i := range costs {
		costs[i] = SlotCost{Slot: i, Cost: float64(z.Uint64() + 1), LastOwner: owner[i]}
	}
	slices.Reverse(costs) // input order must not matter
	return costs, ns
}
