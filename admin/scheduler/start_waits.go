package scheduler

import (
	"context"

	"github.com/shardjob/shardjob/admin/store"
)

// holdForWaits: TODO(waits helper) — a run of a job with wait_for.
func (st *starter) holdForWaits(ctx context.Context, r store.PendingRun) (bool, error) {
	return false, nil
}
