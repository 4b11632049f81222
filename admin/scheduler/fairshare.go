package scheduler

import (
	"cmp"
	"slices"
)

// fairOrder orders items (each of one app, costing some slots, in the
// order they came) by weighted fair share: the next item is the first
// waiting one of the app whose slots placed so far (used, then what the
// order gave it), divided by its weight, are the least; apps tie in the
// order their first item came. Each app's items keep their order. Pure.
//
// When a shared capacity is short, placing items in this order gives each
// competing app room in proportion to its weight: an app of weight 3 gets
// three slots for every one of an app of weight 1, and an app with little
// work gets its turn at once.
func fairOrder[T any](items []T, app func(T) string, cost func(T) int64, used map[string]int64, weight func(string) int64) []T {
	type queue struct {
		app   string
		first int   // index of its first item in items, for ties
		items []int // indexes into items, in order
		next  int   // the next of items to give
		given int64 // slots: used, then given by this order
		w     int64
	}
	byApp := map[string]*queue{}
	var queues []*queue
	for i, it := range items {
		a := app(it)
		q := byApp[a]
		if q == nil {
			q = &queue{app: a, first: i, given: max(used[a], 0), w: max(weight(a), 1)}
			byApp[a] = q
			queues = append(queues, q)
		}
		q.items = append(q.items, i)
	}
	if len(queues) < 2 {
		return items
	}
	out := make([]T, 0, len(items))
	for len(out) < len(items) {
		// The app with the least given slots per weight (compared as
		// given_a × w_b against given_b × w_a: no division).
		var best *queue
		for _, q := range queues {
			if q.next == len(q.items) {
				continue
			}
			if best == nil {
				best = q
				continue
			}
			if c := cmp.Compare(q.given*best.w, best.given*q.w); c < 0 || c == 0 && q.first < best.first {
				best = q
			}
		}
		it := items[best.items[best.next]]
		best.next++
		best.given += max(cost(it), 1)
		out = append(out, it)
	}
	return out
}

// fairBySegments applies fairOrder to each run of consecutive items of the
// same rank (items are sorted by rank, such as an aged priority): apps
// share within a priority, never across.
func fairBySegments[T any](items []T, rank func(T) int, fair func([]T) []T) []T {
	out := make([]T, 0, len(items))
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && rank(items[end]) == rank(items[start]) {
			end++
		}
		out = append(out, fair(slices.Clone(items[start:end]))...)
		start = end
	}
	return out
}
