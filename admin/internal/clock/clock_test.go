package clock_test

import (
	"testing"
	"time"

	"github.com/shardjob/shardjob/admin/internal/clock"
)

func TestSystemIsTheProcessClock(t *testing.T) {
	before := time.Now()
	got := clock.System.Now()
	if got.Before(before) || got.After(time.Now()) {
		t.Fatalf("System.Now() = %v, not between the surrounding time.Now() calls", got)
	}
}

func TestManualMovesOnlyWhenTold(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := clock.NewManual(t0)
	if got := m.Now(); !got.Equal(t0) {
		t.Fatalf("Now() = %v, want %v", got, t0)
	}
	m.Advance(90 * time.Second)
	if got, want := m.Now(), t0.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("after Advance: %v, want %v", got, want)
	}
	m.Set(t0)
	if got := m.Now(); !got.Equal(t0) {
		t.Fatalf("after Set: %v, want %v", got, t0)
	}
}
