package sdk

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package when any goroutine (executor loops, handlers,
// HTTP servers and connections) outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testLogger discards logs unless SDK_TEST_LOG=1, which sends them to stderr
// (not to t.Log: a goroutine logging after its test ended would panic).
func testLogger(t *testing.T) *slog.Logger {
	t.Helper()
	if os.Getenv("SDK_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", t.Name())
	}
	return slog.New(slog.DiscardHandler)
}

// debugLogger logs at debug level into w, a testenv.Buffer of a test that
// checks the logs.
func debugLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitExec waits until cond holds for the executor's stats.
func waitExec(t *testing.T, e *Executor, what string, cond func(s Stats) bool) Stats {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		ch := e.observe()
		if s := e.Stats(); cond(s) {
			return s
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s; stats %+v", waitTimeout, what, e.Stats())
		}
	}
}

// recv receives from c or fails the test after waitTimeout.
func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
		panic("unreachable")
	}
}

// gate is a handler that reports each start and then blocks until released
// (→ nil) or its context ends (→ ctx.Err()).
type gate struct {
	started chan *Task
	release chan struct{} // one value per handler to release, or closed for all
	causes  chan error    // context.Cause when the context ended
	count   atomic.Int64
}

func newGate() *gate {
	return &gate{started: make(chan *Task, 1024), release: make(chan struct{}, 1024), causes: make(chan error, 1024)}
}

func (g *gate) handle(ctx context.Context, t *Task) error {
	g.count.Add(1)
	g.started <- t
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		g.causes <- context.Cause(ctx)
		return ctx.Err()
	}
}

func noop(context.Context, *Task) error { return nil }
