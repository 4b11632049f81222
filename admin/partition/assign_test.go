package partition

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// admins returns the admin ids a01, a02... an.
func admins(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("a%02d", i+1)
	}
	return out
}

// liveSet returns the distinct non-empty members, sorted: the test's own
// reading of the member rules.
func liveSet(members []string) []string {
	seen := make(map[string]bool)
	var out []string
	for _, m := range members {
		if m != "" && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// startOf returns the owners and epochs Rebalance starts from: prev's when
// it has count partitions, count unowned partitions of epoch 0 otherwise.
func startOf(prev Assignment, count int) ([]string, []int64) {
	if prev.Count() == count {
		return prev.Owners, prev.Epochs
	}
	return make([]string, count), make([]int64, count)
}

// maxEpoch returns the greatest epoch of a, 0 when it has none.
func maxEpoch(a Assignment) int64 {
	var top int64
	for _, e := range a.Epochs {
		top = max(top, e)
	}
	return top
}

// minimalMoves computes, without Rebalance, the fewest owner changes that
// reach balance from owners: every partition without a live owner, plus the
// surplus of each member over its target, the targets being count/n with
// one more for the count%n members that hold the most (ties: lower id).
func minimalMoves(owners, live []string, count int) int {
	if len(live) == 0 {
		owned := 0
		for _, o := range owners {
			if o != "" {
				owned++
			}
		}
		return owned
	}
	loads, orphans := liveLoads(owners, live)
	byLoad := slices.Clone(live)
	slices.SortStableFunc(byLoad, func(a, b string) int { return loads[b] - loads[a] })
	base, extra := count/len(live), count%len(live)
	surplus := 0
	for rank, m := range byLoad {
		target := base
		if rank < extra {
			target++
		}
		surplus += max(0, loads[m]-target)
	}
	return orphans + surplus
}

// liveLoads counts the partitions of each live member, and those whose
// owner is not live (or nobody).
func liveLoads(owners, live []string) (loads map[string]int, orphans int) {
	loads = make(map[string]int)
	for _, m := range live {
		loads[m] = 0
	}
	for _, o := range owners {
		if _, ok := loads[o]; ok {
			loads[o]++
		} else {
			orphans++
		}
	}
	return loads, orphans
}

// closedFormMoves is minimalMoves by a formula: the surplus over count/n,
// less one for each over-loaded member that can be given a ceiling.
func closedFormMoves(owners, live []string, count int) int {
	if len(live) == 0 {
		return minimalMoves(owners, live, count)
	}
	loads, orphans := liveLoads(owners, live)
	base, extra := count/len(live), count%len(live)
	surplus, over := 0, 0
	for _, l := range loads {
		if l > base {
			surplus += l - base
			over++
		}
	}
	return orphans + surplus - min(extra, over)
}

// checkRebalance asserts every rule of Rebalance on one result.
func checkRebalance(tb testing.TB, what string, prev Assignment, members []string, count int, epoch int64,
	got Assignment, changed int,
) {
	tb.Helper()
	require.NoError(tb, got.Validate(), what)
	require.Equal(tb, count, got.Count(), what)
	owners, epochs := startOf(prev, count)
	live := liveSet(members)

	// Owners are members; changed partitions carry the new epoch, the
	// others keep theirs. (Plain comparisons: this loop runs half a million
	// times in TestRebalanceRandom.)
	isLive := make(map[string]bool, len(live))
	for _, m := range live {
		isLive[m] = true
	}
	moved := 0
	gained, lost := make(map[string]int), make(map[string]int)
	for p := range count {
		o := got.Owners[p]
		if len(live) == 0 && o != "" || len(live) > 0 && !isLive[o] {
			tb.Fatalf("%s: partition %d is owned by %q, not one of the members %v", what, p, o, live)
		}
		if o == owners[p] {
			if got.Epochs[p] != epochs[p] {
				tb.Fatalf("%s: partition %d kept its owner but its epoch went from %d to %d", what, p, epochs[p], got.Epochs[p])
			}
			continue
		}
		moved++
		gained[o]++
		lost[owners[p]]++
		if got.Epochs[p] != epoch {
			tb.Fatalf("%s: partition %d changed owner but has epoch %d, not %d", what, p, got.Epochs[p], epoch)
		}
	}
	require.Equal(tb, moved, changed, "%s: changed", what)

	// Balance: floor or ceiling, and exactly count%n ceilings.
	if len(live) > 0 {
		loads := got.Loads()
		base, extra := count/len(live), count%len(live)
		ceilings := 0
		for _, m := range live {
			l := loads[m]
			require.True(tb, l == base || l == base+1, "%s: %s owns %d, want %d or %d", what, m, l, base, base+1)
			if l == base+1 {
				ceilings++
			}
		}
		require.Equal(tb, extra, ceilings, "%s: members at the ceiling", what)
		require.Len(tb, loads, min(len(live), count), "%s: owners", what)
	}

	// Minimal movement, computed two ways; and no member both gives and takes.
	want := minimalMoves(owners, live, count)
	require.Equal(tb, want, closedFormMoves(owners, live, count), "%s: the two minimums", what)
	require.Equal(tb, want, changed, "%s: moves", what)
	for m := range gained {
		require.Zero(tb, lost[m], "%s: %s both gained and lost partitions", what, m)
	}
}

// rebalance runs Rebalance, requires success and checks the result.
func rebalance(tb testing.TB, prev Assignment, members []string, count int, epoch int64) (Assignment, int) {
	tb.Helper()
	got, changed, err := Rebalance(prev, members, count, epoch)
	require.NoError(tb, err)
	checkRebalance(tb, fmt.Sprintf("%d partitions over %v", count, members), prev, members, count, epoch, got, changed)
	return got, changed
}

func TestOf(t *testing.T) {
	t.Parallel()
	ids := []int64{math.MinInt64, -1, 0, 1, 2, 3, 42, 1 << 40, math.MaxInt64}
	for _, count := range []int{1, 2, 3, 7, DefaultCount, 1000, MaxCount} {
		for _, id := range ids {
			p := Of(id, count)
			require.GreaterOrEqual(t, p, 0)
			require.Less(t, p, count)
			require.Equal(t, p, Of(id, count), "deterministic")
		}
	}
	for id := range int64(1000) {
		require.Zero(t, Of(id, 1))
	}
	// Pinned: changing the hash would move every job to another partition
	// in a running installation, so it must not change by accident.
	got := make([]int, 8)
	for i := range got {
		got[i] = Of(int64(i+1), DefaultCount)
	}
	require.Equal(t, pinnedOf, got)
}

// pinnedOf is Of(1..8, 256): the top byte of id·1640531527 mod 2^32
// (for id 1, 0x61c88647: 97).
var pinnedOf = []int{97, 195, 37, 135, 232, 74, 172, 14}

func TestOfSpreadsJobs(t *testing.T) {
	t.Parallel()
	// 256,000 ids over 256 partitions: 1000 each on average. For a hash
	// that behaves like a random function, a partition's tally is binomial
	// with standard deviation sqrt(256000 · 1/256 · 255/256) ≈ 31.6, so
	// 800-1200 is more than 6 standard deviations either way: some partition
	// strays outside with probability below 1e-7. The hash is deterministic
	// anyway; the bounds catch a poor mix, not bad luck. (The Fibonacci
	// hash does far better than random on these: 994 to 1,004.)
	const count, n = 256, 256_000
	for _, tc := range []struct {
		name string
		id   func(i int64) int64
	}{
		{"consecutive ids", func(i int64) int64 { return i }},
		// The identity modulo 256 would pass the test above; this one fails it.
		{"ids 256 apart", func(i int64) int64 { return i * count }},
		{"ids 2^32 apart", func(i int64) int64 { return i << 32 }},
		// Galera clusters hand out ids with auto_increment_increment = nodes.
		{"ids 3 apart", func(i int64) int64 { return 3 * i }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tally := make([]int, count)
			for i := int64(1); i <= n; i++ {
				tally[Of(tc.id(i), count)]++
			}
			for p, c := range tally {
				require.True(t, c >= 800 && c <= 1200, "partition %d got %d jobs", p, c)
			}
		})
	}
	// Consecutive ids do not land on consecutive partitions either.
	stepping := 0
	for id := int64(1); id < n; id++ {
		if Of(id+1, count) == (Of(id, count)+1)%count {
			stepping++
		}
	}
	require.Less(t, stepping, 2*n/count, "consecutive ids on consecutive partitions")
}

func TestOfPanicsOnBadCount(t *testing.T) {
	t.Parallel()
	for _, count := range []int{0, -1, math.MinInt} {
		require.Panics(t, func() { Of(1, count) }, "count %d", count)
	}
}

func TestNextEpoch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		term, seq, want int64
	}{
		{1, 1, 1<<32 | 1},
		{1, 7, 1<<32 | 7},
		{2, 1, 2<<32 | 1},
		{1, 1<<32 - 1, 1<<33 - 1},
		{1<<31 - 1, 1<<32 - 1, math.MaxInt64},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, NextEpoch(tc.term, tc.seq), "term %d seq %d", tc.term, tc.seq)
	}
	// A new term is above everything the previous one could write.
	for _, term := range []int64{1, 2, 1000, 1<<31 - 2} {
		require.Less(t, NextEpoch(term, 1<<32-1), NextEpoch(term+1, 1))
		require.Less(t, NextEpoch(term, 1), NextEpoch(term, 2))
	}

	bad := []struct {
		name      string
		term, seq int64
	}{
		{"term 0", 0, 1},
		{"negative term", -1, 1},
		{"term too large", 1 << 31, 1},
		{"seq 0", 1, 0},
		{"negative seq", 1, -1},
		{"seq too large", 1, 1 << 32},
	}
	for _, tc := range bad {
		require.Panics(t, func() { NextEpoch(tc.term, tc.seq) }, tc.name)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		a       Assignment
		wantErr string // "" = valid
	}{
		{"valid", Assignment{Owners: []string{"a", "", "b"}, Epochs: []int64{3, 0, 9}}, ""},
		{"one partition", Assignment{Owners: []string{""}, Epochs: []int64{0}}, ""},
		{"largest", Assignment{Owners: make([]string, MaxCount), Epochs: make([]int64, MaxCount)}, ""},
		{"zero", Assignment{}, "partition count 0 is out of range 1-4096"},
		{"more owners", Assignment{Owners: []string{"a", "b"}, Epochs: []int64{1}}, "2 owners but 1 epochs"},
		{"more epochs", Assignment{Owners: []string{"a"}, Epochs: []int64{1, 2}}, "1 owners but 2 epochs"},
		{
			"too many",
			Assignment{Owners: make([]string, MaxCount+1), Epochs: make([]int64, MaxCount+1)},
			"partition count 4097 is out of range 1-4096",
		},
		{
			"negative epoch",
			Assignment{Owners: []string{"a", "b"}, Epochs: []int64{1, -2}},
			"partition 1 has epoch -2",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.a.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			require.ErrorContains(t, err, "partition: invalid assignment: ")
		})
	}
}

func TestAccessors(t *testing.T) {
	t.Parallel()
	a := Assignment{Owners: []string{"b", "a", "", "b", "a", "b"}, Epochs: []int64{5, 6, 7, 8, 9, 10}}
	require.Equal(t, 6, a.Count())
	require.Equal(t, []Owned{{Partition: 0, Epoch: 5}, {Partition: 3, Epoch: 8}, {Partition: 5, Epoch: 10}}, a.Owned("b"))
	require.Equal(t, []Owned{{Partition: 1, Epoch: 6}, {Partition: 4, Epoch: 9}}, a.Owned("a"))
	require.Nil(t, a.Owned("c"))
	require.Nil(t, a.Owned(""))
	require.Equal(t, map[string]int{"a": 2, "b": 3}, a.Loads())
	require.Empty(t, Assignment{Owners: []string{"", ""}, Epochs: []int64{0, 0}}.Loads())
	require.Zero(t, Assignment{}.Count())
}

func TestRebalanceFromEmpty(t *testing.T) {
	t.Parallel()
	epoch := NextEpoch(1, 1)
	for _, n := range []int{1, 2, 3, 7} {
		for _, count := range []int{1, 2, 5, 16, DefaultCount, MaxCount} {
			members := admins(n)
			got, changed := rebalance(t, Assignment{}, members, count, epoch)
			owned := min(n, count)
			require.Equal(t, count, changed)
			for p, e := range got.Epochs {
				require.Equal(t, epoch, e, "partition %d", p)
			}
			require.Len(t, got.Loads(), owned)
			// Spread: with 4 or more partitions each, every member owns
			// some of the lower half and some of the upper half.
			if count/n >= 4 {
				for _, m := range members {
					mine := got.Owned(m)
					require.Less(t, mine[0].Partition, count/2, "%s owns only high partitions", m)
					require.GreaterOrEqual(t, mine[len(mine)-1].Partition, count/2, "%s owns only low partitions", m)
				}
			}
		}
	}
}

func TestRebalanceFromEmptyExact(t *testing.T) {
	t.Parallel()
	got, changed, err := Rebalance(Assignment{}, []string{"c", "a", "b"}, 8, 1)
	require.NoError(t, err)
	require.Equal(t, 8, changed)
	require.Equal(t, []string{"a", "b", "c", "a", "b", "c", "a", "b"}, got.Owners)
	require.Equal(t, []int64{1, 1, 1, 1, 1, 1, 1, 1}, got.Epochs)
}

func TestRebalanceJoin(t *testing.T) {
	t.Parallel()
	for _, count := range []int{1, 2, 3, 4, 7, 100, DefaultCount, MaxCount} {
		t.Run(fmt.Sprint(count), func(t *testing.T) {
			t.Parallel()
			old, _ := rebalance(t, Assignment{}, []string{"a", "b", "c"}, count, NextEpoch(1, 1))
			members := []string{"a", "b", "c", "d"}
			got, changed := rebalance(t, old, members, count, NextEpoch(1, 2))

			// The expected minimum, worked out here: the loads of a, b, c
			// and d (0); the count%4 ceilings go to the most loaded (ties:
			// lower id); every partition above its owner's target moves.
			loads := old.Loads()
			byLoad := slices.Clone(members)
			slices.SortStableFunc(byLoad, func(x, y string) int { return loads[y] - loads[x] })
			want := 0
			for rank, m := range byLoad {
				target := count / 4
				if rank < count%4 {
					target++
				}
				want += max(0, loads[m]-target)
			}
			require.Equal(t, want, changed)

			// Only d gains; a, b and c keep every partition they still own.
			for p := range count {
				if got.Owners[p] != old.Owners[p] {
					require.Equal(t, "d", got.Owners[p], "partition %d moved from %s", p, old.Owners[p])
				}
			}
			for _, m := range []string{"a", "b", "c"} {
				for _, o := range got.Owned(m) {
					require.Equal(t, m, old.Owners[o.Partition])
					require.Equal(t, old.Epochs[o.Partition], o.Epoch)
				}
			}
			require.Len(t, got.Owned("d"), changed)
			if count >= 4 {
				require.Len(t, got.Owned("d"), count/4, "the newcomer's share")
			}
		})
	}
}

func TestRebalanceLeave(t *testing.T) {
	t.Parallel()
	for _, count := range []int{1, 2, 3, 4, 7, 100, DefaultCount, MaxCount} {
		for _, gone := range []string{"a", "b", "c"} {
			t.Run(fmt.Sprintf("%d without %s", count, gone), func(t *testing.T) {
				t.Parallel()
				old, _ := rebalance(t, Assignment{}, []string{"a", "b", "c"}, count, NextEpoch(1, 1))
				var members []string
				for _, m := range []string{"a", "b", "c"} {
					if m != gone {
						members = append(members, m)
					}
				}
				epoch := NextEpoch(2, 1)
				got, changed := rebalance(t, old, members, count, epoch)
				require.Len(t, old.Owned(gone), changed)
				for p := range count {
					if old.Owners[p] == gone {
						require.NotEqual(t, gone, got.Owners[p])
						require.Equal(t, epoch, got.Epochs[p])
					} else {
						require.Equal(t, old.Owners[p], got.Owners[p], "partition %d", p)
						require.Equal(t, old.Epochs[p], got.Epochs[p], "partition %d", p)
					}
				}
			})
		}
	}
}

func TestRebalanceLeaveSpreadsOrphans(t *testing.T) {
	t.Parallel()
	old, _ := rebalance(t, Assignment{}, admins(4), DefaultCount, 1)
	got, changed := rebalance(t, old, admins(3), DefaultCount, 2)
	require.Equal(t, 64, changed)
	// a01, a02 and a03 take a04's partitions in turn.
	var takers []string
	for _, o := range old.Owned("a04") {
		takers = append(takers, got.Owners[o.Partition])
	}
	require.Equal(t, []string{"a01", "a02", "a03", "a01", "a02", "a03"}, takers[:6])
}

func TestRebalanceNoOp(t *testing.T) {
	t.Parallel()
	for _, count := range []int{1, 5, DefaultCount} {
		for _, n := range []int{1, 3, 7} {
			members := admins(n)
			first, _ := rebalance(t, Assignment{}, members, count, NextEpoch(1, 1))
			slices.Reverse(members)
			again, changed := rebalance(t, first, members, count, NextEpoch(1, 2))
			require.Zero(t, changed)
			require.Equal(t, first, again)
		}
	}
}

func TestRebalanceNoMembers(t *testing.T) {
	t.Parallel()
	prev := Assignment{Owners: []string{"a", "", "b", "a"}, Epochs: []int64{4, 2, 4, 3}}
	for _, members := range [][]string{nil, {}, {""}, {"", ""}} {
		got, changed := rebalance(t, prev, members, 4, 5)
		require.Equal(t, 3, changed)
		require.Equal(t, Assignment{Owners: []string{"", "", "", ""}, Epochs: []int64{5, 2, 5, 5}}, got)
	}
	got, changed := rebalance(t, Assignment{}, nil, 3, 1)
	require.Zero(t, changed)
	require.Equal(t, Assignment{Owners: []string{"", "", ""}, Epochs: []int64{0, 0, 0}}, got)
}

func TestRebalanceMemberOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	prev, _ := rebalance(t, Assignment{}, admins(5), DefaultCount, 1)
	members := []string{"a02", "a04", "a06", "a07", "b", "c"} // 3 gone, 4 new
	want, _ := rebalance(t, prev, members, DefaultCount, 2)
	for range 50 {
		shuffled := slices.Clone(members)
		shuffled = append(shuffled, members[rng.IntN(len(members))], "")
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got, _ := rebalance(t, prev, shuffled, DefaultCount, 2)
		require.Equal(t, want, got, "members %v", shuffled)
	}
}

func TestRebalanceCountChange(t *testing.T) {
	t.Parallel()
	prev, _ := rebalance(t, Assignment{}, admins(3), 16, 7)
	got, changed := rebalance(t, prev, admins(3), 32, 8)
	require.Equal(t, 32, changed)
	for _, e := range got.Epochs {
		require.Equal(t, int64(8), e)
	}
	_, _, err := Rebalance(prev, admins(3), 32, 7)
	require.ErrorContains(t, err, "epoch 7 is not greater than epoch 7 of partition 0")
}

func TestRebalanceDoesNotModifyPrev(t *testing.T) {
	t.Parallel()
	prev, _ := rebalance(t, Assignment{}, admins(3), DefaultCount, 1)
	owners, epochs := slices.Clone(prev.Owners), slices.Clone(prev.Epochs)
	members := []string{"a03", "a01", "x"}
	kept := slices.Clone(members)
	rebalance(t, prev, members, DefaultCount, 2)
	rebalance(t, prev, nil, DefaultCount, 3)
	require.Equal(t, owners, prev.Owners)
	require.Equal(t, epochs, prev.Epochs)
	require.Equal(t, kept, members)
}

func TestRebalanceErrors(t *testing.T) {
	t.Parallel()
	prev := Assignment{Owners: []string{"a", "b", ""}, Epochs: []int64{3, 9, 1}}
	cases := []struct {
		name    string
		prev    Assignment
		count   int
		epoch   int64
		wantErr string
	}{
		{"epoch equal to prev's max", prev, 3, 9, "epoch 9 is not greater than epoch 9 of partition 1"},
		{"epoch below prev's max", prev, 3, 5, "epoch 5 is not greater than epoch 9 of partition 1"},
		{"epoch 0", Assignment{}, 3, 0, "epoch 0 is below 1"},
		{"negative epoch", Assignment{}, 3, -4, "epoch -4 is below 1"},
		{"count 0", prev, 0, 10, "partition count 0 is out of range 1-4096"},
		{"negative count", prev, -1, 10, "partition count -1 is out of range 1-4096"},
		{"count too large", prev, MaxCount + 1, 10, "partition count 4097 is out of range 1-4096"},
		{
			"prev with more owners",
			Assignment{Owners: []string{"a", "b", ""}, Epochs: []int64{1, 1}}, 3, 10,
			"invalid previous assignment: 3 owners but 2 epochs",
		},
		{
			"prev with epochs only",
			Assignment{Epochs: []int64{1, 1}}, 2, 10,
			"invalid previous assignment: 0 owners but 2 epochs",
		},
		{
			"prev with a negative epoch",
			Assignment{Owners: []string{"a"}, Epochs: []int64{-1}}, 1, 10,
			"invalid previous assignment: partition 0 has epoch -1",
		},
		{
			"prev too large",
			Assignment{Owners: make([]string, MaxCount+1), Epochs: make([]int64, MaxCount+1)}, 4, 10,
			"invalid previous assignment: partition count 4097 is out of range",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, changed, err := Rebalance(tc.prev, []string{"a", "b"}, tc.count, tc.epoch)
			require.ErrorContains(t, err, tc.wantErr)
			require.ErrorContains(t, err, "partition: ")
			require.Zero(t, changed)
			require.Equal(t, Assignment{}, got)
		})
	}
}

// TestRebalanceRandom runs random sequences of joins, leaves, leader
// changes and member lists in any order, and checks every rule each time.
func TestRebalanceRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20261204, 1))
	counts := []int{1, 2, 5, 16, 256}
	ids := admins(12)
	for iter := range 2000 {
		count := counts[rng.IntN(len(counts))]
		var prev Assignment
		present := make(map[string]bool)
		term, seq := int64(1+rng.IntN(3)), int64(0)
		steps := 1 + rng.IntN(8)
		for step := range steps {
			switch rng.IntN(5) {
			case 0, 1: // one joins
				present[ids[rng.IntN(len(ids))]] = true
			case 2: // one leaves
				delete(present, ids[rng.IntN(len(ids))])
			case 3: // several come and go at once
				for range 1 + rng.IntN(4) {
					id := ids[rng.IntN(len(ids))]
					present[id] = !present[id]
				}
			case 4: // a new leader, same members
				term++
				seq = 0
			}
			if rng.IntN(50) == 0 { // the count is reconfigured
				count = counts[rng.IntN(len(counts))]
			}
			var members []string
			for id, ok := range present {
				if ok {
					members = append(members, id)
				}
			}
			slices.Sort(members) // the map order is random: fix it, then shuffle from the seed
			if len(members) > 0 && rng.IntN(4) == 0 {
				members = append(members, members[rng.IntN(len(members))], "")
			}
			rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })

			seq++
			epoch := NextEpoch(term, seq)
			what := fmt.Sprintf("iteration %d step %d: %d partitions over %v", iter, step, count, members)
			got, changed, err := Rebalance(prev, members, count, epoch)
			require.NoError(t, err, what)
			checkRebalance(t, what, prev, members, count, epoch, got, changed)

			slices.Reverse(members)
			again, changedAgain, err := Rebalance(prev, members, count, epoch)
			require.NoError(t, err, what)
			// slices.Equal, not require.Equal: reflect.DeepEqual would take
			// most of the test's time.
			require.True(t, slices.Equal(got.Owners, again.Owners) && slices.Equal(got.Epochs, again.Epochs),
				"%s: the member order changed the result", what)
			require.Equal(t, changed, changedAgain, what)
			prev = got
		}
	}
}

// FuzzRebalance reads a partition count and rounds of members from the
// bytes and rebalances round after round. The first two bytes give a count
// from -1 to MaxCount+1; the rest are rounds separated by 0xff, each byte
// of a round a member (b%32: "m<b%32>", or "" for 31) or, for 0xfe, an
// epoch that does not grow.
func FuzzRebalance(f *testing.F) {
	le := func(count int) []byte { return binary.LittleEndian.AppendUint16(nil, uint16(count+1)) }
	f.Add(append(le(256), 'a', 'b', 'c', 0xff, 'a', 'b', 'c', 'd', 0xff, 'a', 'c', 'd'))
	f.Add(append(le(1), 1, 2, 3, 0xff, 2, 0xff, 0xff, 4))
	f.Add(append(le(5), 1, 2, 3, 4, 5, 6, 7, 8, 0xff, 1, 0xff, 31, 31))
	f.Add(append(le(16), 1, 2, 0xff, 1, 2, 0xfe, 0xff, 3))
	f.Add(append(le(MaxCount), 1, 2, 3, 0xff, 4))
	f.Add(le(0))
	f.Add(le(-1))
	f.Add(le(MaxCount + 1))
	f.Add([]byte{})
	f.Add([]byte{7})
	f.Fuzz(func(t *testing.T, data []byte) {
		count := DefaultCount
		if len(data) >= 2 {
			count = int(binary.LittleEndian.Uint16(data))%(MaxCount+3) - 1
			data = data[2:]
		}
		rounds := bytes.Split(data, []byte{0xff})
		if len(rounds) > 32 {
			rounds = rounds[:32]
		}
		var prev Assignment
		for r, round := range rounds {
			epoch := NextEpoch(1, int64(r+1))
			var members []string
			for _, b := range round {
				switch {
				case b == 0xfe:
					epoch = maxEpoch(prev)
				case b%32 == 31:
					members = append(members, "")
				default:
					members = append(members, fmt.Sprintf("m%d", b%32))
				}
			}
			got, changed, err := Rebalance(prev, members, count, epoch)
			if count < 1 || count > MaxCount {
				require.ErrorContains(t, err, "partition count")
				return
			}
			if epoch <= maxEpoch(prev) {
				require.ErrorContains(t, err, "epoch")
				continue
			}
			require.NoError(t, err)
			checkRebalance(t, fmt.Sprintf("round %d", r), prev, members, count, epoch, got, changed)
			prev = got
		}
	})
}
