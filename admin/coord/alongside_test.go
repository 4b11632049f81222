package coord_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/coord"
)

// TestAlongside: the duty runs while lead runs and has returned when the
// wrapper returns, whether lead returns by itself or its term ends.
func TestAlongside(t *testing.T) {
	t.Parallel()
	var running atomic.Int32
	started := make(chan struct{}, 1)
	duty := func(ctx context.Context) {
		running.Add(1)
		defer running.Add(-1)
		started <- struct{}{}
		<-ctx.Done()
	}
	// lead returns by itself once the duty runs.
	coord.Alongside(duty, func(ctx context.Context, epoch int64) {
		<-started
		require.EqualValues(t, 1, running.Load())
		require.EqualValues(t, 7, epoch)
	})(context.Background(), 7)
	require.Zero(t, running.Load(), "the duty returned with the term")

	// The term ends: lead sees it, the duty too.
	ctx, cancel := context.WithCancel(context.Background())
	coord.Alongside(duty, func(ctx context.Context, epoch int64) {
		<-started
		cancel()
		<-ctx.Done()
	})(ctx, 8)
	require.Zero(t, running.Load())
}
