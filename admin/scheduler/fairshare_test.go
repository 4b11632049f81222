package scheduler

import (
	"fmt"
	"testing"
)

type fairItem struct {
	app  string
	n    int
	cost int64
}

func (f fairItem) String() string { return fmt.Sprintf("%s%d", f.app, f.n) }

// TestFairOrderByWeight: with weights 1 and 3 and nothing placed yet, the
// order gives b three slots for each of a's; an app already using its
// share waits for the other to catch up; costs count in slots; each app's
// items keep their order; one app alone keeps the order.
func TestFairOrderByWeight(t *testing.T) {
	items := func(spec ...fairItem) []fairItem { return spec }
	var in []fairItem
	for i := range 8 {
		in = append(in, fairItem{"a", i, 1}, fairItem{"b", i, 1})
	}
	w := func(weights map[string]int64) func(string) int64 {
		return func(a string) int64 { return weights[a] }
	}
	order := func(in []fairItem, used map[string]int64, weights map[string]int64) string {
		out := fairOrder(in, func(f fairItem) string { return f.app }, func(f fairItem) int64 { return f.cost }, used, w(weights))
		return fmt.Sprint(out)
	}
	if got, want := order(in, nil, map[string]int64{"a": 1, "b": 3}), "[a0 b0 b1 b2 a1 b3 b4 b5 a2 b6 b7 a3 a4 a5 a6 a7]"; got != want {
		t.Errorf("weights 1 and 3:\n got %s\nwant %s", got, want)
	}
	if got, want := order(in[:8], map[string]int64{"a": 6}, map[string]int64{"a": 1, "b": 1}), "[b0 b1 b2 b3 a0 a1 a2 a3]"; got != want {
		t.Errorf("a has used 6 slots, b none:\n got %s\nwant %s", got, want)
	}
	costly := items(fairItem{"a", 0, 4}, fairItem{"a", 1, 4}, fairItem{"b", 0, 1}, fairItem{"b", 1, 1}, fairItem{"b", 2, 1}, fairItem{"b", 3, 1}, fairItem{"b", 4, 1})
	if got, want := order(costly, nil, map[string]int64{}), "[a0 b0 b1 b2 b3 a1 b4]"; got != want {
		t.Errorf("costs in slots:\n got %s\nwant %s", got, want)
	}
	alone := items(fairItem{"a", 0, 1}, fairItem{"a", 1, 1})
	if got := order(alone, map[string]int64{"a": 100}, nil); got != "[a0 a1]" {
		t.Errorf("one app: %s", got)
	}
}

// TestFairBySegments: apps share within a rank, never across ranks.
func TestFairBySegments(t *testing.T) {
	in := []fairItem{{"a", 0, 3}, {"a", 1, 3}, {"b", 0, 3}, {"a", 2, 1}, {"b", 1, 1}, {"b", 2, 1}}
	rank := func(f fairItem) int {
		if f.cost == 3 {
			return 3
		}
		return 1
	}
	fair := func(s []fairItem) []fairItem {
		return fairOrder(s, func(f fairItem) string { return f.app }, func(f fairItem) int64 { return f.cost }, nil, func(string) int64 { return 1 })
	}
	if got, want := fmt.Sprint(fairBySegments(in, rank, fair)), "[a0 b0 a1 a2 b1 b2]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
