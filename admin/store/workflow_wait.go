package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// NodeWaiting is the status of a node run whose start rule was met and
// that waits for runs of other jobs or workflows of its business date
// (admin/workflow.Node.WaitFor): waiting → running (its job run created),
// failed or skipped (timed out, or the failure policy stop).
const NodeWaiting = "waiting"

// WaitTarget is a run a workflow node or a plain job waits for: the run of business date
// Date (YYYY-MM-DD) of job App/Name, or of workflow App/Name.
type WaitTarget struct {
	App, Name string
	Workflow  bool
	Date      string
}

// WaitSucceeded reports whether the run t waits for has succeeded:
//
//   - a workflow: one of its runs of business date t.Date succeeded;
//   - a job: one of its runs succeeded whose business date is t.Date — the
//     scheduled day in the job's (current) time zone for a run of its own
//     (cron, catch-up, manual, API, child, backfill), the workflow run's
//     business date for a run a workflow node created.
//
// A job or workflow that does not exist has no succeeded run. A date that
// is not YYYY-MM-DD is an error.
func (t *Tx) WaitSucceeded(ctx context.Context, w WaitTarget) (bool, error) {
	return t.s.waitSucceeded(ctx, t.tx, w)
}

// WaitSucceeded is Tx.WaitSucceeded outside a transaction: the start path
// checks a plain job's waits with it (admin/scheduler, start_waits.go).
func (s *Store) WaitSucceeded(ctx context.Context, w WaitTarget) (bool, error) {
	return s.waitSucceeded(ctx, s.db, w)
}

func (s *Store) waitSucceeded(ctx context.Context, db sqlx.ExtContext, w WaitTarget) (bool, error) {
	day, err := time.Parse(time.DateOnly, w.Date)
	if err != nil {
		return false, fmt.Errorf("wait for %s/%s: business date: %w", w.App, w.Name, err)
	}
	if w.Workflow {
		n, err := s.q.WorkflowRunSucceededOnDate(ctx, db, workflowRunSucceededOnDateParams{App: w.App, Name: w.Name, BusinessDate: w.Date})
		if err != nil {
			return false, fmt.Errorf("wait for workflow %s/%s of %s: %w", w.App, w.Name, w.Date, err)
		}
		return n > 0, nil
	}
	job, err := s.q.JobZoneByName(ctx, db, jobZoneByNameParams{App: w.App, Name: w.Name})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("wait for job %s/%s: %w", w.App, w.Name, err)
	}
	loc, err := time.LoadLocation(job.TimeZone)
	if err != nil {
		loc = time.UTC // a stored zone that no longer loads: its runs were planned in UTC
	}
	from := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
	to := from.AddDate(0, 0, 1)
	n, err := s.q.JobRunSucceededBetween(ctx, db, jobRunSucceededBetweenParams{JobID: job.ID, FromMS: from.UnixMilli(), ToMS: to.UnixMilli()})
	if err != nil {
		return false, fmt.Errorf("wait for job %s/%s of %s: %w", w.App, w.Name, w.Date, err)
	}
	if n > 0 {
		return true, nil
	}
	n, err = s.q.JobRunSucceededOfWorkflowDate(ctx, db, jobRunSucceededOfWorkflowDateParams{JobID: job.ID, BusinessDate: w.Date})
	if err != nil {
		return false, fmt.Errorf("wait for job %s/%s of %s: %w", w.App, w.Name, w.Date, err)
	}
	return n > 0, nil
}
