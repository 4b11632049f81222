package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
)

// DueDeadline is a run with a deadline that has passed and that the leader
// has not checked yet (RunsDeadlineDue), with what deciding needs.
type DueDeadline struct {
	ID          int64         `db:"id"`
	JobID       int64         `db:"job_id"`
	App         string        `db:"app"`
	JobName     string        `db:"job_name"`
	Status      string        `db:"status"`
	ScheduledAt int64         `db:"scheduled_at"`
	FinishedAt  sql.NullInt64 `db:"finished_at"`
	// FirstStartedAt is when the run's first slot started on an executor.
	FirstStartedAt sql.NullInt64 `db:"first_started_at"`
	RunDeadlines
}

// DeadlinesDue returns up to limit runs whose earliest unchecked deadline
// is at or before nowMS (Unix ms), earliest first: one indexed query
// (idx_run_deadline_check).
func (s *Store) DeadlinesDue(ctx context.Context, nowMS int64, limit int) ([]DueDeadline, error) {
	out, err := s.q.RunsDeadlineDue(ctx, s.db, runsDeadlineDueParams{DeadlineCheckAt: nowMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("runs past a deadline: %w", err)
	}
	return out, nil
}

// DeadlineChecked is the next deadline to check of run RunID (NULL: none
// left) after the leader checked those that passed.
type DeadlineChecked struct {
	RunID int64
	Next  sql.NullInt64
}

// MarkDeadlinesChecked records the next deadline to check of each run, in
// statements of up to 1000 runs.
func (s *Store) MarkDeadlinesChecked(ctx context.Context, checked []DeadlineChecked) error {
	if len(checked) == 0 {
		return nil
	}
	checked = slices.Clone(checked)
	slices.SortFunc(checked, func(a, b DeadlineChecked) int { return cmp.Compare(a.RunID, b.RunID) }) // byKey searches ids
	ids, next := make([]int64, len(checked)), make([]any, len(checked))
	for i, c := range checked {
		ids[i], next[i] = c.RunID, c.Next
	}
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		_, err := s.execByKey(ctx, tx, qRunsDeadlineChecked, "id", ids, next)
		return err
	})
}
