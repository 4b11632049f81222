package placement

import (
	"cmp"
	"maps"
	"slices"
)

// Steal picks unstarted slots for an executor that ran out of work (idle)
// to take over from busier ones, within a run. remaining holds, per
// executor, the slots it has not started yet (the idle executor's own list,
// usually empty, counts too); nodes gives capacities and speeds. Costs are
// read as in Balance, the mean being taken over all the lists.
//
// The rule, repeated until it picks nothing: the victim is the executor with
// the largest predicted remaining time (its unstarted slots list-scheduled
// over its lanes as in Makespan; ties: lower ID); the slot taken is its
// largest (ties: lower slot) whose move leaves the victim's remaining time
// shorter than before and the idle executor's no longer than the victim's.
// Stealing stops when the victim is not busier than the idle executor or
// has no such slot. So the predicted makespan of the unstarted work never
// grows, no slot travels back, and the idle executor never ends up the
// straggler because of what it took.
//
// The prediction ignores the slots already running (their lanes are counted
// as free), which makes victims look less busy than they are: Steal errs on
// the side of taking too little. Executors absent from nodes (or with ID 0)
// are neither victims nor thieves; an idle executor absent from nodes gets
// nothing. The slots are returned in the order they were picked, which is
// also a good order to start them in; nil when there is nothing to take.
func Steal(idle int64, remaining map[int64][]SlotCost, nodes []Node) []int {
	ns, index := normNodes(nodes)
	thief, ok := index[idle]
	if !ok {
		return nil
	}
	ids := slices.Sorted(maps.Keys(remaining)) // fixed order: float sums must not depend on map order
	sum, k := 0.0, 0
	for _, id := range ids {
		if _, ok := index[id]; !ok {
			continue
		}
		for _, c := range remaining[id] {
			if v := min(validOr(c.Cost, 0), MaxCost); v > 0 {
				sum += v
				k++
			}
		}
	}
	def := 1.0
	if k > 0 {
		def = sum / float64(k)
	}
	lists := make([][]item, len(ns))
	for _, id := range ids {
		i, ok := index[id]
		if !ok {
			continue
		}
		for _, c := range remaining[id] {
			lists[i] = append(lists[i], item{slot: c.Slot, cost: min(validOr(c.Cost, def), MaxCost)})
		}
		slices.SortFunc(lists[i], item.compare)
	}

	var taken []int
	for {
		victim, vt := -1, 0.0
		for i := range ns {
			if i == thief || len(lists[i]) == 0 {
				continue
			}
			if t := finish(lists[i], -1, nil, ns[i]); victim < 0 || t > vt {
				victim, vt = i, t
			}
		}
		if victim < 0 || vt <= finish(lists[thief], -1, nil, ns[thief]) {
			return taken
		}
		pick := -1
		for j := range lists[victim] {
			v := finish(lists[victim], j, nil, ns[victim])
			t := finish(lists[thief], -1, &lists[victim][j], ns[thief])
			if v < vt && t <= v {
				pick = j
				break
			}
		}
		if pick < 0 {
			return taken
		}
		it := lists[victim][pick]
		lists[victim] = slices.Delete(lists[victim], pick, pick+1)
		at, _ := slices.BinarySearchFunc(lists[thief], it, item.compare)
		lists[thief] = slices.Insert(lists[thief], at, it)
		taken = append(taken, it.slot)
	}
}

// item is an unstarted slot in Steal.
type item struct {
	slot int
	cost float64
}

// compare orders items by cost desc, then slot asc.
func (a item) compare(b item) int {
	if c := cmp.Compare(b.cost, a.cost); c != 0 {
		return c
	}
	return cmp.Compare(a.slot, b.slot)
}

// finish list-schedules items (sorted by item.compare) over the lanes of n,
// leaving out index skip and adding extra at its place, and returns the
// predicted finish in seconds.
func finish(items []item, skip int, extra *item, n node) float64 {
	count := len(items)
	if skip >= 0 {
		count--
	}
	if extra != nil {
		count++
	}
	if count <= 0 {
		return 0
	}
	l := lanes{free: min(n.cap, count)}
	for j, it := range items {
		if extra != nil && extra.compare(it) < 0 {
			l.add(extra.cost)
			extra = nil
		}
		if j != skip {
			l.add(it.cost)
		}
	}
	if extra != nil {
		l.add(extra.cost)
	}
	return l.max / n.speed
}
