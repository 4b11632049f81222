package coord

import (
	"context"
	"sync"
)

// Alongside returns lead wrapped so that duty runs in its own goroutine for
// as long as lead runs (a leadership term): duty's context ends when lead
// returns or the term's context ends, and the wrapper returns only after
// duty has returned. Leader-only background work (retention passes,
// utilization samples) is wrapped around the scheduler's lead with it.
func Alongside(duty func(ctx context.Context), lead func(ctx context.Context, epoch int64)) func(ctx context.Context, epoch int64) {
	return func(ctx context.Context, epoch int64) {
		dctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { duty(dctx) })
		defer wg.Wait()
		defer cancel()
		lead(ctx, epoch)
	}
}
