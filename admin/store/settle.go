package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// The data access of finishing attempts and settling runs, in the order
// admin/runstate calls it inside one transaction: LockAttempts,
// AttemptInfos, ApplyOutcomes, RecordSlotStats, LockRuns, RunSlotCounts,
// SettleRuns, ChildJob and InsertChildRun, RaiseAlarms. What is accepted,
// how a run ends, which alarms and which child runs: runstate decides.

// SlotOutcome is an executor's report of one attempt: the result as the
// executor protocol carries it, and who reported it.
type SlotOutcome struct {
	protocol.SlotResult
	// ExecutorID is the reporting executor; a token of another executor is
	// rejected.
	ExecutorID int64
	// Reason is why the admin ended the attempt (no acknowledgement, an
	// XXL-JOB refusal…): when set, it is the attempt's error instead of
	// SlotResult.Error, which holds a handler's own text.
	Reason msg.Msg
}

// Class is the error class the attempt records: ” when it succeeded,
// protocol.ClassCancelled when it was cancelled, otherwise the class the
// reporter gave (permanent, retryable, timeout, lost, cancelled), with
// none or one the admin does not know taken as protocol.ClassRetryable (an
// executor older than error classes keeps today's retries).
func (o SlotOutcome) Class() string {
	switch o.Status {
	case AttemptSucceeded, AttemptAssigned, AttemptRunning:
		return ""
	case AttemptCancelled:
		return protocol.ClassCancelled
	}
	switch o.ErrorClass {
	case protocol.ClassPermanent, protocol.ClassTimeout, protocol.ClassLost, protocol.ClassCancelled:
		return o.ErrorClass
	}
	return protocol.ClassRetryable
}

// RetryAfter is the delay before a retry that the failed attempt asked for,
// capped at protocol.MaxRetryAfter; NULL when it asked for none.
func (o SlotOutcome) RetryAfter() sql.NullInt64 {
	if o.Status != AttemptFailed || o.RetryAfterMS <= 0 {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: min(o.RetryAfterMS, protocol.MaxRetryAfter.Milliseconds()), Valid: true}
}

// ErrorText is the attempt's error in English: Reason's when set.
func (o SlotOutcome) ErrorText() string {
	if !o.Reason.IsZero() {
		return o.Reason.String()
	}
	return o.Error
}

// AttemptState is what deciding on a result needs to know about its
// attempt, read under the attempt's lock.
type AttemptState struct {
	Token      int64         `db:"id"`
	RunID      int64         `db:"run_id"`
	Status     string        `db:"status"`
	Current    bool          `db:"current"`
	ExecutorID sql.NullInt64 `db:"executor_id"`
}

// LockAttempts locks the attempts of tokens (sorted) in id order and returns
// them by id; unknown tokens are absent.
func (t *Tx) LockAttempts(ctx context.Context, tokens []int64) (map[int64]AttemptState, error) {
	rows, err := t.s.q.AttemptsLockForFinish(ctx, t.tx, tokens)
	if err != nil {
		return nil, fmt.Errorf("lock %d attempts: %w", len(tokens), err)
	}
	out := make(map[int64]AttemptState, len(rows))
	for _, r := range rows {
		out[r.Token] = r
	}
	return out, nil
}

// ApplyOutcomes writes accepted outcomes (distinct tokens, locked and
// checked) to their attempts, in id order.
func (t *Tx) ApplyOutcomes(ctx context.Context, applied []SlotOutcome) error {
	sorted := slices.SortedFunc(slices.Values(applied), func(a, b SlotOutcome) int { return cmp.Compare(a.Token, b.Token) })
	ids := make([]int64, len(sorted))
	cols := make([][]any, 12) // as in AttemptsFinish
	for c := range cols {
		cols[c] = make([]any, len(sorted))
	}
	for r, o := range sorted {
		ids[r] = o.Token
		// The executor's start time, from the same clock as its finish time.
		started := sql.NullInt64{Int64: o.StartedAt, Valid: o.StartedAt > 0}
		// Only a succeeded slot keeps its handler's result (executorsvc
		// checked it: JSON, at most protocol.MaxResultBytes).
		result := sql.NullString{String: string(o.Result), Valid: o.Status == AttemptSucceeded && len(o.Result) > 0}
		for c, v := range []any{o.Status, o.FinishedAt, started, o.Processed, o.Skipped, o.Failed, o.Uncertain, truncate(o.ErrorText(), 2000), o.Reason.Stored(), result, o.Class(), o.RetryAfter()} {
			cols[c][r] = v
		}
	}
	n, err := t.s.execByKey(ctx, t.tx, qAttemptsFinish, "id", ids, cols...)
	if err != nil {
		return fmt.Errorf("finish %d attempts: %w", len(ids), err)
	}
	if n != int64(len(ids)) {
		return fmt.Errorf("finish %d attempts: %d matched, although they were locked and checked", len(ids), n)
	}
	return nil
}

// LockedRun is a run of a results batch, locked, with the database clock.
type LockedRun struct {
	ID     int64  `db:"id"`
	JobID  int64  `db:"job_id"`
	App    string `db:"app"`
	Status string `db:"status"`
	Epoch  int64  `db:"epoch"`
	Now    int64  `db:"db_now"` // the database clock when locked
}

// LockRuns locks the runs of runIDs (sorted) in id order: two batches of
// the same run committed at the same time would otherwise each count the
// other's slot as still active (READ COMMITTED), and neither would finish
// the run. Unknown ids are absent.
func (t *Tx) LockRuns(ctx context.Context, runIDs []int64) ([]LockedRun, error) {
	locked, err := t.s.q.RunsLock(ctx, t.tx, runIDs)
	if err != nil {
		return nil, fmt.Errorf("lock %d runs: %w", len(runIDs), err)
	}
	return locked, nil
}

// SlotCounts counts the current attempts of a run by outcome (see
// RunsSlotCounts: a failed attempt that its job retries counts as active),
// with its job's child jobs.
type SlotCounts struct {
	RunID     int64  `db:"run_id"`
	Succeeded int    `db:"succeeded"`
	Failed    int    `db:"failed"`
	Active    int    `db:"active"`
	Children  string `db:"child_job_ids"`
	// The run's job's max_runs (0: none or no job) and the run's trigger:
	// a scheduled run that succeeds may complete its job.
	MaxRuns     int    `db:"max_runs"`
	TriggerKind string `db:"trigger_kind"`
}

// JobMaxRuns is a job with max_runs, not completed, and its scheduled runs
// that succeeded.
type JobMaxRuns struct {
	ID        int64 `db:"id"`
	MaxRuns   int   `db:"max_runs"`
	Succeeded int   `db:"succeeded"`
}

// JobsMaxRuns returns, of jobIDs, the jobs with max_runs that are not
// completed, with their succeeded scheduled runs.
func (t *Tx) JobsMaxRuns(ctx context.Context, jobIDs []int64) ([]JobMaxRuns, error) {
	return t.s.q.JobsMaxRunsReached(ctx, t.tx, jobIDs)
}

// CompleteJobIfOpen marks job id completed now with why, unless it is
// completed already (then it changes nothing).
func (t *Tx) CompleteJobIfOpen(ctx context.Context, id int64, why msg.Msg) error {
	if _, err := t.s.q.JobCompleteIfOpen(ctx, t.tx, jobCompleteIfOpenParams{CompletedMsg: why.Stored(), ID: id}); err != nil {
		return fmt.Errorf("complete job %d: %w", id, err)
	}
	return nil
}

// RunSlotCounts returns the slot counts of runIDs by run, in one grouped
// query; a run without current attempts is absent.
func (t *Tx) RunSlotCounts(ctx context.Context, runIDs []int64) (map[int64]SlotCounts, error) {
	rows, err := t.s.q.RunsSlotCounts(ctx, t.tx, runIDs)
	if err != nil {
		return nil, fmt.Errorf("slot counts of %d runs: %w", len(runIDs), err)
	}
	counts := make(map[int64]SlotCounts, len(rows))
	for _, c := range rows {
		counts[c.RunID] = c
	}
	return counts, nil
}

// RunSettlement is what settling writes to one run: its slot counters,
// and when it ends (To set) its status, error and finish time.
type RunSettlement struct {
	ID                int64
	Succeeded, Failed int
	To                string  // RunSucceeded, RunFailed, RunPartiallyFailed; "": the run goes on
	Reason            msg.Msg // why it ended, when it did not succeed
	FinishedAt        int64
}

// SettleRuns writes settlements (sorted by id) in one "set by key" update.
func (t *Tx) SettleRuns(ctx context.Context, rows []RunSettlement) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]int64, len(rows))
	cols := make([][]any, 6) // slots_succeeded, slots_failed, finished_at, error, error_msg, status
	for c := range cols {
		cols[c] = make([]any, len(rows))
	}
	for r, x := range rows {
		ids[r] = x.ID
		cols[0][r], cols[1][r] = x.Succeeded, x.Failed
		cols[2][r], cols[3][r], cols[4][r], cols[5][r] = sql.NullInt64{}, sql.NullString{}, sql.NullString{}, sql.NullString{}
		if x.To != "" {
			cols[2][r], cols[3][r], cols[4][r], cols[5][r] = x.FinishedAt, truncate(x.Reason.String(), 2000), x.Reason.Stored(), x.To
		}
	}
	if _, err := t.s.execByKey(ctx, t.tx, qRunsSettle, "id", ids, cols...); err != nil {
		return fmt.Errorf("settle %d runs: %w", len(ids), err)
	}
	return nil
}

// ChildJob is what a child run copies from its job.
type ChildJob struct {
	ID        int64  `db:"-"`
	App       string `db:"app"`
	Name      string `db:"name"`
	SlotCount int    `db:"slot_count"`
	Params    string `db:"params"`
	Enabled   bool   `db:"enabled"`
	TimeZone  string `db:"time_zone"`
	RecordsPolicy
	JobDeadlines
}

// ChildJob reads a child job; found is false when it was deleted.
func (t *Tx) ChildJob(ctx context.Context, id int64) (job ChildJob, found bool, err error) {
	job, err = t.s.q.JobForChildRun(ctx, t.tx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return job, false, nil
	}
	if err != nil {
		return job, false, fmt.Errorf("child job %d: %w", id, err)
	}
	job.ID = id
	return job, true, nil
}

// InsertChildRun inserts r, a child run of run r.ParentRunID, unless the
// parent has a run of that job already (the unique key (job_id,
// parent_run_id): a parent triggers each child at most once). The run key
// (job_id, scheduled_at) must not collide with the child's own cron
// firings: when it does, the next millisecond is tried (up to 100).
func (t *Tx) InsertChildRun(ctx context.Context, epoch int64, r NewRun) error {
	atMS := r.ScheduledAt
	for at := atMS; at < atMS+100; at++ {
		exists, err := t.s.q.RunCountOfParent(ctx, t.tx, runCountOfParentParams{JobID: r.JobID, ParentRunID: r.ParentRunID})
		if err != nil {
			return fmt.Errorf("child run of %d: %w", r.ParentRunID, err)
		}
		if exists > 0 {
			break
		}
		r.ScheduledAt = at
		if _, err := t.s.q.RunInsert(ctx, t.tx, []runInsertParams{r.insertParams(epoch)}); err != nil {
			return fmt.Errorf("trigger child job %d of run %d: %w", r.JobID, r.ParentRunID, err)
		}
	}
	return nil
}

// RaiseAlarms records alarms inside the transaction (with the change that
// causes them), in one statement, except those whose dedup key exists.
func (t *Tx) RaiseAlarms(ctx context.Context, alarms ...Alarm) error {
	return t.s.raiseInTx(ctx, t.tx, alarms...)
}

// ActiveAttemptsOfRun returns the run's unfinished current attempts and
// where their executors listen.
func (t *Tx) ActiveAttemptsOfRun(ctx context.Context, runID int64) ([]ActiveToken, error) {
	active, err := t.s.q.AttemptsActiveOfRun(ctx, t.tx, runID)
	if err != nil {
		return nil, fmt.Errorf("active attempts of run %d: %w", runID, err)
	}
	return active, nil
}

// CancelAttemptsOfRun cancels the run's unfinished current attempts, with
// reason as their error.
func (t *Tx) CancelAttemptsOfRun(ctx context.Context, runID int64, reason msg.Msg) error {
	if _, err := t.s.q.AttemptsCancelRun(ctx, t.tx, attemptsCancelRunParams{Error: truncate(reason.String(), 2000), ErrorMsg: reason.Stored(), RunID: runID}); err != nil {
		return fmt.Errorf("cancel attempts of run %d: %w", runID, err)
	}
	return nil
}
