package store

import (
	"context"
	"fmt"
)

// The watchdog's view of workflows: whether their firings happen.

// OverdueWorkflow is an enabled workflow whose next firing is late.
type OverdueWorkflow struct {
	ID         int64  `db:"id"`
	App        string `db:"app"`
	Name       string `db:"name"`
	NextFireAt int64  `db:"next_fire_at"`
}

// OverdueWorkflows returns the enabled workflows whose next_fire_at is
// older than graceMS by the database clock, at most limit, the oldest
// first.
func (s *Store) OverdueWorkflows(ctx context.Context, graceMS int64, limit int) ([]OverdueWorkflow, error) {
	out, err := s.q.WorkflowsOverdue(ctx, s.db, workflowsOverdueParams{GraceMS: graceMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("overdue workflows: %w", err)
	}
	return out, nil
}

// ScheduledWorkflows returns up to limit enabled workflows with a schedule
// whose id is above after, by id, without their definitions.
func (s *Store) ScheduledWorkflows(ctx context.Context, after int64, limit int) ([]Workflow, error) {
	out, err := s.q.WorkflowsScheduled(ctx, s.db, workflowsScheduledParams{ID: after, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("scheduled workflows: %w", err)
	}
	return out, nil
}

// WorkflowCronRunCounts counts the cron and catch-up workflow runs (fired
// or recorded as skipped) per workflow scheduled in [fromMS, toMS).
func (s *Store) WorkflowCronRunCounts(ctx context.Context, fromMS, toMS int64) (map[int64]int, error) {
	rows, err := s.q.WorkflowRunCountsInWindow(ctx, s.db, workflowRunCountsInWindowParams{FromMS: fromMS, ToMS: toMS})
	if err != nil {
		return nil, fmt.Errorf("workflow run counts: %w", err)
	}
	out := make(map[int64]int, len(rows))
	for _, r := range rows {
		out[r.WorkflowID] = r.N
	}
	return out, nil
}
