package builtin_test

import (
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk"
)

// TestMain fails the package when a goroutine (HTTP transport, SQL pools,
// process killers) outlives the tests, checked after the test databases
// were dropped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// waitTimeout bounds every wait of the tests on a signal.
const waitTimeout = 30 * time.Second

// newTask returns slot 3 of 8 of run 42 with params, logging into the
// returned buffer.
func newTask(params string) (*sdk.Task, *testenv.Buffer) {
	lb := &testenv.Buffer{}
	return &sdk.Task{
		RunID: 42, JobID: 7, JobName: "j", Slot: 3, SlotCount: 8, Params: params, Token: 9, Attempt: 1,
		Logger: slog.New(slog.NewTextHandler(lb, nil)),
	}, lb
}

func wait(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(waitTimeout):
		t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
	}
}
