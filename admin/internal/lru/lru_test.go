package lru

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEvictsTheKeyUsedLongestAgo(t *testing.T) {
	c := New[int, string](3)
	c.Add(1, "a")
	c.Add(2, "b")
	c.Add(3, "c")
	_, ok := c.Get(1) // 1 used last: 2 is now the oldest
	require.True(t, ok)
	c.Add(4, "d")
	_, ok = c.Get(2)
	require.False(t, ok, "2 was used longest ago and is evicted")
	c.Add(3, "c2") // updating 3 marks it used: 1 is the oldest
	c.Add(5, "e")
	_, ok = c.Get(1)
	require.False(t, ok, "1 was used longest ago and is evicted")
	for k, want := range map[int]string{3: "c2", 4: "d", 5: "e"} {
		v, ok := c.Get(k)
		require.True(t, ok, "key %d", k)
		require.Equal(t, want, v)
	}
	s := c.Stats()
	require.Equal(t, Stats{Len: 3, Capacity: 3, Hits: 4, Misses: 2, Evictions: 2}, s)
}

func TestRemoveAndCapacityOfOne(t *testing.T) {
	c := New[string, int](0) // at least 1
	c.Add("x", 1)
	c.Add("y", 2)
	require.Equal(t, 1, c.Len())
	_, ok := c.Get("x")
	require.False(t, ok)
	c.Remove("y")
	c.Remove("absent")
	require.Zero(t, c.Len())
}

func TestBoundedUnderConcurrentUse(t *testing.T) {
	const capacity = 100
	c := New[string, int](capacity)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				k := fmt.Sprintf("%d-%d", g, i%300)
				if v, ok := c.Get(k); ok {
					require.Equal(t, i%300, v)
				} else {
					c.Add(k, i%300)
				}
				if i%97 == 0 {
					c.Remove(k)
				}
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, c.Len(), capacity)
	s := c.Stats()
	require.Equal(t, int64(8*2000), s.Hits+s.Misses)
}
