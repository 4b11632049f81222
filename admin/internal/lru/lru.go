// Package lru is a small least-recently-used cache of bounded size, for the
// admin's caches whose keys grow with the number of jobs, runs or
// workflows (parsed schedules, workflow graphs): memory stays bounded
// whatever the size of the installation, and what is used often stays.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps keys to values and holds at most its capacity of them: adding
// a key to a full cache evicts the key used (got or added) longest ago.
// Get, Add and Remove are O(1). A Cache is safe for concurrent use; its
// zero value is not usable: create it with New.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	capacity int
	items    map[K]*list.Element // of *entry[K, V]
	order    list.List           // front: used last
	stats    Stats
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// Stats counts what a Cache did since it was created.
type Stats struct {
	Len       int   // keys held now
	Capacity  int   // most keys held
	Hits      int64 // Get calls that found their key
	Misses    int64 // Get calls that did not
	Evictions int64 // keys pushed out by Add to a full cache
}

// New returns an empty Cache holding at most capacity keys (at least 1).
func New[K comparable, V any](capacity int) *Cache[K, V] {
	capacity = max(capacity, 1)
	return &Cache[K, V]{capacity: capacity, items: make(map[K]*list.Element, min(capacity, 1024))}
}

// Get returns the value of key and whether it was there, and marks the key
// used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		c.stats.Misses++
		var zero V
		return zero, false
	}
	c.stats.Hits++
	c.order.MoveToFront(el)
	return el.Value.(*entry[K, V]).val, true
}

// Add sets the value of key and marks it used; when the cache is full and
// key is new, the key used longest ago is evicted first.
func (c *Cache[K, V]) Add(key K, val V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*entry[K, V]).val = val
		c.order.MoveToFront(el)
		return
	}
	if len(c.items) >= c.capacity {
		if last := c.order.Back(); last != nil {
			delete(c.items, c.order.Remove(last).(*entry[K, V]).key)
			c.stats.Evictions++
		}
	}
	c.items[key] = c.order.PushFront(&entry[K, V]{key: key, val: val})
}

// Remove forgets key (nothing when it is not there).
func (c *Cache[K, V]) Remove(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.order.Remove(el)
		delete(c.items, key)
	}
}

// Len is the number of keys held.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// Stats returns the counters and the size now.
func (c *Cache[K, V]) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Len, s.Capacity = len(c.items), c.capacity
	return s
}
