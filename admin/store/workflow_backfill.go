package store

import (
	"context"
	"fmt"

	"github.com/shardjob/shardjob/admin/msg"
)

// Backfill is a request to run a workflow for each business date of a
// range (docs/workflows.md, "Backfill"). Its runs are keyed date:YYYY-MM-DD
// like any run of that date, so a date that has a run already keeps it,
// and created in the order they start (oldest or newest date first): the
// leader starts a pending run of a backfill only while fewer than Parallel
// of its runs are running.
type Backfill struct {
	ID          int64  `db:"id"`
	WorkflowID  int64  `db:"workflow_id"`
	App         string `db:"app"`
	FromDate    string `db:"from_date"`
	ToDate      string `db:"to_date"`
	NewestFirst bool   `db:"newest_first"`
	Parallel    int    `db:"parallel"`
	OnlyMissing bool   `db:"only_missing"`
	CreatedBy   string `db:"created_by"`
	CreatedAt   int64  `db:"created_at"`
}

// DateRun is a workflow run found for a business date.
type DateRun struct {
	ID           int64  `db:"id"`
	RunKey       string `db:"run_key"`
	BusinessDate string `db:"business_date"`
	Status       string `db:"status"`
}

// RunsOfDates returns the runs of workflow id whose business date is in
// [from, to] (YYYY-MM-DD), oldest first.
func (s *Store) RunsOfDates(ctx context.Context, workflowID int64, from, to string) ([]DateRun, error) {
	out, err := s.q.WorkflowRunsOfDates(ctx, s.db, workflowRunsOfDatesParams{WorkflowID: workflowID, FromDate: from, ToDate: to})
	if err != nil {
		return nil, fmt.Errorf("runs of workflow %d from %s to %s: %w", workflowID, from, to, err)
	}
	return out, nil
}

// CreateBackfill stores b and creates its runs (in the order given, their
// BackfillID set) in one transaction fenced by epoch: all or none. It
// returns the backfill's id and the runs, each with whether it was created
// now (false: the date's run existed, and is kept as it is).
func (s *Store) CreateBackfill(ctx context.Context, epoch int64, b Backfill, runs []NewWorkflowRun) (int64, []WorkflowRun, []bool, error) {
	var out []WorkflowRun
	var created []bool
	insert := func(tx *Tx) (int64, error) {
		return s.q.WorkflowBackfillInsert(ctx, tx.tx, workflowBackfillInsertParams{WorkflowID: b.WorkflowID, App: b.App, FromDate: b.FromDate,
			ToDate: b.ToDate, NewestFirst: b.NewestFirst, Parallel: b.Parallel, OnlyMissing: b.OnlyMissing, CreatedBy: b.CreatedBy})
	}
	id, err := s.backfillTx(ctx, epoch, nil, insert, func(tx *Tx, id int64) (err error) {
		out, created, err = createRuns(runs, func(r NewWorkflowRun) (WorkflowRun, bool, error) {
			r.BackfillID = id
			return tx.CreateWorkflowRun(ctx, epoch, r)
		})
		return err
	})
	if err != nil {
		return 0, nil, nil, fmt.Errorf("backfill of workflow %d: %w", b.WorkflowID, err)
	}
	return id, out, created, nil
}

// backfillTx is the transaction of a backfill of a workflow or a job,
// fenced by epoch: check (when not nil) what it is for, insert its row
// (insert returns the id generated), then create its runs (runs).
func (s *Store) backfillTx(ctx context.Context, epoch int64, check func(tx *Tx) error, insert func(tx *Tx) (int64, error),
	runs func(tx *Tx, id int64) error) (int64, error) {
	var id int64
	err := s.Tx(ctx, func(tx *Tx) error {
		if err := tx.CheckEpoch(ctx, epoch); err != nil {
			return err
		}
		if check != nil {
			if err := check(tx); err != nil {
				return err
			}
		}
		var err error
		if id, err = insert(tx); err != nil {
			return err
		}
		return runs(tx, id)
	})
	return id, err
}

// createRuns creates runs in order with create, and returns them with
// whether each was created now; it stops at the first error.
func createRuns[N, R any](runs []N, create func(N) (R, bool, error)) ([]R, []bool, error) {
	out, created := make([]R, 0, len(runs)), make([]bool, 0, len(runs))
	for _, r := range runs {
		run, isNew, err := create(r)
		if err != nil {
			return nil, nil, err
		}
		out, created = append(out, run), append(created, isNew)
	}
	return out, created, nil
}

// Backfill returns backfill id, or ErrNotFound.
func (t *Tx) Backfill(ctx context.Context, id int64) (Backfill, error) {
	b, err := t.s.q.WorkflowBackfillByID(ctx, t.tx, id)
	if err != nil {
		return b, notFound(err, fmt.Sprintf("backfill %d", id))
	}
	return b, nil
}

// RunningInBackfill counts the running runs of backfill id.
func (t *Tx) RunningInBackfill(ctx context.Context, id int64) (int, error) {
	n, err := t.s.q.WorkflowBackfillRunning(ctx, t.tx, id)
	if err != nil {
		return 0, fmt.Errorf("running runs of backfill %d: %w", id, err)
	}
	return n, nil
}

// SetPendingReason records why pending workflow run id has not started
// (it waits for its backfill's turn); a run no longer pending is left
// alone. The move to running clears it.
func (t *Tx) SetPendingReason(ctx context.Context, id int64, reason msg.Msg) error {
	if _, err := t.s.q.WorkflowRunPendingReason(ctx, t.tx, workflowRunPendingReasonParams{Reason: truncate(reason.String(), 2000), ReasonMsg: reason, ID: id}); err != nil {
		return fmt.Errorf("workflow run %d: reason: %w", id, err)
	}
	return nil
}
