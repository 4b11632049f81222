package sdk

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSlotOfGolden pins the key → slot mapping: these values must never
// change, or records would move to other slots after an upgrade.
func TestSlotOfGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key    string
		total  int
		want   int
		reason string
	}{
		{"", 1024, 453, "FNV-1a offset basis 2166136261"},
		{"a", 1024, 300, "FNV-1a(a) = 3826002220"},
		{"foobar", 1024, 360, "FNV-1a(foobar) = 0xbf9cf968, the published test vector"},
		{"foobar", 16, 8, ""},
		{"foobar", 7, 0, ""},
		{"order-42", 1024, 756, "FNV-1a = 1461995252"},
		{"order-42", 16, 4, ""},
		{"customer:1001", 1024, 555, "FNV-1a = 3187326507"},
		{"customer:1001", 7, 1, ""},
		{"用户-7", 1024, 657, "UTF-8 bytes are hashed"},
		{"anything", 1, 0, "one slot owns everything"},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, SlotOf(tc.key, tc.total), "SlotOf(%q, %d) %s", tc.key, tc.total, tc.reason)
	}
}

func TestSlotOfPanicsOnBadTotal(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "sdk.SlotOf: total is 0, must be >= 1", func() { SlotOf("x", 0) })
}

func TestSlotOfSpreadsKeys(t *testing.T) {
	t.Parallel()
	const total, keys = 16, 16000
	counts := make([]int, total)
	for i := range keys {
		counts[SlotOf("order-"+itoa(int64(i)), total)]++
	}
	for s, n := range counts {
		// 1000 expected per slot; a fair hash stays well within ±20%.
		require.InDelta(t, keys/total, n, keys/total/5, "slot %d", s)
	}
}

func FuzzSlotOf(f *testing.F) {
	f.Add("order-42", 1024)
	f.Add("", 1)
	f.Fuzz(func(t *testing.T, key string, total int) {
		if total < 1 || total > 1<<20 {
			t.Skip()
		}
		s := SlotOf(key, total)
		require.True(t, s >= 0 && s < total)
		require.Equal(t, s, SlotOf(key, total))
	})
}

// checkPartition asserts that the ranges of all slots partition [minID, maxID]
// exactly: contiguous, in slot order, sizes within one of each other, empty
// ranges (0, -1) only at the end.
func checkPartition(t *testing.T, total int, minID, maxID int64) {
	t.Helper()
	// Plain comparisons: this runs millions of times under the fuzzer.
	fail := func(s int, format string, args ...any) {
		t.Helper()
		t.Fatalf("slot %d of %d over [%d, %d]: "+format, append([]any{s, total, minID, maxID}, args...)...)
	}
	next := minID    // the first ID not yet covered
	covered := false // the last ID is covered
	empties := 0
	var minSpan, maxSpan uint64 = math.MaxUint64, 0 // span = size-1 of non-empty ranges
	for s := range total {
		lo, hi := IDRange(s, total, minID, maxID)
		if lo > hi {
			if lo != 0 || hi != -1 {
				fail(s, "empty range reported as (%d, %d), want (0, -1)", lo, hi)
			}
			if !covered {
				fail(s, "empty range before the end")
			}
			empties++
			continue
		}
		if covered {
			fail(s, "[%d, %d] past the end", lo, hi)
		}
		if lo != next {
			fail(s, "starts at %d, want %d (where the previous slot ended)", lo, next)
		}
		span := uint64(hi) - uint64(lo)
		minSpan, maxSpan = min(minSpan, span), max(maxSpan, span)
		if hi == maxID {
			covered = true
		} else {
			next = hi + 1
		}
	}
	if !covered {
		fail(total-1, "the last ID is not covered")
	}
	if empties > 0 && maxSpan != 0 {
		fail(total-1, "empty slots while others have %d IDs", maxSpan+1)
	}
	if maxSpan-minSpan > 1 {
		fail(total-1, "unbalanced: sizes from %d to %d", minSpan+1, maxSpan+1)
	}
}

func TestIDRangePartitions(t *testing.T) {
	t.Parallel()
	edges := []struct {
		minID, maxID int64
	}{
		{1, 1}, {1, 10}, {0, 1023}, {1, 1024}, {1, 1025}, {-50, 50},
		{math.MinInt64, math.MaxInt64}, {math.MinInt64, math.MinInt64 + 5},
		{math.MaxInt64 - 5, math.MaxInt64}, {math.MinInt64, 0}, {0, math.MaxInt64},
	}
	for _, e := range edges {
		for _, total := range []int{1, 2, 3, 7, 10, 1023, 1024} {
			checkPartition(t, total, e.minID, e.maxID)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		a, b := int64(r.Uint64()), int64(r.Uint64())
		if r.IntN(2) == 0 { // small ranges too, where slots outnumber IDs
			b = a + int64(r.IntN(3000))
			if b < a {
				continue
			}
		}
		checkPartition(t, 1+r.IntN(1024), min(a, b), max(a, b))
	}
}

func TestIDRangeExamples(t *testing.T) {
	t.Parallel()
	type rng struct{ lo, hi int64 }
	got := func(total int, minID, maxID int64) []rng {
		var out []rng
		for s := range total {
			lo, hi := IDRange(s, total, minID, maxID)
			out = append(out, rng{lo, hi})
		}
		return out
	}
	require.Equal(t, []rng{{1, 4}, {5, 7}, {8, 10}}, got(3, 1, 10))
	require.Equal(t, []rng{{5, 5}, {6, 6}, {0, -1}, {0, -1}}, got(4, 5, 6), "surplus slots are empty")
	require.Equal(t, []rng{{0, -1}, {0, -1}}, got(2, 10, 1), "maxID < minID: nothing to do")
	require.Equal(t, []rng{{math.MinInt64, -1}, {0, math.MaxInt64}}, got(2, math.MinInt64, math.MaxInt64))
	require.Panics(t, func() { IDRange(3, 3, 1, 10) })
	require.Panics(t, func() { IDRange(-1, 3, 1, 10) })
	require.Panics(t, func() { IDRange(0, 0, 1, 10) })
}

func FuzzIDRange(f *testing.F) {
	f.Add(int64(1), int64(1000), 7)
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), 1024)
	f.Fuzz(func(t *testing.T, a, b int64, total int) {
		if total < 1 || total > 1024 {
			t.Skip()
		}
		checkPartition(t, total, min(a, b), max(a, b))
	})
}

func TestTaskHelpers(t *testing.T) {
	t.Parallel()
	task := &Task{Slot: 8, SlotCount: 16}
	require.True(t, task.Owns("foobar"))
	require.False(t, task.Owns("order-42"))
	lo, hi := task.IDRange(0, 159)
	require.Equal(t, [2]int64{80, 89}, [2]int64{lo, hi})

	require.Empty(t, task.progress())
	task.Progress(5, 0)
	require.Equal(t, "5", task.progress())
	task.Progress(5, 20)
	require.Equal(t, "5/20", task.progress())
	task.AddProcessed(2)
	task.AddProcessed(3)
	task.AddSkipped(1)
	task.AddUncertain(4)
	p, s, fl, u := task.Counts()
	require.Equal(t, [4]int64{5, 1, 0, 4}, [4]int64{p, s, fl, u})
}
