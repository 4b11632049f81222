package builtin_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
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

// logBuffer collects a task's log; it closes the channel of a watched
// substring the first time the log contains it.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	watches map[string]chan struct{}
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, _ := b.buf.Write(p)
	for s, c := range b.watches {
		if strings.Contains(b.buf.String(), s) {
			close(c)
			delete(b.watches, s)
		}
	}
	return n, nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// watch returns a channel closed once the log contains s.
func (b *logBuffer) watch(s string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := make(chan struct{})
	if strings.Contains(b.buf.String(), s) {
		close(c)
		return c
	}
	if b.watches == nil {
		b.watches = map[string]chan struct{}{}
	}
	b.watches[s] = c
	return c
}

// newTask returns slot 3 of 8 of run 42 with params, logging into the
// returned buffer.
func newTask(params string) (*sdk.Task, *logBuffer) {
	lb := &logBuffer{}
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
