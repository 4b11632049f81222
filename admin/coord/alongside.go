package coord

import (
	"context"

	"github.com/shardjob/shardjob/admin/internal/loops"
)

// Alongside returns lead wrapped so that duty runs in its own goroutine for
// as long as lead runs (a leadership term): duty's context ends when lead
// returns or the term's context ends, and the wrapper returns only after
// duty has returned (admin/internal/loops, the one start/stop contract of
// the admin's loops). admin/server runs all of the leader's duties beside
// the scheduler in one group instead; Alongside is for one duty.
func Alongside(duty func(ctx context.Context), lead func(ctx context.Context, epoch int64)) func(ctx context.Context, epoch int64) {
	return func(ctx context.Context, epoch int64) {
		g := loops.Start(ctx, loops.Quiet(duty))
		defer func() { _ = g.Stop() }()
		lead(ctx, epoch)
	}
}
