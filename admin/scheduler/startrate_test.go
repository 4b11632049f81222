package scheduler

import (
	"testing"
	"time"
)

// TestStartBucket: a new bucket holds a second's worth of starts, refills
// at the rate, never beyond the burst, and a clock that steps back takes
// nothing back.
func TestStartBucket(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	var b startBucket
	taken := func(now time.Time, n int) int {
		got := 0
		for range n {
			if b.take(now, 4) {
				got++
			}
		}
		return got
	}
	if got := taken(t0, 10); got != 4 {
		t.Fatalf("a full bucket: %d of 10 taken, want the burst 4", got)
	}
	if got := taken(t0.Add(500*time.Millisecond), 10); got != 2 {
		t.Fatalf("half a second later: %d taken, want 2", got)
	}
	if got := taken(t0.Add(time.Hour), 10); got != 4 {
		t.Fatalf("after an hour: %d taken, want the burst 4 (no more)", got)
	}
	if got := taken(t0.Add(time.Hour-time.Minute), 10); got != 0 {
		t.Fatalf("a clock stepped back: %d taken, want 0", got)
	}
	if got := taken(t0.Add(time.Hour+250*time.Millisecond), 10); got != 1 {
		t.Fatalf("a quarter second after the last take: %d taken, want 1", got)
	}
}
