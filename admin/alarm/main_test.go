package alarm_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestMain stops the database fixtures, then checks that no goroutine of
// the notifier, the HTTP clients or the test servers leaked.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// newClock is a manual clock for windows, backoff and leases, standing at
// the present.
func newClock() *clock.Manual { return clock.NewManual(time.Now()) }
