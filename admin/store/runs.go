package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/shardjob/shardjob/admin/msg"
)

// NewRun is a firing to create.
type NewRun struct {
	JobID       int64
	App         string // the job's app; looked up by the insert when empty
	JobName     string // the job's name, kept by the run when the job is deleted; looked up when empty
	ScheduledAt int64  // Unix ms; with JobID the run key
	TriggerKind string
	Status      string // RunPending, or RunSkipped for a recorded skip
	Params      string
	SlotCount   int
	Reason      msg.Msg // why a run was skipped, for example
	ParentRunID int64   // for child runs: the parent run (at most one child run per parent)
	// Epoch, when not 0, is the epoch the run records instead of the one
	// given to InsertRuns: that of its job's partition when the partition's
	// owner fires it (docs/architecture.md, "Partitions").
	Epoch int64

	// The job's time zone and records policy when the run is created (see
	// Job); jobrules.NewRun copies them.
	TimeZone string
	RecordsPolicy
	// The job's deadlines as instants of this run (jobrules.RunDeadlines);
	// zero for none.
	Deadlines RunDeadlines
	// The calendar the firing was decided with (0 and "": none), and the
	// cron's instant of a firing the rule shift moved (0: not moved).
	CalendarID      int64
	CalendarVersion string
	ShiftedFrom     int64
	// StartAfter is the instant (Unix ms) before which the run does not
	// start (Run.StartAfter); 0 for none.
	StartAfter int64
	// BackfillID is the job backfill that creates the run (0: none): the
	// leader starts it in its turn (admin/scheduler, start_backfill.go).
	BackfillID int64
	// Workflow is the workflow context of a workflow node's run, the JSON
	// of a protocol.WorkflowContext that executors receive next to the
	// params (admin/workflowrun); "" for any other run.
	Workflow string
	// Priority is the run's priority when its trigger or backfill lowered
	// it below its job's (a protocol.Priority); NULL: its job's.
	Priority sql.NullInt64
}

func (r NewRun) parent() sql.NullInt64 {
	return sql.NullInt64{Int64: r.ParentRunID, Valid: r.ParentRunID > 0}
}

// insertArgs are the arguments of RunInsert for r.
func (r NewRun) insertParams(epoch int64) runInsertParams {
	return runInsertParams{
		JobID: r.JobID, ScheduledAt: r.ScheduledAt, TriggerKind: r.TriggerKind, Status: r.Status, Params: r.Params, SlotCount: r.SlotCount,
		Epoch: cmp.Or(r.Epoch, epoch), Error: truncate(r.Reason.String(), 2000), ErrorMsg: r.Reason, ParentRunID: r.parent(),
		TimeZone: cmp.Or(r.TimeZone, "UTC"), DedupScope: r.DedupScope, UncertainPolicy: r.UncertainPolicy, RecordMaxAttempts: r.RecordMaxAttempts,
		App: r.App, StartDeadlineAt: r.Deadlines.StartDeadlineAt, FinishDeadlineAt: r.Deadlines.FinishDeadlineAt,
		DeadlineAction: r.Deadlines.DeadlineAction, DeadlineCheckAt: r.Deadlines.DeadlineCheckAt,
		CalendarID: r.CalendarID, CalendarVersion: r.CalendarVersion, ShiftedFrom: sql.NullInt64{Int64: r.ShiftedFrom, Valid: r.ShiftedFrom != 0},
		StartAfter: r.StartAfter, BackfillID: r.BackfillID, Workflow: sql.NullString{String: r.Workflow, Valid: r.Workflow != ""},
		JobName: r.JobName, Priority: r.Priority,
	}
}

// withApps returns runs with App and JobName filled in from their jobs
// where either is empty (one query for all of them); runs whose job is gone
// keep "".
func (s *Store) withApps(ctx context.Context, db sqlx.ExtContext, runs []NewRun) ([]NewRun, error) {
	var ids []int64
	for _, r := range runs {
		if r.App == "" || r.JobName == "" {
			ids = append(ids, r.JobID)
		}
	}
	if len(ids) == 0 {
		return runs, nil
	}
	jobs := map[int64]JobKey{}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for start := 0; start < len(ids); start += 1000 {
		rows, err := s.q.JobApps(ctx, db, ids[start:min(start+1000, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("apps of %d jobs: %w", len(ids), err)
		}
		for _, r := range rows {
			jobs[r.ID] = r
		}
	}
	out := slices.Clone(runs)
	for i := range out {
		if out[i].App == "" {
			out[i].App = jobs[out[i].JobID].App
		}
		if out[i].JobName == "" {
			out[i].JobName = jobs[out[i].JobID].Name
		}
	}
	return out, nil
}

const runInsertBatch = 500

// InsertRuns inserts runs in multi-row statements, ignoring run keys that
// exist already, and returns how many were inserted. The unique run key
// (job_id, scheduled_at) makes a second insert of the same firing a no-op.
func (t *Tx) InsertRuns(ctx context.Context, epoch int64, runs []NewRun) (int64, error) {
	s, tx := t.s, t.tx
	runs, err := s.withApps(ctx, tx, runs)
	if err != nil {
		return 0, err
	}
	var inserted int64
	for start := 0; start < len(runs); start += runInsertBatch {
		end := min(start+runInsertBatch, len(runs))
		chunk := runs[start:end]
		ps := make([]runInsertParams, len(chunk))
		for i, r := range chunk {
			ps[i] = r.insertParams(epoch)
		}
		n, err := s.q.RunInsert(ctx, tx, ps)
		if err != nil {
			return inserted, fmt.Errorf("insert %d runs: %w", len(chunk), err)
		}
		inserted += n
	}
	return inserted, nil
}

// InsertRun inserts one run and returns it; an existing run key returns the
// existing run with created=false.
func (s *Store) InsertRun(ctx context.Context, epoch int64, r NewRun) (run Run, created bool, err error) {
	filled, err := s.withApps(ctx, s.db, []NewRun{r})
	if err != nil {
		return run, false, err
	}
	return s.insertRun(ctx, s.db, epoch, filled[0])
}

// Run returns a run or ErrNotFound.
func (s *Store) Run(ctx context.Context, id int64) (Run, error) {
	r, err := s.q.RunByID(ctx, s.db, id)
	if err != nil {
		return r, notFound(err, fmt.Sprintf("run %d", id))
	}
	return r, nil
}

// RunFilter selects runs for Runs. Zero fields do not filter.
type RunFilter struct {
	JobID    int64
	App      string
	Status   string
	Trigger  string // trigger kind (cron, manual, retry, ...)
	BeforeID int64  // keyset: the runs after run BeforeID in the list's order
	// BeforeAt, with BeforeID, is the cursor run's scheduled time: the
	// keyset needs no read of the cursor run (GET /runs?cursor=...).
	BeforeAt int64
	Limit    int
	Apps     []string // only runs of jobs of these apps (nil: every app)
	// FromMS and ToMS, when not 0, keep runs scheduled in [FromMS, ToMS).
	FromMS, ToMS int64
}

// Runs returns runs latest scheduled first (scheduled_at, then id,
// descending), a page after run BeforeID when set.
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]Run, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	w := runFilters(f)
	switch {
	case f.BeforeID > 0 && f.BeforeAt != 0:
		runKeyset(&w, f.BeforeAt, f.BeforeID)
	case f.BeforeID > 0:
		// Keyset on (scheduled_at, id): the runs after run BeforeID in
		// the list's order. A cursor run that is gone (retention) pages
		// by id alone.
		at, err := s.q.RunScheduledAt(ctx, s.db, f.BeforeID)
		switch {
		case err == nil:
			runKeyset(&w, at, f.BeforeID)
		case errors.Is(err, sql.ErrNoRows):
			w.add("r.id < ?", f.BeforeID)
		default:
			return nil, fmt.Errorf("list runs: the cursor run %d: %w", f.BeforeID, err)
		}
	}
	if f.Apps != nil && len(f.Apps) == 0 {
		return nil, nil
	}
	q, args := w.query(runListText(s.q.get(qRunList), f), f.Limit)
	var out []Run
	if err := s.db.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// runListText is RunList for f: the runs of one job (without a status, which
// idx_run_status answers) in the order of the unique key uk_run_key
// (job_id, scheduled_at): by job_id first, a constant that changes nothing
// in the order, and no id (a job's runs differ in scheduled_at; MariaDB does
// not order a unique key's entries by id), so that MariaDB reads that key
// rather than walk idx_run_sched_id past every other job's runs.
func runListText(text string, f RunFilter) string {
	if f.JobID > 0 && f.Status == "" {
		return strings.Replace(text, "ORDER BY r.scheduled_at DESC, r.id DESC", "ORDER BY r.job_id DESC, r.scheduled_at DESC", 1)
	}
	return text
}

// runKeyset adds the keyset of a run list: the runs after run id, scheduled
// at at, in the list's order (scheduled_at, id descending).
func runKeyset(w *filters, at, id int64) {
	// A range of scheduled_at (each list index has it after its filter
	// columns), the ties then by id: an OR of both would read from the
	// newest run on SQLite.
	w.add("r.scheduled_at <= ? AND (r.scheduled_at < ? OR r.id < ?)", at, at, id)
}

// runFilters are the conditions of f but its keyset. Each filter alone is
// a range of an index in the list's order: idx_run_sched_id, uk_run_key
// (job), idx_run_status (status), idx_run_app_sched (app),
// idx_run_trigger_sched (trigger kind).
func runFilters(f RunFilter) filters {
	var w filters
	if f.JobID > 0 {
		w.add("r.job_id = ?", f.JobID)
	}
	if f.App != "" {
		w.add("r.app = ?", f.App)
	}
	if f.Status != "" {
		w.add("r.status = ?", f.Status)
	}
	if f.Trigger != "" {
		w.add("r.trigger_kind = ?", f.Trigger)
	}
	if f.FromMS != 0 {
		w.add("r.scheduled_at >= ?", f.FromMS)
	}
	if f.ToMS != 0 {
		w.add("r.scheduled_at < ?", f.ToMS)
	}
	if len(f.Apps) > 0 {
		w.in("r.app", f.Apps)
	}
	return w
}

// CountRuns counts the runs f selects (its cursor aside) up to limit
// (DefaultListCountCap when 0): exact says the count is below the limit,
// otherwise there are more than n.
func (s *Store) CountRuns(ctx context.Context, f RunFilter, limit int) (n int64, exact bool, err error) {
	if f.Apps != nil && len(f.Apps) == 0 {
		return 0, true, nil
	}
	if limit <= 0 {
		limit = DefaultListCountCap
	}
	w := runFilters(f)
	text, args := w.query(s.q.get(qRunCountCapped), limit+1)
	if err := s.db.GetContext(ctx, &n, text, args...); err != nil {
		return 0, false, fmt.Errorf("count runs: %w", err)
	}
	if n > int64(limit) {
		return int64(limit), false, nil
	}
	return n, true, nil
}

// NextPendingAfter returns the earliest instant after nowMS at which a
// pending run becomes due: its scheduled time (runs created ahead of time by
// the pre-read window), its start_after (jittered runs) or its held_until
// (held runs: store.HoldPending).
func (s *Store) NextPendingAfter(ctx context.Context, nowMS int64) (sql.NullInt64, error) {
	v, err := s.q.RunNextPending(ctx, s.db, nowMS)
	if err != nil {
		return v, fmt.Errorf("next pending run: %w", err)
	}
	return v, nil
}

// RunningRunIDs returns the ids of up to limit running runs of a job, in no
// order: the start round's overlap check (it reads only those runs).
func (s *Store) RunningRunIDs(ctx context.Context, jobID int64, limit int) ([]int64, error) {
	ids, err := s.q.RunRunningIDsOfJob(ctx, s.db, runRunningIDsOfJobParams{JobID: jobID, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("running runs of job %d: %w", jobID, err)
	}
	return ids, nil
}

// HasActiveRun reports whether a job has a pending or running run.
func (s *Store) HasActiveRun(ctx context.Context, jobID int64) (bool, error) {
	n, err := s.q.RunActiveForJob(ctx, s.db, jobID)
	if err != nil {
		return false, fmt.Errorf("active runs of job %d: %w", jobID, err)
	}
	return n > 0, nil
}

// ActiveJobs returns which of jobIDs have a pending or running run.
func (t *Tx) ActiveJobs(ctx context.Context, jobIDs []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(jobIDs) == 0 {
		return out, nil
	}
	ids, err := t.s.q.RunActiveJobs(ctx, t.tx, jobIDs)
	if err != nil {
		return nil, fmt.Errorf("active runs of %d jobs: %w", len(jobIDs), err)
	}
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// RunTransition is one guarded change of a run's status (see
// admin/runstate, which decides them and their timestamps).
type RunTransition struct {
	ID       int64
	From, To string
	// StartedAt is kept when the run has one already; FinishedAt is set
	// as given (NULL: not finished).
	StartedAt, FinishedAt sql.NullInt64
	Reason                msg.Msg // why it ended (or waits); zero: none
}

// TransitionRun moves a run from t.From to t.To in an autocommit statement.
// It returns false if the run was not in t.From (someone else moved it
// first).
func (s *Store) TransitionRun(ctx context.Context, t RunTransition) (bool, error) {
	return s.transitionRun(ctx, s.db, t)
}

// TransitionRun is Store.TransitionRun inside the transaction.
func (t *Tx) TransitionRun(ctx context.Context, tr RunTransition) (bool, error) {
	return t.s.transitionRun(ctx, t.tx, tr)
}

func (s *Store) transitionRun(ctx context.Context, db sqlx.ExtContext, t RunTransition) (bool, error) {
	n, err := s.q.RunTransition(ctx, db, runTransitionParams{
		Status: t.To, StartedAt: t.StartedAt, FinishedAt: t.FinishedAt, Error: truncate(t.Reason.String(), 2000), ErrorMsg: t.Reason.Stored(),
		ID: t.ID, FromStatus: t.From,
	})
	if err != nil {
		return false, fmt.Errorf("run %d %s→%s: %w", t.ID, t.From, t.To, err)
	}
	return n == 1, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// RunCounts are a job's scheduled runs (cron, catch_up) that succeeded and
// that are still pending or running: what max_runs counts.
type RunCounts struct {
	JobID     int64 `db:"job_id"`
	Succeeded int   `db:"succeeded"`
	Active    int   `db:"active"`
}

// RunCountsForMaxRuns returns the RunCounts of jobIDs (jobs with max_runs),
// by job id; a job without scheduled runs is missing (zero counts).
func (t *Tx) RunCountsForMaxRuns(ctx context.Context, jobIDs []int64) (map[int64]RunCounts, error) {
	if len(jobIDs) == 0 {
		return nil, nil
	}
	rows, err := t.s.q.RunCountsForMaxRuns(ctx, t.tx, jobIDs)
	if err != nil {
		return nil, fmt.Errorf("run counts of %d jobs with max_runs: %w", len(jobIDs), err)
	}
	out := make(map[int64]RunCounts, len(rows))
	for _, r := range rows {
		out[r.JobID] = r
	}
	return out, nil
}
