package placement

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// MaxSlots bounds slot numbers: SlotCost entries whose Slot is outside
// [0, MaxSlots) are ignored. It equals the job definition's limit
// (jobdef.MaxSlots), which a test checks.
const MaxSlots = 1024

// MaxCost bounds slot costs (about 31 years): a larger cost counts as
// MaxCost, so that sums cannot overflow.
const MaxCost = 1e9

// DefaultMargin is the suggested margin for Balance: a rebalance that moves
// slots must predict a makespan at least 5% shorter than keeping them.
const DefaultMargin = 0.05

// SlotCost is what the admin knows about one slot of a job.
type SlotCost struct {
	Slot int
	// Cost is the predicted duration of the slot in seconds on an executor
	// of speed 1 (the slot's EWMA duration, normalised by the speed of the
	// executor that ran it; see UpdateCost). A cost that is not a positive
	// finite number means "never measured": the mean of the measured slots
	// is used instead, or 1 when none is measured. Costs above MaxCost count
	// as MaxCost.
	Cost float64
	// LastOwner is the executor that ran the slot last time; 0 means none.
	LastOwner int64
}

// Node is an executor as a placement target.
type Node struct {
	// ID identifies the executor. 0 is reserved for "no owner": a node with
	// ID 0 is ignored, and so is a repeated ID (the first one counts).
	ID int64
	// Capacity is the number of slots the executor runs at once; values
	// below 1 count as 1.
	Capacity int
	// Speed is the measured speed factor (see UpdateSpeed): a slot of cost c
	// takes c/Speed seconds. Values that are not positive finite numbers
	// count as 1, the default; others are clamped to [MinSpeed, MaxSpeed].
	Speed float64
}

// Plan is the result of Balance.
type Plan struct {
	// Owner is the executor ID of each slot (index = slot). Its length is
	// one more than the largest slot in the input; slots missing in between
	// are placed as never measured. It is nil when there is no slot or no
	// node.
	Owner []int64
	// Makespan is the predicted duration of the run in seconds, as computed
	// by Makespan(Owner, ...).
	Makespan float64
	// Moved counts the slots that had a LastOwner and are placed elsewhere,
	// including those whose last owner is gone.
	Moved int
}

// Balance places slots onto nodes by predicted runtime, sticky to the last
// owners. It considers three plans:
//
//   - sticky: every slot whose LastOwner is still a node stays there; the
//     others (new slots, slots of gone nodes) are added greedily, largest
//     first, each where it would finish earliest (ties: lower node ID);
//   - fresh: longest-processing-time-first (LPT) onto all lanes, ignoring
//     the last owners; among nodes of equal capacity and speed, which are
//     interchangeable, the labels are then permuted to keep as many slots as
//     possible on their last owner;
//   - improved: the sticky plan, then one slot at a time moved off the node
//     that finishes last to where it helps most, until the makespan reaches
//     the fresh plan's or no single move helps. It tends to move a few
//     large slots, then smaller ones to fill in, so it gets close to the
//     fresh plan with a small fraction of its moves: a node that joins receives about its share, and
//     little else moves.
//
// The sticky plan is the starting choice; the others are tried by number of
// slots moved, fewest first, and each replaces the current choice only when
// its predicted makespan is shorter by more than margin (0.05 = 5%): moving
// more slots must buy more than margin over a plan that moves fewer. A margin
// below 0 or NaN counts as 0, above 1 as 1 (only what must move moves). When
// the sticky plan is within margin of LowerBound no other plan can win, and
// none is built.
//
// The result depends only on the input values, not on their order (except
// which of repeated slots or node IDs counts). It takes about a millisecond
// for 1024 slots on 8 nodes.
func Balance(costs []SlotCost, nodes []Node, margin float64) Plan {
	p := newProblem(costs, 0, nodes)
	if p.n == 0 || len(p.nodes) == 0 {
		return Plan{}
	}
	switch {
	case !(margin > 0):
		margin = 0
	case margin > 1:
		margin = 1
	}
	keep := 1 - margin // a candidate must predict less than keep × the current one

	sticky := p.place(true)
	best := p.candidate(sticky)
	if best.makespan*keep > p.lowerBound() {
		fresh := p.place(false)
		freshMS := p.makespan(fresh)
		p.relabel(fresh)
		freshC := candidate{assign: fresh, makespan: freshMS, moved: p.moved(fresh)}
		cands := []candidate{p.candidate(p.improve(sticky, freshMS, freshC.moved)), freshC}
		slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(a.moved, b.moved) })
		for _, c := range cands {
			if c.makespan < best.makespan*keep {
				best = c
			}
		}
	}
	plan := Plan{Owner: make([]int64, p.n), Makespan: best.makespan, Moved: best.moved}
	for s, i := range best.assign {
		plan.Owner[s] = p.nodes[i].id
	}
	return plan
}

// Makespan predicts the duration in seconds of a run whose slot s runs on
// owner[s]: each node runs its slots in descending cost order (ties: lower
// slot first), each on the first of its Capacity lanes to become free, at
// its Speed; the makespan is the latest lane finish. Slots whose owner is not
// one of nodes (0, a gone executor) are not counted. Costs are read as in
// Balance; slots of owner that have no entry in costs count as never
// measured.
func Makespan(owner []int64, costs []SlotCost, nodes []Node) float64 {
	p := newProblem(costs, len(owner), nodes)
	assign := make([]int, p.n)
	for s := range assign {
		assign[s] = -1
		if s < len(owner) {
			if i, ok := p.index[owner[s]]; ok {
				assign[s] = i
			}
		}
	}
	return p.makespan(assign)
}

// LowerBound is a bound no placement of the slots can beat:
// the larger of the total cost divided by the total throughput (Speed ×
// Capacity summed over the nodes, a capacity counting at most as many lanes
// as there are slots) and the largest slot on the fastest node. Costs are
// read as in Balance. It is 0 when there is no slot or no node.
func LowerBound(costs []SlotCost, nodes []Node) float64 {
	return newProblem(costs, 0, nodes).lowerBound()
}

// node is a normalised Node.
type node struct {
	id    int64
	cap   int
	speed float64
}

// normNodes drops IDs 0 and repeats, applies the defaults and sorts by ID.
func normNodes(nodes []Node) ([]node, map[int64]int) {
	out := make([]node, 0, len(nodes))
	seen := make(map[int64]bool, len(nodes))
	for _, n := range nodes {
		if n.ID == 0 || seen[n.ID] {
			continue
		}
		seen[n.ID] = true
		out = append(out, node{id: n.ID, cap: max(n.Capacity, 1), speed: min(max(validOr(n.Speed, 1), MinSpeed), MaxSpeed)})
	}
	slices.SortFunc(out, func(a, b node) int { return cmp.Compare(a.id, b.id) })
	index := make(map[int64]int, len(out))
	for i, n := range out {
		index[n.id] = i
	}
	return out, index
}

// validOr returns v when it is a positive finite number, def otherwise.
func validOr(v, def float64) float64 {
	if v > 0 && !math.IsInf(v, 1) {
		return v
	}
	return def
}

// problem is the normalised input shared by Balance, Makespan and
// LowerBound.
type problem struct {
	n       int
	cost    []float64 // by slot, defaults applied
	last    []int64   // by slot: last owner ID, 0 for none
	lastIdx []int     // by slot: index of the last owner in nodes, -1 if none or gone
	order   []int     // slots by cost desc, then slot asc (LPT order)
	nodes   []node
	index   map[int64]int
	scratch []float64 // lane heap reused by finish
}

// newProblem normalises the input. The slot count is one more than the
// largest valid slot in costs, and at least minN (capped to MaxSlots).
// A repeated slot takes its last entry.
func newProblem(costs []SlotCost, minN int, nodes []Node) *problem {
	p := &problem{n: min(max(minN, 0), MaxSlots)}
	p.nodes, p.index = normNodes(nodes)
	for _, c := range costs {
		if c.Slot >= 0 && c.Slot < MaxSlots && c.Slot >= p.n {
			p.n = c.Slot + 1
		}
	}
	p.cost = make([]float64, p.n)
	p.last = make([]int64, p.n)
	p.lastIdx = make([]int, p.n)
	for _, c := range costs {
		if c.Slot >= 0 && c.Slot < MaxSlots {
			p.cost[c.Slot] = min(validOr(c.Cost, 0), MaxCost)
			p.last[c.Slot] = c.LastOwner
		}
	}
	sum, k := 0.0, 0
	for _, c := range p.cost {
		if c > 0 {
			sum += c
			k++
		}
	}
	def := 1.0
	if k > 0 {
		def = sum / float64(k)
	}
	type key struct {
		cost float64
		slot int
	}
	keys := make([]key, p.n)
	for s := range p.cost {
		if p.cost[s] == 0 {
			p.cost[s] = def
		}
		p.lastIdx[s] = -1
		if i, ok := p.index[p.last[s]]; ok && p.last[s] != 0 {
			p.lastIdx[s] = i
		}
		keys[s] = key{p.cost[s], s}
	}
	slices.SortFunc(keys, func(a, b key) int { // costs are finite: plain comparisons
		switch {
		case a.cost > b.cost:
			return -1
		case a.cost < b.cost:
			return 1
		}
		return a.slot - b.slot
	})
	p.order = make([]int, p.n)
	for k, key := range keys {
		p.order[k] = key.slot
	}
	return p
}

func (p *problem) newLanes(count func(i int) int) []lanes {
	ls := make([]lanes, len(p.nodes))
	for i, n := range p.nodes {
		ls[i].free = min(n.cap, count(i))
	}
	return ls
}

// place builds a plan (node index by slot). When sticky, every slot whose
// last owner is present stays there; every other slot then goes, in LPT
// order, to the node where it would finish earliest (ties: lower ID).
func (p *problem) place(sticky bool) []int {
	assign := make([]int, p.n)
	for s := range assign {
		assign[s] = -1
	}
	ls := p.newLanes(func(int) int { return p.n })
	if sticky {
		for _, s := range p.order {
			if i := p.lastIdx[s]; i >= 0 {
				ls[i].add(p.cost[s])
				assign[s] = i
			}
		}
	}
	front := make([]float64, len(p.nodes)) // least loaded lane of each node
	inv := make([]float64, len(p.nodes))
	for i := range p.nodes {
		front[i], inv[i] = ls[i].min(), 1/p.nodes[i].speed
	}
	for _, s := range p.order {
		if assign[s] >= 0 {
			continue
		}
		w := p.cost[s]
		best, bestT := 0, (front[0]+w)*inv[0]
		for i := 1; i < len(front); i++ {
			if t := (front[i] + w) * inv[i]; t < bestT {
				best, bestT = i, t
			}
		}
		ls[best].add(w)
		front[best] = ls[best].min()
		assign[s] = best
	}
	return assign
}

// candidate is a plan Balance considers.
type candidate struct {
	assign   []int // node index by slot
	makespan float64
	moved    int
}

func (p *problem) candidate(assign []int) candidate {
	return candidate{assign: assign, makespan: p.makespan(assign), moved: p.moved(assign)}
}

// moved counts the slots that had a last owner and are placed elsewhere.
func (p *problem) moved(assign []int) int {
	n := 0
	for s, i := range assign {
		if p.last[s] != 0 && p.lastIdx[s] != i {
			n++
		}
	}
	return n
}

// makespan list-schedules each node's slots over its lanes in LPT order.
// Slots with a negative node index are skipped.
func (p *problem) makespan(assign []int) float64 {
	count := make([]int, len(p.nodes))
	for _, i := range assign {
		if i >= 0 {
			count[i]++
		}
	}
	ls := p.newLanes(func(i int) int { return count[i] })
	for _, s := range p.order {
		if i := assign[s]; i >= 0 {
			ls[i].add(p.cost[s])
		}
	}
	ms := 0.0
	for i := range ls {
		ms = max(ms, ls[i].max/p.nodes[i].speed)
	}
	return ms
}

func (p *problem) lowerBound() float64 {
	if p.n == 0 || len(p.nodes) == 0 {
		return 0
	}
	total, largest := 0.0, 0.0
	for _, c := range p.cost {
		total += c
		largest = max(largest, c)
	}
	throughput, fastest := 0.0, 0.0
	for _, n := range p.nodes {
		throughput += n.speed * float64(min(n.cap, p.n))
		fastest = max(fastest, n.speed)
	}
	return max(total/throughput, largest/fastest)
}

// relabel permutes the nodes of a plan among nodes of equal capacity and
// speed (which leaves every node's finish unchanged) to keep as many slots
// as possible on their last owner: greedily, the pair (plan node, last
// owner) that shares the most slots first.
func (p *problem) relabel(assign []int) {
	groups := map[node][]int{} // key: capacity and speed, id zeroed
	var keys []node
	for i, n := range p.nodes {
		k := node{cap: n.cap, speed: n.speed}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		pos := make(map[int]int, len(g))
		for a, i := range g {
			pos[i] = a
		}
		m := len(g)
		overlap := make([]int, m*m) // [plan node][last owner]
		for s, i := range assign {
			a, ok1 := pos[i]
			b, ok2 := pos[p.lastIdx[s]]
			if ok1 && ok2 {
				overlap[a*m+b]++
			}
		}
		type pair struct{ a, b, n int }
		var pairs []pair
		for a := range m {
			for b := range m {
				if n := overlap[a*m+b]; n > 0 {
					pairs = append(pairs, pair{a, b, n})
				}
			}
		}
		slices.SortFunc(pairs, func(x, y pair) int {
			if c := cmp.Compare(y.n, x.n); c != 0 {
				return c
			}
			if c := cmp.Compare(x.a, y.a); c != 0 {
				return c
			}
			return cmp.Compare(x.b, y.b)
		})
		to := make([]int, m)
		for a := range to {
			to[a] = -1
		}
		used := make([]bool, m)
		for _, pr := range pairs {
			if to[pr.a] < 0 && !used[pr.b] {
				to[pr.a], used[pr.b] = pr.b, true
			}
		}
		b := 0
		for a := range to {
			for to[a] < 0 {
				if !used[b] {
					to[a], used[b] = b, true
				}
				b++
			}
		}
		for s, i := range assign {
			if a, ok := pos[i]; ok {
				assign[s] = g[to[a]]
			}
		}
	}
}

// lanes are the parallel lanes of one node: a min-heap of the loads of the
// lanes in use, plus the number of lanes still empty.
type lanes struct {
	h    []float64
	free int
	max  float64
}

// min is the load of the least loaded lane.
func (l *lanes) min() float64 {
	if l.free > 0 || len(l.h) == 0 {
		return 0
	}
	return l.h[0]
}

// add puts work of cost w on the least loaded lane.
func (l *lanes) add(w float64) {
	var end float64
	if l.free > 0 || len(l.h) == 0 {
		l.free--
		l.h = append(l.h, w)
		end = w
		for j := len(l.h) - 1; j > 0; {
			parent := (j - 1) / 2
			if l.h[parent] <= l.h[j] {
				break
			}
			l.h[parent], l.h[j] = l.h[j], l.h[parent]
			j = parent
		}
	} else {
		l.h[0] += w
		end = l.h[0]
		for j := 0; ; {
			c := 2*j + 1
			if c >= len(l.h) {
				break
			}
			if c+1 < len(l.h) && l.h[c+1] < l.h[c] {
				c++
			}
			if l.h[j] <= l.h[c] {
				break
			}
			l.h[j], l.h[c] = l.h[c], l.h[j]
			j = c
		}
	}
	l.max = max(l.max, end)
}

// improve starts from a plan and moves one slot at a time off the node that
// finishes last, as long as a move makes both nodes involved finish earlier
// than that node did and the makespan is above target. Each step ranks the
// (slot, destination) pairs of that node by an estimate — the node shortened
// by the slot spread over its lanes, the slot added to the destination's
// least loaded lane — computes the best few exactly, and takes the best of
// those (ties: the destination that finishes first, the larger slot, the
// lower node ID). Every step lowers the sorted vector of node finishes, so
// it ends; it also stops after maxSteps steps (Balance passes the moves of
// the fresh plan: beyond that, improving has no advantage left).
func (p *problem) improve(start []int, target float64, maxSteps int) []int {
	const verify = 8 // pairs computed exactly per step
	assign := slices.Clone(start)
	rank := make([]int, p.n) // position in p.order
	for k, s := range p.order {
		rank[s] = k
	}
	m := len(p.nodes)
	lists := make([][]int, m) // each node's slots in LPT order
	for _, s := range p.order {
		lists[assign[s]] = append(lists[assign[s]], s)
	}
	fin := make([]float64, m)
	low := make([]float64, m) // when the least loaded lane frees up
	for i := range lists {
		fin[i], low[i] = p.schedule(i, lists[i])
	}
	type pair struct {
		k, d          int
		estimate, dst float64 // estimated finish of the later node, of d
	}
	// less orders pairs by the later finish, then the destination's finish
	// (fill the emptiest node first), then larger slot, then lower node.
	less := func(a, b pair) bool {
		if a.estimate != b.estimate {
			return a.estimate < b.estimate
		}
		if a.dst != b.dst {
			return a.dst < b.dst
		}
		if a.k != b.k {
			return a.k < b.k
		}
		return a.d < b.d
	}
	var best []pair // the verify best estimates, sorted
	limit := target * (1 + 1e-9)
	for range maxSteps {
		c := 0
		for i := range fin {
			if fin[i] > fin[c] {
				c = i
			}
		}
		if fin[c] <= limit {
			break
		}
		// Estimates: taking w off node c shortens it by about w spread over
		// its lanes; adding w to node d ends it about when d's least loaded
		// lane frees up, plus w. The first grows along c's list (costs go
		// down), the second shrinks, so for each d the best slot is where
		// they cross: a binary search.
		list := lists[c]
		perLane := 1 / (p.nodes[c].speed * float64(min(p.nodes[c].cap, len(list))))
		src := func(k int) float64 { return fin[c] - p.cost[list[k]]*perLane }
		best = best[:0]
		add := func(k, d int) {
			de := max(fin[d], low[d]+p.cost[list[k]]/p.nodes[d].speed)
			pr := pair{k, d, max(src(k), de), de}
			if pr.estimate >= fin[c] {
				return
			}
			at := len(best)
			for at > 0 && less(pr, best[at-1]) {
				at--
			}
			if at == verify {
				return
			}
			if len(best) < verify {
				best = append(best, pair{})
			}
			copy(best[at+1:], best[at:len(best)-1])
			best[at] = pr
		}
		first := func(w float64) int { // first position of cost w in list
			k, _ := slices.BinarySearchFunc(list, w, func(s int, w float64) int { return cmp.Compare(w, p.cost[s]) })
			return k
		}
		for d, nd := range p.nodes {
			if d == c {
				continue
			}
			dst := func(k int) float64 { return max(fin[d], low[d]+p.cost[list[k]]/nd.speed) }
			k := sort.Search(len(list), func(k int) bool { return src(k) >= dst(k) })
			if k < len(list) {
				add(k, d)
			}
			if k > 0 {
				add(first(p.cost[list[k-1]]), d)
			}
		}
		// Exact finishes for the best estimates, ordered the same way.
		var chosen pair
		chosen.k = -1
		srcK, srcFin, chosenSrc := -1, 0.0, 0.0
		for _, pr := range best {
			if chosen.k >= 0 && pr.estimate > chosen.estimate {
				break // the rest is not expected to do better
			}
			if pr.k != srcK {
				srcK, srcFin = pr.k, p.finish(c, list, pr.k, -1)
			}
			if srcFin >= fin[c] {
				continue
			}
			dstFin := p.finish(pr.d, lists[pr.d], -1, list[pr.k])
			exact := pair{pr.k, pr.d, max(srcFin, dstFin), dstFin}
			if exact.estimate < fin[c] && (chosen.k < 0 || less(exact, chosen)) {
				chosen, chosenSrc = exact, srcFin
			}
		}
		if chosen.k < 0 {
			break
		}
		s, dst := list[chosen.k], chosen.d
		lists[c] = slices.Delete(list, chosen.k, chosen.k+1)
		at, _ := slices.BinarySearchFunc(lists[dst], rank[s], func(x, r int) int { return cmp.Compare(rank[x], r) })
		lists[dst] = slices.Insert(lists[dst], at, s)
		assign[s] = dst
		fin[c], fin[dst] = chosenSrc, chosen.dst
		_, low[c] = p.schedule(c, lists[c])
		_, low[dst] = p.schedule(dst, lists[dst])
	}
	return assign
}

// finish list-schedules slots (in LPT order) over the lanes of node i,
// leaving out index skip and adding slot extra at its place (-1: none), and
// returns the predicted finish.
func (p *problem) finish(i int, slots []int, skip, extra int) float64 {
	count := len(slots)
	if skip >= 0 {
		count--
	}
	if extra >= 0 {
		count++
	}
	if count <= 0 {
		return 0
	}
	l := lanes{h: p.scratch[:0], free: min(p.nodes[i].cap, count)}
	for k, s := range slots {
		if extra >= 0 && p.before(extra, s) {
			l.add(p.cost[extra])
			extra = -1
		}
		if k != skip {
			l.add(p.cost[s])
		}
	}
	if extra >= 0 {
		l.add(p.cost[extra])
	}
	p.scratch = l.h
	return l.max / p.nodes[i].speed
}

// schedule list-schedules slots (in LPT order) over the lanes of node i and
// returns when the last and the first lane finish (0 for the first when a
// lane stays idle).
func (p *problem) schedule(i int, slots []int) (last, first float64) {
	n := p.nodes[i]
	l := lanes{h: p.scratch[:0], free: min(n.cap, len(slots))}
	for _, s := range slots {
		l.add(p.cost[s])
	}
	p.scratch = l.h
	if len(slots) < n.cap {
		return l.max / n.speed, 0
	}
	return l.max / n.speed, l.min() / n.speed
}

// before reports whether slot a comes before slot b in LPT order.
func (p *problem) before(a, b int) bool {
	if p.cost[a] != p.cost[b] {
		return p.cost[a] > p.cost[b]
	}
	return a < b
}
