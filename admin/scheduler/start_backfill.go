package scheduler

import (
	"context"

	"github.com/shardjob/shardjob/admin/store"
)

// holdForBackfill: TODO(backfill helper) — a run of a job backfill.
func (st *starter) holdForBackfill(ctx context.Context, r store.PendingRun) (bool, error) {
	return false, nil
}
