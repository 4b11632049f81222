package placement

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func counts(a []int64) map[int64]int {
	m := map[int64]int{}
	for _, id := range a {
		m[id]++
	}
	return m
}

func TestSpreadProportionalAndContiguous(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		slots int
		ex    []Executor
		want  map[int64]int
	}{
		{"even", 9, []Executor{{1, 1}, {2, 1}, {3, 1}}, map[int64]int{1: 3, 2: 3, 3: 3}},
		{"remainder", 10, []Executor{{1, 1}, {2, 1}, {3, 1}}, map[int64]int{1: 4, 2: 3, 3: 3}},
		{"by capacity", 1024, []Executor{{1, 1}, {2, 3}}, map[int64]int{1: 256, 2: 768}},
		{"fewer slots than executors", 2, []Executor{{1, 4}, {2, 4}, {3, 4}}, map[int64]int{1: 1, 2: 1}},
		{"zero capacity counts as one", 4, []Executor{{1, 0}, {2, 0}}, map[int64]int{1: 2, 2: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Spread(tc.slots, tc.ex, 0)
			require.Len(t, got, tc.slots)
			require.Equal(t, tc.want, counts(got))
			// Contiguous: each executor's slots form one block.
			seen := map[int64]bool{}
			for i, id := range got {
				if i > 0 && got[i-1] != id {
					require.False(t, seen[id], "executor %d has two blocks: %v", id, got)
				}
				seen[id] = true
			}
		})
	}
}

func TestSpreadOffsetSpreadsSingleSlotJobs(t *testing.T) {
	t.Parallel()
	ex := []Executor{{10, 1}, {20, 1}, {30, 1}, {40, 1}}
	hits := map[int64]int{}
	for job := int64(1); job <= 400; job++ {
		got := Spread(1, ex, job)
		require.Len(t, got, 1)
		hits[got[0]]++
	}
	require.Equal(t, map[int64]int{10: 100, 20: 100, 30: 100, 40: 100}, hits)
}

func TestSpreadIsOrderIndependentAndEmpty(t *testing.T) {
	t.Parallel()
	a := Spread(7, []Executor{{3, 1}, {1, 2}, {2, 1}}, 5)
	b := Spread(7, []Executor{{1, 2}, {2, 1}, {3, 1}}, 5)
	require.Equal(t, a, b)
	require.Nil(t, Spread(0, []Executor{{1, 1}}, 0))
	require.Nil(t, Spread(3, nil, 0))
	require.Len(t, Spread(5, []Executor{{1, 1}}, -3), 5)
}

func FuzzSpread(f *testing.F) {
	f.Add(10, 3, int64(7), 2)
	f.Add(1024, 8, int64(-1), 5)
	f.Fuzz(func(t *testing.T, slots, n int, offset int64, capSeed int) {
		if slots < 0 || slots > 1024 || n < 0 || n > 64 {
			return
		}
		ex := make([]Executor, n)
		for i := range ex {
			ex[i] = Executor{ID: int64(i + 1), Capacity: (capSeed+i)%5 + 1}
		}
		got := Spread(slots, ex, offset)
		if slots == 0 || n == 0 {
			require.Nil(t, got)
			return
		}
		require.Len(t, got, slots)
		for _, id := range got {
			require.True(t, id >= 1 && id <= int64(n))
		}
	})
}
