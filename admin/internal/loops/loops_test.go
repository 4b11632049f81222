package loops_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/internal/loops"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ticker is a loop in the usual shape: work every d until ctx ends, with
// a helper goroutine of its own that it waits for.
func ticker(d time.Duration, ticks *atomic.Int64) loops.Loop {
	return loops.Quiet(func(ctx context.Context) {
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { <-ctx.Done() })
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				ticks.Add(1)
			}
		}
	})
}

// TestStartStopRepeatedly starts and stops a group of loops of every shape
// many times, with Stop called from two goroutines at once, some groups
// stopped at once and some after their loops ran: every loop has returned
// when Stop returns, and goleak (TestMain) finds no goroutine left.
func TestStartStopRepeatedly(t *testing.T) {
	t.Parallel()
	var ticks atomic.Int64
	boom := errors.New("boom")
	for i := range 300 {
		var running atomic.Int64
		counted := func(l loops.Loop) loops.Loop {
			running.Add(1)
			return loops.Func(func(ctx context.Context) error {
				defer running.Add(-1)
				return l.Run(ctx)
			})
		}
		g := loops.Start(context.Background(),
			counted(ticker(time.Millisecond, &ticks)),
			counted(ticker(time.Hour, &ticks)),
			counted(loops.Func(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })),
			counted(loops.Quiet(func(context.Context) {})), // returns at once
			counted(loops.Func(func(context.Context) error { return boom })),
			counted(loops.Func(func(ctx context.Context) error {
				l := loops.Start(ctx, ticker(time.Millisecond, &ticks)) // a group inside a loop
				<-ctx.Done()
				return l.Stop()
			})),
		)
		if i%2 == 0 {
			<-g.Failed()
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j := range errs {
			wg.Go(func() { errs[j] = g.Stop() })
		}
		wg.Wait()
		require.Zero(t, running.Load(), "a loop still runs after Stop returned")
		require.ErrorIs(t, errs[0], boom)
		require.ErrorIs(t, errs[1], boom)
	}
}

// TestStopWaitsForTheLoops: Stop returns only after every loop has
// returned, however long a loop takes to finish after its context ended.
func TestStopWaitsForTheLoops(t *testing.T) {
	t.Parallel()
	sawCancel, release := make(chan struct{}), make(chan struct{})
	g := loops.Start(context.Background(), loops.Quiet(func(ctx context.Context) {
		<-ctx.Done()
		close(sawCancel)
		<-release
	}))
	stopped := make(chan error, 1)
	go func() { stopped <- g.Stop() }()
	<-sawCancel
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while a loop was still running", err)
	default:
	}
	close(release)
	require.NoError(t, <-stopped)
}

// TestParentContextStopsTheLoops: the loops also stop when the context
// given to Start ends, and their context errors are no failure.
func TestParentContextStopsTheLoops(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	g := loops.Start(ctx,
		loops.Func(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }),
		loops.Func(func(ctx context.Context) error { <-ctx.Done(); return context.Cause(ctx) }),
	)
	cancel()
	require.NoError(t, g.Wait())
	require.NoError(t, g.Err())
	select {
	case <-g.Failed():
		t.Fatal("a loop stopped by its context marked the group failed")
	default:
	}
}

// TestFirstFailureIsKept: Err and Stop report the first failure; the other
// loops keep running until Stop.
func TestFirstFailureIsKept(t *testing.T) {
	t.Parallel()
	first := errors.New("first")
	second := make(chan struct{})
	var stillRunning atomic.Bool
	g := loops.Start(context.Background(),
		loops.Func(func(context.Context) error { return first }),
		loops.Func(func(ctx context.Context) error {
			stillRunning.Store(true)
			<-ctx.Done()
			<-second
			return errors.New("second")
		}),
	)
	<-g.Failed()
	require.ErrorIs(t, g.Err(), first)
	g.Cancel()
	close(second)
	require.ErrorIs(t, g.Wait(), first)
	require.True(t, stillRunning.Load())
}
