package protocol

import (
	"testing"
	"time"
)

func TestPriorityNamesAndAging(t *testing.T) {
	for _, n := range []string{"low", "normal", "high", "critical"} {
		p, err := ParsePriority(n)
		if err != nil || p.String() != n {
			t.Fatalf("%q: got %v, %v", n, p, err)
		}
	}
	if p, err := ParsePriority(""); err != nil || p != PriorityNormal {
		t.Fatalf(`"": got %v, %v`, p, err)
	}
	if _, err := ParsePriority("urgent"); err == nil {
		t.Fatal("urgent is no priority")
	}
	const aging = 5 * time.Minute
	for _, c := range []struct {
		p      Priority
		waited time.Duration
		want   Priority
	}{
		{PriorityLow, 0, PriorityLow},
		{PriorityLow, aging - time.Millisecond, PriorityLow},
		{PriorityLow, aging, PriorityNormal},
		{PriorityLow, 2 * aging, PriorityHigh},
		{PriorityLow, 3 * aging, PriorityCritical},
		{PriorityLow, 100 * aging, PriorityCritical},
		{PriorityHigh, aging, PriorityCritical},
		{PriorityCritical, 10 * aging, PriorityCritical},
		{PriorityNormal, -time.Second, PriorityNormal},
	} {
		if got := c.p.Aged(c.waited, aging); got != c.want {
			t.Errorf("%v after %v: got %v, want %v", c.p, c.waited, got, c.want)
		}
	}
	if got := PriorityLow.Aged(time.Hour, 0); got != PriorityLow {
		t.Errorf("aging off: got %v", got)
	}
}
