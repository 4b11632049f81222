package store

import (
	"context"
	"fmt"
)

// TriggerBackfill (workflows.go) is also the trigger kind of a job run a
// job backfill creates.

// JobBackfill is a request to run a plain job once for each business date
// of a range (docs/workflows.md, "Backfill of a plain job"). Each date's
// run is keyed like any run of the job, (job, scheduled_at) with the
// date's first firing (or midnight), so a date whose run exists keeps it.
// The runs are created in the order they start (oldest or newest date
// first): the leader starts a pending run of a backfill only in its turn
// and while fewer than Parallel of its runs are running.
type JobBackfill struct {
	ID          int64  `db:"id"`
	JobID       int64  `db:"job_id"`
	App         string `db:"app"`
	FromDate    string `db:"from_date"`
	ToDate      string `db:"to_date"`
	NewestFirst bool   `db:"newest_first"`
	Parallel    int    `db:"parallel"`
	OnlyMissing bool   `db:"only_missing"`
	CreatedBy   string `db:"created_by"`
	CreatedAt   int64  `db:"created_at"`
}

// JobBackfillStatus is a job backfill with how many of its runs there are,
// and how many are pending, running and succeeded (JobBackfills).
type JobBackfillStatus struct {
	JobBackfill
	Runs      int `db:"runs"`
	Pending   int `db:"pending"`
	Running   int `db:"running"`
	Succeeded int `db:"succeeded"`
}

// JobDateRun is a run of a job found in a backfill's range: its own runs
// by scheduled time (WorkflowDate ""), and the runs workflow nodes created
// for a business date of the range (WorkflowDate that date).
type JobDateRun struct {
	ID           int64  `db:"id"`
	ScheduledAt  int64  `db:"scheduled_at"`
	Status       string `db:"status"`
	WorkflowDate string `db:"workflow_date"`
}

// JobRunsOfRange returns the runs of job jobID a backfill of the business
// dates [from, to] finds: those scheduled in [fromMS, toMS) that no
// workflow created, then those workflow nodes created for runs of business
// dates in [from, to]; each in id order.
func (s *Store) JobRunsOfRange(ctx context.Context, jobID, fromMS, toMS int64, from, to string) ([]JobDateRun, error) {
	own, err := s.q.JobRunsScheduledBetween(ctx, s.db, jobRunsScheduledBetweenParams{JobID: jobID, FromMS: fromMS, ToMS: toMS})
	if err != nil {
		return nil, fmt.Errorf("runs of job %d from %s to %s: %w", jobID, from, to, err)
	}
	flows, err := s.q.JobRunsOfWorkflowDates(ctx, s.db, jobRunsOfWorkflowDatesParams{JobID: jobID, FromDate: from, ToDate: to})
	if err != nil {
		return nil, fmt.Errorf("workflow runs of job %d from %s to %s: %w", jobID, from, to, err)
	}
	return append(own, flows...), nil
}

// CreateJobBackfill stores b and creates its runs (in the order given,
// their BackfillID set) in one transaction fenced by epoch: all or none.
// The job must still exist (ErrNotFound otherwise; it cannot be deleted
// meanwhile), and every run must be of it. A run whose key (job, scheduled_at) exists is not created
// again. It returns the backfill's id and the runs, each with whether it
// was created now (false: the date's run existed and is kept as it is).
func (s *Store) CreateJobBackfill(ctx context.Context, epoch int64, b JobBackfill, runs []NewRun) (int64, []Run, []bool, error) {
	var out []Run
	var created []bool
	lockJob := func(tx *Tx) error {
		if _, err := s.q.JobLockForBackfill(ctx, tx.tx, b.JobID); err != nil {
			return notFound(err, fmt.Sprintf("job %d", b.JobID))
		}
		return nil
	}
	insert := func(tx *Tx) (int64, error) {
		return s.q.JobBackfillInsert(ctx, tx.tx, jobBackfillInsertParams{JobID: b.JobID, App: b.App, FromDate: b.FromDate,
			ToDate: b.ToDate, NewestFirst: b.NewestFirst, Parallel: b.Parallel, OnlyMissing: b.OnlyMissing, CreatedBy: b.CreatedBy})
	}
	id, err := s.backfillTx(ctx, epoch, lockJob, insert, func(tx *Tx, id int64) (err error) {
		out, created, err = createRuns(runs, func(r NewRun) (Run, bool, error) {
			if r.JobID != b.JobID {
				return Run{}, false, fmt.Errorf("a run of job %d", r.JobID)
			}
			r.BackfillID = id
			return s.insertRun(ctx, tx.tx, epoch, r)
		})
		return err
	})
	if err != nil {
		return 0, nil, nil, fmt.Errorf("backfill of job %d: %w", b.JobID, err)
	}
	return id, out, created, nil
}

// insertRun inserts run r (its App set) unless its key exists, and returns
// the run of its key and whether it was created.
func (s *Store) insertRun(ctx context.Context, db dbtx, epoch int64, r NewRun) (Run, bool, error) {
	n, err := s.q.RunInsert(ctx, db, []runInsertParams{r.insertParams(epoch)})
	if err != nil {
		return Run{}, false, fmt.Errorf("insert run of job %d at %d: %w", r.JobID, r.ScheduledAt, err)
	}
	run, err := s.q.RunByKey(ctx, db, runByKeyParams{JobID: r.JobID, ScheduledAt: r.ScheduledAt})
	if err != nil {
		return run, false, notFound(err, fmt.Sprintf("run of job %d at %d", r.JobID, r.ScheduledAt))
	}
	return run, n == 1, nil
}

// JobBackfills lists the backfills of job jobID, newest first, with id <
// beforeID (0: from the newest), at most limit (1-500, default 50).
func (s *Store) JobBackfills(ctx context.Context, jobID, beforeID int64, limit int) ([]JobBackfillStatus, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	beforeID = max(beforeID, 0)
	out, err := s.q.JobBackfillsOfJob(ctx, s.db, jobBackfillsOfJobParams{JobID: jobID, ID: beforeID, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("backfills of job %d: %w", jobID, err)
	}
	return out, nil
}

// BackfillTurn is where a job backfill stands for the leader's start path:
// its parallelism, how many of its runs are running, and its pending runs
// that are due, in the order they start.
type BackfillTurn struct {
	Parallel int
	Running  int
	Pending  []int64
}

// BackfillTurns reads where job backfills ids stand at nowMS (one query for
// all of them): a backfill without running or due pending runs is missing
// from the map.
func (s *Store) BackfillTurns(ctx context.Context, ids []int64, nowMS int64) (map[int64]*BackfillTurn, error) {
	out := map[int64]*BackfillTurn{}
	for start := 0; start < len(ids); start += 1000 {
		rows, err := s.q.JobBackfillTurns(ctx, s.db, jobBackfillTurnsParams{BackfillIDs: ids[start:min(start+1000, len(ids))], ScheduledAt: nowMS})
		if err != nil {
			return nil, fmt.Errorf("turns of %d job backfills: %w", len(ids), err)
		}
		for _, r := range rows {
			t := out[r.BackfillID]
			if t == nil {
				t = &BackfillTurn{Parallel: r.Parallel}
				out[r.BackfillID] = t
			}
			if r.Status == RunRunning {
				t.Running++
			} else {
				t.Pending = append(t.Pending, r.ID)
			}
		}
	}
	return out, nil
}
