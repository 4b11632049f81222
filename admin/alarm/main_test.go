package alarm_test

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/internal/testenv"
)

// TestMain stops the database fixtures, then checks that no goroutine of
// the notifier, the HTTP clients or the test servers leaked.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// clock is a manual clock for windows, backoff and leases.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
