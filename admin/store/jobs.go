package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/shardjob/shardjob/admin/msg"
)

// CreateJob inserts a job and returns its id. A taken (app, name) is
// ErrConflict. The caller validates fields and computes NextFireAt;
// CreatedAt (the @every anchor) defaults to the database clock. The insert
// binds j by its db tags (the columns of fragment JobDefinition).
func (s *Store) CreateJob(ctx context.Context, j Job) (int64, error) {
	var id int64
	err := s.Tx(ctx, func(tx *Tx) error {
		var err error
		if id, err = s.q.JobInsert(ctx, tx.tx, j); err != nil {
			return err
		}
		if err = s.fillPartition(ctx, tx.tx, id); err != nil {
			return err
		}
		if _, err = s.q.AppJobCountAdd(ctx, tx.tx, id); err != nil {
			return err
		}
		if _, err = s.q.AppEnsure(ctx, tx.tx, j.App); err != nil {
			return err
		}
		return s.auditFrom(ctx, tx.tx, AuditJobs, id)
	})
	if isDuplicate(err) {
		return 0, conflictf("job %s/%s already exists", j.App, j.Name)
	}
	if err != nil {
		return 0, fmt.Errorf("create job %s/%s: %w", j.App, j.Name, err)
	}
	return id, nil
}

// Job returns a job or ErrNotFound.
func (s *Store) Job(ctx context.Context, id int64) (Job, error) {
	j, err := s.q.JobByID(ctx, s.db, id)
	if err != nil {
		return j, notFound(err, fmt.Sprintf("job %d", id))
	}
	return j, nil
}

// Jobs returns up to limit jobs with id > afterID, by id (keyset paging).
func (s *Store) Jobs(ctx context.Context, afterID int64, limit int) ([]Job, error) {
	return s.JobsOfApps(ctx, afterID, limit, nil)
}

// JobsOfApps is ListJobs limited to jobs of apps (nil: every app).
func (s *Store) JobsOfApps(ctx context.Context, afterID int64, limit int, apps []string) ([]Job, error) {
	var out []Job
	var err error
	if apps != nil {
		out, err = s.q.JobListOfApps(ctx, s.db, jobListOfAppsParams{ID: afterID, Apps: apps, Limit: limit})
	} else {
		out, err = s.q.JobList(ctx, s.db, jobListParams{ID: afterID, Limit: limit})
	}
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

// SetJobEnabled enables or disables a job and sets its next firing.
//
// Disabling skips the job's scheduled runs that have not started (see
// skipPendingScheduled), in the same transaction.
func (s *Store) SetJobEnabled(ctx context.Context, id int64, enabled bool, next sql.NullInt64) error {
	return s.setJobFlag(ctx, id, !enabled, msg.New(msg.RunSkippedDisabled), func(tx *sqlx.Tx) (int64, error) {
		return s.q.JobSetEnabled(ctx, tx, jobSetEnabledParams{Enabled: enabled, NextFireAt: next, ID: id})
	})
}

// setJobFlag runs update, a "SET flag = ?, next_fire_at = ? WHERE id = ?"
// update of job id that returns the rows it affected, and, when skip is
// set, skips the job's pending scheduled runs with reason, in one
// transaction.
func (s *Store) setJobFlag(ctx context.Context, id int64, skip bool, reason msg.Msg, update func(tx *sqlx.Tx) (int64, error)) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := update(tx)
		if err != nil {
			return fmt.Errorf("update job %d: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("job %d: %w", id, ErrNotFound)
		}
		if err := s.auditFrom(ctx, tx, AuditJobs, id); err != nil {
			return err
		}
		if skip {
			return s.skipPendingScheduled(ctx, tx, id, reason)
		}
		return nil
	})
}

// skipPendingScheduled records the job's scheduled runs that have not
// started (created ahead of time by the pre-read window, or waiting for an
// executor) as skipped with reason. Runs triggered by hand still run.
func (s *Store) skipPendingScheduled(ctx context.Context, ex sqlx.ExtContext, jobID int64, reason msg.Msg) error {
	p := runsSkipPendingScheduledParams{Error: reason.String(), ErrorMsg: reason, JobID: jobID}
	if _, err := s.q.RunsSkipPendingScheduled(ctx, ex, p); err != nil {
		return fmt.Errorf("skip pending runs of job %d: %w", jobID, err)
	}
	return nil
}

// UpdateJob replaces the definition of job j.ID if its version is still
// j.Version (optimistic lock); otherwise ErrConflict. App and name are the
// job's identity and do not change. The update binds j by its db tags.
func (s *Store) UpdateJob(ctx context.Context, j Job) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.q.JobUpdate(ctx, tx, j)
		if err != nil {
			return fmt.Errorf("update job %d: %w", j.ID, err)
		}
		if n == 0 {
			exists, err := s.q.JobExists(ctx, tx, j.ID)
			if err != nil {
				return fmt.Errorf("job %d: %w", j.ID, err)
			}
			if exists == 0 {
				return fmt.Errorf("job %d: %w", j.ID, ErrNotFound)
			}
			return conflictf("job %d was changed by someone else (version %d is stale): reload it and apply your change again", j.ID, j.Version)
		}
		if err := s.auditFrom(ctx, tx, AuditJobs, j.ID); err != nil {
			return err
		}
		if !j.Enabled {
			return s.skipPendingScheduled(ctx, tx, j.ID, msg.New(msg.RunSkippedDisabled))
		}
		return nil
	})
}

// SetJobPaused pauses or resumes a job and sets its next firing. A paused
// job keeps its definition and enabled flag but does not fire; firings that
// fall into the pause are intentional, not misfires.
// Pausing skips the job's scheduled runs that have not started, in the
// same transaction.
func (s *Store) SetJobPaused(ctx context.Context, id int64, paused bool, next sql.NullInt64) error {
	return s.setJobFlag(ctx, id, paused, msg.New(msg.RunSkippedPaused), func(tx *sqlx.Tx) (int64, error) {
		return s.q.JobSetPaused(ctx, tx, jobSetPausedParams{Paused: paused, NextFireAt: next, ID: id})
	})
}

// ReplanJob sets job id's next_fire_at to next if it still is was;
// false when it is not (the leader moved it, or the job is gone).
func (s *Store) ReplanJob(ctx context.Context, id int64, was, next sql.NullInt64) (bool, error) {
	n, err := s.q.JobReplan(ctx, s.db, jobReplanParams{NextFireAt: next, ID: id, OldNextFireAt: was})
	if err != nil {
		return false, fmt.Errorf("replan job %d: %w", id, err)
	}
	return n > 0, nil
}

// ChildGraphFrom returns the part of the child-job graph reachable from
// roots: for each job reached that has children, the ids of its children
// (for cycle checks: giving a job these children closes a cycle only if the
// job is reachable from them). It reads the jobs reached, one level a query,
// never every job.
func (s *Store) ChildGraphFrom(ctx context.Context, roots []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	seen := map[int64]bool{}
	var next []int64
	for _, id := range roots {
		if !seen[id] {
			seen[id] = true
			next = append(next, id)
		}
	}
	for len(next) > 0 {
		rows, err := s.q.JobChildren(ctx, s.db, next)
		if err != nil {
			return nil, fmt.Errorf("child graph: %w", err)
		}
		next = next[:0:0]
		for _, r := range rows {
			out[r.ID] = ParseIDList(r.ChildJobIDs)
			for _, c := range out[r.ID] {
				if !seen[c] {
					seen[c] = true
					next = append(next, c)
				}
			}
		}
	}
	return out, nil
}

// ParseIDList parses "1,2,3"; invalid entries are skipped (validated on save).
func ParseIDList(s string) []int64 {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		if id, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64); err == nil && id > 0 {
			out = append(out, id)
		}
	}
	return out
}

// RunningRunsError is DeleteJob's refusal: the job has runs that are
// running (placed on executors). It matches ErrConflict.
type RunningRunsError struct {
	JobID   int64
	Running int
}

func (e *RunningRunsError) Error() string {
	return fmt.Sprintf("job %d has %d running run(s): cancel them or let them finish first", e.JobID, e.Running)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *RunningRunsError) Is(target error) bool { return target == ErrConflict }

// DeleteJob removes a job definition in one transaction: its pending runs
// are cancelled (msg.RunJobDeleted), and the job is deleted
// unless one of its runs is running (*RunningRunsError, nothing changed).
// Its run history stays, each run with the job's app and name
// (job_run.app, job_run.job_name).
func (s *Store) DeleteJob(ctx context.Context, id int64) error {
	reason := msg.New(msg.RunJobDeleted)
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		// Pending runs first: a run that starts meanwhile is then counted as
		// running below (the start's update waits for these row locks and
		// then finds them cancelled).
		cancel := runsCancelPendingOfJobParams{Error: truncate(reason.String(), 2000), ErrorMsg: reason, JobID: id}
		if _, err := s.q.RunsCancelPendingOfJob(ctx, tx, cancel); err != nil {
			return fmt.Errorf("cancel the pending runs of job %d: %w", id, err)
		}
		running, err := s.q.RunRunningOfJob(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("running runs of job %d: %w", id, err)
		}
		if running > 0 {
			return &RunningRunsError{JobID: id, Running: running}
		}
		if _, err := s.q.AppJobCountRemove(ctx, tx, id); err != nil {
			return fmt.Errorf("job count of job %d's app: %w", id, err)
		}
		if _, err := s.q.JobAuditDelete(ctx, tx, id); err != nil {
			return fmt.Errorf("audit cursor of job %d: %w", id, err)
		}
		n, err := s.q.JobDelete(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("delete job %d: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("job %d: %w", id, ErrNotFound)
		}
		return nil
	})
}

// AppJobCount is the number of ordinary jobs of an app.
type AppJobCount struct {
	App  string `db:"app"`
	Jobs int64  `db:"jobs"`
}

// AppJobCounts returns the number of ordinary jobs (not a workflow's
// inline nodes) of every app that has one, by app: one row per app, kept
// by CreateJob and DeleteJob (GET /api/v1/apps; not a count of every job).
func (s *Store) AppJobCounts(ctx context.Context) ([]AppJobCount, error) {
	out, err := s.q.AppJobCounts(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("job counts of apps: %w", err)
	}
	return out, nil
}

// JobsOfHandler returns up to limit ordinary jobs of handler with id >
// afterID, by id (keyset paging on idx_job_handler).
func (s *Store) JobsOfHandler(ctx context.Context, handler string, afterID int64, limit int) ([]Job, error) {
	out, err := s.q.JobsOfHandler(ctx, s.db, jobsOfHandlerParams{Handler: handler, ID: afterID, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("jobs of handler %s: %w", handler, err)
	}
	return out, nil
}

// NextDue returns the earliest next_fire_at of enabled jobs (Valid=false if none).
func (s *Store) NextDue(ctx context.Context) (sql.NullInt64, error) {
	v, err := s.q.JobNextDue(ctx, s.db)
	if err != nil {
		return v, fmt.Errorf("next due job: %w", err)
	}
	return v, nil
}

// CountDue counts enabled, unpaused jobs due at or before nowMS, up to
// limit: it reads at most limit index entries.
func (s *Store) CountDue(ctx context.Context, nowMS int64, limit int) (int, error) {
	n, err := s.q.JobCountDue(ctx, s.db, jobCountDueParams{NextFireAt: nowMS, Limit: limit})
	if err != nil {
		return 0, fmt.Errorf("count due jobs: %w", err)
	}
	return n, nil
}

// ClaimDue locks and returns up to limit enabled jobs due at or before
// nowMS, oldest first. On MySQL rows locked by another transaction are
// skipped (SKIP LOCKED). Call after CheckEpoch.
func (t *Tx) ClaimDue(ctx context.Context, nowMS int64, limit int) ([]Job, error) {
	out, err := t.s.q.JobClaimDue(ctx, t.tx, jobClaimDueParams{NextFireAt: nowMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("claim due jobs: %w", err)
	}
	return out, nil
}

// SetNextFire updates next_fire_at of many jobs. Jobs that share their next
// firing (a herd of jobs on the same schedule) are updated together by one
// "WHERE id IN (…)" statement per distinct value; the rest, when there are
// many distinct values, by one CASE statement. A nil value (Valid=false)
// means the job never fires again.
func (t *Tx) SetNextFire(ctx context.Context, next map[int64]sql.NullInt64) error {
	s, tx := t.s, t.tx
	if len(next) == 0 {
		return nil
	}
	groups := map[sql.NullInt64][]int64{}
	for id, v := range next {
		groups[v] = append(groups[v], id)
	}
	// The largest groups (up to maxGroups of them) get their own statement.
	const maxGroups, minGroup = 8, 4
	values := make([]sql.NullInt64, 0, len(groups))
	for v := range groups {
		values = append(values, v)
	}
	sort.Slice(values, func(a, b int) bool { return len(groups[values[a]]) > len(groups[values[b]]) })
	rest := map[int64]sql.NullInt64{}
	for i, v := range values {
		ids := groups[v]
		if i >= maxGroups || len(ids) < minGroup {
			for _, id := range ids {
				rest[id] = v
			}
			continue
		}
		if _, err := s.q.JobsSetNextFire(ctx, tx, jobsSetNextFireParams{NextFireAt: v, IDs: ids}); err != nil {
			return fmt.Errorf("advance next_fire_at of %d jobs: %w", len(ids), err)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(rest))
	vals := make([]any, len(ids))
	for i, id := range ids {
		vals[i] = rest[id]
	}
	if _, err := s.execByKey(ctx, tx, qJobsSetNextFireByID, "id", ids, vals); err != nil {
		return fmt.Errorf("advance next_fire_at of %d jobs: %w", len(rest), err)
	}
	return nil
}

// JobCompletion is a job the leader found will not fire again by its
// window (JobWindow), and why.
type JobCompletion struct {
	ID  int64
	Why msg.Msg
}

// CompleteJobs marks jobs completed now with their reasons (their
// next_fire_at is NULL: SetNextFire). Not an edit: their version stays.
func (t *Tx) CompleteJobs(ctx context.Context, jobs []JobCompletion) error {
	for _, c := range jobs {
		if _, err := t.s.q.JobComplete(ctx, t.tx, jobCompleteParams{CompletedMsg: c.Why, ID: c.ID}); err != nil {
			return fmt.Errorf("complete job %d: %w", c.ID, err)
		}
	}
	return nil
}

// PauseJobUntil pauses job id until the instant untilMS, when the leader
// resumes it by itself (ResumeDue); next is its next firing as if it were
// not paused, which the misfire policy decides on when it resumes. Like
// SetJobPaused, it skips the job's scheduled runs that have not started.
func (s *Store) PauseJobUntil(ctx context.Context, id, untilMS int64, next sql.NullInt64) error {
	return s.setJobFlag(ctx, id, true, msg.New(msg.RunSkippedPaused), func(tx *sqlx.Tx) (int64, error) {
		return s.q.JobPauseUntil(ctx, tx, jobPauseUntilParams{PauseUntil: untilMS, NextFireAt: next, ID: id})
	})
}

// ResumeDue resumes the jobs paused until nowMS or earlier and returns how
// many.
func (t *Tx) ResumeDue(ctx context.Context, nowMS int64) (int64, error) {
	n, err := t.s.q.JobsResumeDue(ctx, t.tx, nowMS)
	if err != nil {
		return 0, fmt.Errorf("resume jobs paused until now: %w", err)
	}
	return n, nil
}

// NextPauseEnd is the earliest pause_until of the jobs paused until an
// instant; NULL when there is none.
func (s *Store) NextPauseEnd(ctx context.Context) (sql.NullInt64, error) {
	v, err := s.q.JobNextPauseEnd(ctx, s.db)
	if err != nil {
		return v, fmt.Errorf("next pause end: %w", err)
	}
	return v, nil
}

// CompleteJob marks job id completed now with why (CompleteJobs, outside
// the leader: a job enabled or resumed with no firing left in its window).
func (s *Store) CompleteJob(ctx context.Context, id int64, why msg.Msg) error {
	if _, err := s.q.JobComplete(ctx, s.db, jobCompleteParams{CompletedMsg: why, ID: id}); err != nil {
		return fmt.Errorf("complete job %d: %w", id, err)
	}
	return nil
}
