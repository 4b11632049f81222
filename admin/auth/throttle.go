package auth

import (
	"container/list"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/internal/clock"
)

// DefaultThrottleKeys is how many keys a Throttle keeps by default.
const DefaultThrottleKeys = 100_000

// Throttle limits attempts per key (a user name and client address for
// logins, a user for password changes). Take reserves an attempt before the
// credential is checked, so that parallel attempts cannot all pass before
// any of them is counted: after Max attempts within Window, Take refuses
// until the oldest of them leaves the window. A successful attempt calls
// Reset, which forgets the key.
//
// Memory is bounded: the Throttle keeps at most MaxKeys keys, in the order
// they were last touched. A new key beyond MaxKeys pushes out the key
// touched longest ago, and keys untouched for a whole Window (whose
// attempts have all expired) are dropped as they come to the end. Every
// Take touches its key, refused ones included, so a key that is still being
// tried stays while other keys are sprayed. Take and Reset are O(1),
// amortised. A Throttle is safe for concurrent use.
type Throttle struct {
	// Max attempts per key within Window.
	Max int
	// Window over which attempts are counted.
	Window time.Duration
	// MaxKeys bounds memory. Default DefaultThrottleKeys.
	MaxKeys int
	// Clock tells the time of attempts. NewThrottle sets it.
	Clock clock.Clock

	mu    sync.Mutex
	keys  map[string]*list.Element // of *throttleEntry
	order list.List                // front: touched last
}

type throttleEntry struct {
	key      string
	touched  time.Time
	attempts []time.Time // within Window, oldest first; at most Max
}

// NewThrottle returns a Throttle allowing max attempts per key and window
// by clk, keeping DefaultThrottleKeys keys.
func NewThrottle(max int, window time.Duration, clk clock.Clock) *Throttle {
	return &Throttle{Max: max, Window: window, MaxKeys: DefaultThrottleKeys, Clock: clk}
}

// Take counts an attempt for key and reports true when it may go ahead.
// Otherwise it counts nothing and reports how long until the next attempt
// may.
func (t *Throttle) Take(key string) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.Clock.Now()
	e := t.touch(key, now)
	kept := e.attempts[:0]
	for _, at := range e.attempts {
		if now.Sub(at) < t.Window {
			kept = append(kept, at)
		}
	}
	e.attempts = kept
	if len(kept) >= t.Max {
		return false, t.Window - now.Sub(kept[0])
	}
	e.attempts = append(e.attempts, now)
	return true, 0
}

// touch returns the entry of key, created if need be, as the one touched
// last, after dropping idle keys and the keys beyond MaxKeys.
func (t *Throttle) touch(key string, now time.Time) *throttleEntry {
	if t.keys == nil {
		t.keys = map[string]*list.Element{}
	}
	for back := t.order.Back(); back != nil && now.Sub(back.Value.(*throttleEntry).touched) >= t.Window; back = t.order.Back() {
		t.remove(back)
	}
	if el, ok := t.keys[key]; ok {
		e := el.Value.(*throttleEntry)
		e.touched = now
		t.order.MoveToFront(el)
		return e
	}
	e := &throttleEntry{key: key, touched: now}
	t.keys[key] = t.order.PushFront(e)
	maxKeys := t.MaxKeys
	if maxKeys <= 0 {
		maxKeys = DefaultThrottleKeys
	}
	for t.order.Len() > maxKeys {
		t.remove(t.order.Back())
	}
	return e
}

func (t *Throttle) remove(el *list.Element) {
	delete(t.keys, el.Value.(*throttleEntry).key)
	t.order.Remove(el)
}

// Reset forgets key (after a successful attempt).
func (t *Throttle) Reset(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if el, ok := t.keys[key]; ok {
		t.remove(el)
	}
}

// Len is the number of keys kept.
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.order.Len()
}
