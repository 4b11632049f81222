package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// TriggerWorkflow is the trigger kind of a job run created by a workflow
// node (admin/workflowrun): the node run links to it.
const TriggerWorkflow = "workflow"

// LockWorkflowRun reads workflow run id and locks it until the transaction
// ends (MySQL; SQLite has one writer), so that two deciders on one run —
// two leaders across a failover — decide one after the other.
// ErrNotFound when there is none.
func (t *Tx) LockWorkflowRun(ctx context.Context, id int64) (WorkflowRun, error) {
	r, err := t.s.q.WorkflowRunByIDLocked(ctx, t.tx, id)
	if err != nil {
		return r, notFound(err, fmt.Sprintf("workflow run %d", id))
	}
	return r, nil
}

// JobRunStatus is the status of a job run and, once it ended otherwise
// than succeeded, why (English, as the run's error).
type JobRunStatus struct {
	ID     int64  `db:"id"`
	App    string `db:"app"` // the app of the run's job: a node may run another app's job
	Status string `db:"status"`
	Error  string `db:"error"`
}

// JobRunStatuses returns the statuses of the job runs ids, by id; a run
// that does not exist is absent.
func (t *Tx) JobRunStatuses(ctx context.Context, ids []int64) (map[int64]JobRunStatus, error) {
	out := make(map[int64]JobRunStatus, len(ids))
	for start := 0; start < len(ids); start += 1000 {
		rows, err := t.s.q.JobRunStatuses(ctx, t.tx, ids[start:min(start+1000, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("statuses of %d job runs: %w", len(ids), err)
		}
		for _, r := range rows {
			out[r.ID] = r
		}
	}
	return out, nil
}

// InsertWorkflowJobRun inserts r, the job run of a workflow node run, and
// returns its id. It is the insert of every run (RunInsert: the job's
// slots, time zone, records policy and deadlines travel with it; the
// leader then starts, places and retries it as any pending run). The run
// key (job_id, scheduled_at) must not collide with another run of the job
// (its cron firings, another node of the same job): when it does, the next
// millisecond is tried, up to 100. Exactly-once per node run is the
// caller's transaction: it creates the node run (keyed (workflow run,
// node, rerun)), this run and the link together, fenced by its epoch.
func (t *Tx) InsertWorkflowJobRun(ctx context.Context, epoch int64, r NewRun) (int64, error) {
	filled, err := t.s.withApps(ctx, t.tx, []NewRun{r})
	if err != nil {
		return 0, err
	}
	r = filled[0]
	at := r.ScheduledAt
	for r.ScheduledAt = at; r.ScheduledAt < at+100; r.ScheduledAt++ {
		n, err := t.s.q.RunInsert(ctx, t.tx, []runInsertParams{r.insertParams(epoch)})
		if err != nil {
			return 0, fmt.Errorf("workflow run of job %d: %w", r.JobID, err)
		}
		if n == 1 {
			id, err := t.s.q.RunIDByKey(ctx, t.tx, runIDByKeyParams{JobID: r.JobID, ScheduledAt: r.ScheduledAt})
			if err != nil {
				return 0, fmt.Errorf("workflow run of job %d: %w", r.JobID, err)
			}
			return id, nil
		}
	}
	return 0, conflictf("workflow run of job %d: runs exist at each of the 100 ms from %d", r.JobID, at)
}

// JobIDByName returns the id of job name of app inside the transaction;
// found is false when there is none.
func (t *Tx) JobIDByName(ctx context.Context, app, name string) (id int64, found bool, err error) {
	rows, err := t.s.q.JobIdentitiesByName(ctx, t.tx, jobIdentitiesByNameParams{App: app, Name: []string{name}})
	if err != nil {
		return 0, false, fmt.Errorf("job %s/%s: %w", app, name, err)
	}
	if len(rows) == 0 {
		return 0, false, nil
	}
	return rows[0].ID, true, nil
}

// InlineJobID returns the id of the job of inline node key of workflow
// workflowID inside the transaction; found is false when there is none
// (the node is not inline in the current definition, or the workflow was
// deleted).
func (t *Tx) InlineJobID(ctx context.Context, workflowID int64, key string) (id int64, found bool, err error) {
	id, err = t.s.q.JobOfWorkflowNode(ctx, t.tx, jobOfWorkflowNodeParams{WorkflowID: workflowID, Name: InlineJobName(workflowID, key)})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("job of inline node %s of workflow %d: %w", key, workflowID, err)
	}
	return id, true, nil
}

// JobRunStatuses is Tx.JobRunStatuses outside a transaction (the API's
// view of a workflow run).
func (s *Store) JobRunStatuses(ctx context.Context, ids []int64) (map[int64]JobRunStatus, error) {
	var out map[int64]JobRunStatus
	err := s.Tx(ctx, func(tx *Tx) error {
		var err error
		out, err = tx.JobRunStatuses(ctx, ids)
		return err
	})
	return out, err
}

// DueWorkflows returns up to limit enabled workflows whose next firing is
// at or before atMS, oldest first, locked until the transaction ends
// (those another transaction holds are passed over), without their
// definitions.
func (t *Tx) DueWorkflows(ctx context.Context, atMS int64, limit int) ([]Workflow, error) {
	out, err := t.s.q.WorkflowsDue(ctx, t.tx, workflowsDueParams{NextFireAt: atMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("due workflows: %w", err)
	}
	return out, nil
}

// SetWorkflowNextFire sets the next firing of workflow id (NULL: none)
// unless it changed since version was read.
func (t *Tx) SetWorkflowNextFire(ctx context.Context, id, version int64, next sql.NullInt64) error {
	if _, err := t.s.q.WorkflowSetNextFire(ctx, t.tx, workflowSetNextFireParams{NextFireAt: next, ID: id, Version: version}); err != nil {
		return fmt.Errorf("workflow %d: next firing: %w", id, err)
	}
	return nil
}

// CalendarIDByName returns the id of the business calendar name as app
// sees it: the app's own, else a global one; found is false when there is
// neither.
func (t *Tx) CalendarIDByName(ctx context.Context, app, name string) (id int64, found bool, err error) {
	id, err = t.s.q.CalendarIDByName(ctx, t.tx, calendarIDByNameParams{Name: name, App: app})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("calendar %q of app %s: %w", name, app, err)
	}
	return id, true, nil
}
