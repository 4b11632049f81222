package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
)

// NewAttempt places one slot of a run on an executor.
type NewAttempt struct {
	Slot       int
	Attempt    int
	ExecutorID int64
}

// StartRun creates the first attempt of each slot and moves the run from
// pending to running, in one transaction guarded by the leader epoch. It
// returns false if the run was no longer pending. (StartRuns starts many.)
func (s *Store) StartRun(ctx context.Context, epoch int64, runID int64, leaseUntilMS int64, atts []NewAttempt) (bool, error) {
	started, err := s.StartRuns(ctx, epoch, leaseUntilMS, []RunStart{{RunID: runID, Attempts: atts}})
	return len(started) == 1, err
}

func (s *Store) txNow(ctx context.Context, tx *sqlx.Tx) (int64, error) {
	var now int64
	if err := tx.GetContext(ctx, &now, s.q.get("DBNow")); err != nil {
		return 0, fmt.Errorf("read database clock: %w", err)
	}
	return now, nil
}

// Attempts returns every attempt of a run, by slot then attempt.
func (s *Store) Attempts(ctx context.Context, runID int64) ([]Attempt, error) {
	var out []Attempt
	if err := s.db.SelectContext(ctx, &out, s.q.get("AttemptsOfRun"), runID); err != nil {
		return nil, fmt.Errorf("attempts of run %d: %w", runID, err)
	}
	return out, nil
}

// Attempt returns one attempt by token.
func (s *Store) Attempt(ctx context.Context, token int64) (Attempt, error) {
	var a Attempt
	if err := s.db.GetContext(ctx, &a, s.q.get("AttemptByID"), token); err != nil {
		return a, notFound(err, fmt.Sprintf("attempt %d", token))
	}
	return a, nil
}

// DispatchSlot is an attempt with what an executor needs to run it.
type DispatchSlot struct {
	Token       int64  `db:"token"`
	RunID       int64  `db:"run_id"`
	Slot        int    `db:"slot"`
	Attempt     int    `db:"attempt"`
	JobID       int64  `db:"job_id"`
	JobName     string `db:"job_name"`
	Handler     string `db:"handler"`
	ScheduledAt int64  `db:"scheduled_at"`
	Params      string `db:"params"`
	SlotCount   int    `db:"slot_count"`
	TimeoutMS   int64  `db:"timeout_ms"`
	SlotParams  string `db:"slot_params"`
	TimeZone    string `db:"time_zone"`
	// The job's records policy (see Job).
	DedupScope        string        `db:"dedup_scope"`
	UncertainPolicy   string        `db:"uncertain_policy"`
	RecordMaxAttempts int           `db:"record_max_attempts"`
	ExecutorID        sql.NullInt64 `db:"executor_id"`
	Failures          int           `db:"failures"`
}

// UnackedFor returns the current attempts placed on an executor that it has
// not acknowledged yet (delivered again in heartbeat responses).
func (s *Store) UnackedFor(ctx context.Context, executorID int64, limit int) ([]DispatchSlot, error) {
	var out []DispatchSlot
	if err := s.db.SelectContext(ctx, &out, s.q.get("DispatchUnacked"), executorID, limit); err != nil {
		return nil, fmt.Errorf("unacknowledged attempts of executor %d: %w", executorID, err)
	}
	return out, nil
}

// AckAttempts marks tokens as received by the executor (queued there,
// perhaps not started yet).
func (s *Store) AckAttempts(ctx context.Context, executorID int64, tokens []int64) error {
	return s.updateTokens(ctx, "AttemptAck", executorID, tokens)
}

// updateTokens runs a named "… executor_id = ? … id IN (?)" update over
// tokens in chunks (one statement per 1000 tokens).
func (s *Store) updateTokens(ctx context.Context, query string, executorID int64, tokens []int64) error {
	for start := 0; start < len(tokens); start += 1000 {
		chunk := tokens[start:min(start+1000, len(tokens))]
		q, args, err := sqlx.In(s.q.get(query), executorID, chunk)
		if err != nil {
			return err
		}
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("%s of %d tokens: %w", query, len(chunk), err)
		}
	}
	return nil
}

// MarkStarted records that the executor runs tokens (not only queued).
func (s *Store) MarkStarted(ctx context.Context, executorID int64, tokens []int64) error {
	return s.updateTokens(ctx, "AttemptStarted", executorID, tokens)
}

// ExecutorLoad is the work placed on an executor: active current attempts,
// of which queued are acknowledged but not started.
type ExecutorLoad struct {
	ExecutorID int64 `db:"executor_id"`
	Active     int   `db:"active"`
	Queued     int   `db:"queued"`
}

// Loads returns the load of every executor that has work.
func (s *Store) Loads(ctx context.Context) (map[int64]ExecutorLoad, error) {
	var rows []ExecutorLoad
	if err := s.db.SelectContext(ctx, &rows, s.q.get("ExecutorLoad")); err != nil {
		return nil, fmt.Errorf("executor loads: %w", err)
	}
	out := make(map[int64]ExecutorLoad, len(rows))
	for _, r := range rows {
		out[r.ExecutorID] = r
	}
	return out, nil
}

// QueuedOn returns up to limit attempts queued (acknowledged, not started)
// on an executor, newest first: the ones it would start last.
func (s *Store) QueuedOn(ctx context.Context, executorID int64, limit int) ([]Attempt, error) {
	var out []Attempt
	if err := s.db.SelectContext(ctx, &out, s.q.get("AttemptsQueuedOn"), executorID, limit); err != nil {
		return nil, fmt.Errorf("queued attempts of executor %d: %w", executorID, err)
	}
	return out, nil
}

// RenewLeases extends the lease of every current attempt of an executor to
// leaseMS after the database clock.
func (s *Store) RenewLeases(ctx context.Context, executorID, leaseMS int64) error {
	if _, err := s.db.ExecContext(ctx, s.q.get("AttemptRenewLease"), leaseMS, executorID); err != nil {
		return fmt.Errorf("renew leases of executor %d: %w", executorID, err)
	}
	return nil
}

// StaleTokens returns which of tokens, claimed as running by an executor,
// are not its current, unfinished attempts any more (superseded, finished,
// unknown, or another executor's): the executor must cancel them.
func (s *Store) StaleTokens(ctx context.Context, executorID int64, tokens []int64) ([]int64, error) {
	if len(tokens) == 0 {
		return nil, nil
	}
	q, args, err := sqlx.In(s.q.get("AttemptsLive"), executorID, tokens)
	if err != nil {
		return nil, err
	}
	var live []int64
	if err := s.db.SelectContext(ctx, &live, q, args...); err != nil {
		return nil, fmt.Errorf("live tokens of executor %d: %w", executorID, err)
	}
	ok := make(map[int64]bool, len(live))
	for _, t := range live {
		ok[t] = true
	}
	var stale []int64
	for _, t := range tokens {
		if !ok[t] {
			stale = append(stale, t)
		}
	}
	return stale, nil
}

// SlotOutcome is an executor's report of one attempt.
type SlotOutcome struct {
	Token      int64
	ExecutorID int64  // the reporting executor; a token of another executor is rejected
	Status     string // AttemptSucceeded, AttemptFailed or AttemptCancelled
	Error      string
	StartedAt  int64
	FinishedAt int64
	Processed  int64
	Skipped    int64
	Failed     int64
	Uncertain  int64
}

// FinishAttempt records an outcome if the token is still current and active,
// then finishes the run when no slot is active any more. accepted is false
// for stale or unknown tokens; their result is ignored.
func (s *Store) FinishAttempt(ctx context.Context, o SlotOutcome) (accepted bool, err error) {
	acc, err := s.FinishAttempts(ctx, []SlotOutcome{o})
	if err != nil {
		return false, err
	}
	return acc[0], nil
}

// maxResultsPerTx bounds the outcomes FinishAttempts applies in one
// transaction (long transactions hold row locks longer).
const maxResultsPerTx = 256

// FinishAttempts records a batch of outcomes (an executor's results request)
// like FinishAttempt, in one transaction per maxResultsPerTx outcomes: each
// touched run is settled once per transaction, not once per result.
// accepted[i] reports whether outcomes[i] was accepted.
func (s *Store) FinishAttempts(ctx context.Context, outcomes []SlotOutcome) (accepted []bool, err error) {
	accepted = make([]bool, len(outcomes))
	for start := 0; start < len(outcomes); start += maxResultsPerTx {
		end := min(start+maxResultsPerTx, len(outcomes))
		if err := s.finishBatch(ctx, outcomes[start:end], accepted[start:end]); err != nil {
			return nil, err
		}
	}
	return accepted, nil
}

func (s *Store) finishBatch(ctx context.Context, outcomes []SlotOutcome, accepted []bool) error {
	return s.Tx(ctx, func(tx *sqlx.Tx) error {
		clear(accepted)           // the transaction may be retried
		runs := map[int64]int64{} // run id → latest finish time among its results
		info, err := s.attemptsForStats(ctx, tx, outcomes)
		if err != nil {
			return err
		}
		for i, o := range outcomes {
			ok, runID, err := s.finishOne(ctx, tx, o, info[o.Token])
			if err != nil {
				return err
			}
			accepted[i] = ok
			if runID != 0 {
				runs[runID] = max(runs[runID], o.FinishedAt)
			}
		}
		ids := make([]int64, 0, len(runs))
		for id := range runs {
			ids = append(ids, id)
		}
		slices.Sort(ids) // lock runs in one order: concurrent batches do not deadlock
		for _, id := range ids {
			if err := s.settleRun(ctx, tx, id, runs[id]); err != nil {
				return err
			}
		}
		return nil
	})
}

// finishOne applies one outcome in tx. runID is set when the outcome changed
// the attempt (its run must be settled).
func (s *Store) finishOne(ctx context.Context, tx *sqlx.Tx, o SlotOutcome, info attemptStats) (accepted bool, runID int64, err error) {
	// The executor's start time, from the same clock as its finish time.
	started := sql.NullInt64{Int64: o.StartedAt, Valid: o.StartedAt > 0}
	res, err := tx.ExecContext(ctx, s.q.get("AttemptFinish"), o.Status, o.FinishedAt, started,
		o.Processed, o.Skipped, o.Failed, o.Uncertain, truncate(o.Error, 2000), o.Token, o.ExecutorID)
	if err != nil {
		return false, 0, fmt.Errorf("finish token %d: %w", o.Token, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// A result delivered again because its acknowledgement was lost
		// is accepted again: same token, same executor, same outcome.
		var prev struct {
			Status     string        `db:"status"`
			Current    bool          `db:"current"`
			ExecutorID sql.NullInt64 `db:"executor_id"`
		}
		err := tx.GetContext(ctx, &prev, `SELECT status, current, executor_id FROM slot_attempt WHERE id = ?`, o.Token)
		if errors.Is(err, sql.ErrNoRows) {
			return false, 0, nil
		}
		if err != nil {
			return false, 0, fmt.Errorf("look up token %d: %w", o.Token, err)
		}
		return prev.Current && prev.Status == o.Status && prev.ExecutorID.Int64 == o.ExecutorID, 0, nil
	}
	if info.RunID == 0 { // updated, so it exists: read within the transaction
		if err := tx.GetContext(ctx, &info, s.q.get("AttemptForStats")+" AND a.id = ?", o.Token); err != nil {
			return false, 0, fmt.Errorf("run of token %d: %w", o.Token, err)
		}
	}
	if o.Status == AttemptSucceeded {
		if err := s.recordStats(ctx, tx, o, info); err != nil {
			return false, 0, err
		}
	}
	job := sql.NullInt64{Int64: info.JobID, Valid: info.JobID > 0}
	run := sql.NullInt64{Int64: info.RunID, Valid: true}
	if o.Status == AttemptFailed && info.Failures >= info.RetryMax {
		if err := s.raiseInTx(ctx, tx, Alarm{
			Kind: AlarmSlotDead, Severity: "critical", JobID: job, RunID: run,
			DedupKey: fmt.Sprintf("slot_dead:%d", o.Token),
			Message: fmt.Sprintf("job %s run %d: slot %d failed on its last allowed attempt (%d failure(s), retry_max %d): %s",
				info.JobName, info.RunID, info.Slot, info.Failures+1, info.RetryMax, o.Error),
		}); err != nil {
			return false, 0, err
		}
	}
	if o.Uncertain > 0 {
		if err := s.raiseInTx(ctx, tx, Alarm{
			Kind: AlarmRecordsUncertain, Severity: "critical", JobID: job, RunID: run,
			DedupKey: fmt.Sprintf("records_uncertain:%d", o.Token),
			Message: fmt.Sprintf("job %s run %d slot %d: %d record(s) left pending by a crashed attempt were skipped (policy skip): their effect may or may not have happened; check them in the dedup table",
				info.JobName, info.RunID, info.Slot, o.Uncertain),
		}); err != nil {
			return false, 0, err
		}
	}
	return true, info.RunID, nil
}

// settleRun updates a run's counters and finishes it when no slot is active.
// It locks the run row first: two results of the same run committed at the
// same time would otherwise each count the other's slot as still active
// (READ COMMITTED), and neither would finish the run.
func (s *Store) settleRun(ctx context.Context, tx *sqlx.Tx, runID, atMS int64) error {
	var locked int64
	if err := tx.GetContext(ctx, &locked, s.q.get("RunLock"), runID); err != nil {
		return fmt.Errorf("lock run %d: %w", runID, err)
	}
	var c struct {
		Succeeded int `db:"succeeded"`
		Failed    int `db:"failed"`
		Active    int `db:"active"`
	}
	if err := tx.GetContext(ctx, &c, s.q.get("AttemptSlotCounts"), runID); err != nil {
		return fmt.Errorf("slot counts of run %d: %w", runID, err)
	}
	if _, err := tx.ExecContext(ctx, s.q.get("RunCountSlots"), c.Succeeded, c.Failed, runID); err != nil {
		return fmt.Errorf("update counters of run %d: %w", runID, err)
	}
	if c.Active > 0 {
		return nil
	}
	to := RunSucceeded
	errText := ""
	switch {
	case c.Failed > 0 && c.Succeeded == 0:
		to, errText = RunFailed, fmt.Sprintf("%d slot(s) failed", c.Failed)
	case c.Failed > 0:
		to, errText = RunPartiallyFailed, fmt.Sprintf("%d of %d slot(s) failed", c.Failed, c.Failed+c.Succeeded)
	}
	ok, err := s.TransitionRun(ctx, tx, runID, RunRunning, to, atMS, errText)
	if err != nil || !ok {
		return err
	}
	if to != RunSucceeded {
		var jobID int64
		if err := tx.GetContext(ctx, &jobID, `SELECT job_id FROM job_run WHERE id = ?`, runID); err != nil {
			return fmt.Errorf("job of run %d: %w", runID, err)
		}
		return s.raiseInTx(ctx, tx, Alarm{
			Kind: AlarmRunFailed, Severity: "critical", JobID: sql.NullInt64{Int64: jobID, Valid: true}, RunID: sql.NullInt64{Int64: runID, Valid: true},
			DedupKey: fmt.Sprintf("run_failed:%d:%d", runID, atMS),
			Message:  fmt.Sprintf("run %d %s: %s", runID, strings.ReplaceAll(to, "_", " "), errText),
		})
	}
	return s.triggerChildren(ctx, tx, runID, atMS)
}

// triggerChildren creates one pending run of each child job of the run's
// job, in the transaction that finished the parent. The unique key
// (job_id, parent_run_id) makes a parent trigger each child at most once.
func (s *Store) triggerChildren(ctx context.Context, tx *sqlx.Tx, parentRunID, atMS int64) error {
	var parent struct {
		JobID    int64  `db:"job_id"`
		Children string `db:"child_job_ids"`
		Epoch    int64  `db:"epoch"`
	}
	err := tx.GetContext(ctx, &parent, `SELECT r.job_id, j.child_job_ids, r.epoch FROM job_run r JOIN job j ON j.id = r.job_id WHERE r.id = ?`, parentRunID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("children of run %d: %w", parentRunID, err)
	}
	for _, child := range ParseIDList(parent.Children) {
		var c struct {
			SlotCount         int    `db:"slot_count"`
			Params            string `db:"params"`
			Enabled           bool   `db:"enabled"`
			TimeZone          string `db:"time_zone"`
			DedupScope        string `db:"dedup_scope"`
			UncertainPolicy   string `db:"uncertain_policy"`
			RecordMaxAttempts int    `db:"record_max_attempts"`
		}
		err := tx.GetContext(ctx, &c, `SELECT slot_count, params, enabled, time_zone, dedup_scope, uncertain_policy, record_max_attempts FROM job WHERE id = ?`, child)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !c.Enabled) {
			continue // deleted or disabled child: nothing to trigger
		}
		if err != nil {
			return fmt.Errorf("child job %d: %w", child, err)
		}
		// The run key (job_id, scheduled_at) must not collide with the
		// child's own cron firings: try the next millisecond if it does.
		for at := atMS; at < atMS+100; at++ {
			var exists int
			if err := tx.GetContext(ctx, &exists, `SELECT COUNT(*) FROM job_run WHERE job_id = ? AND parent_run_id = ?`, child, parentRunID); err != nil {
				return fmt.Errorf("child run of %d: %w", parentRunID, err)
			}
			if exists > 0 {
				break
			}
			nr := NewRun{JobID: child, ScheduledAt: at, TriggerKind: TriggerChild, Status: RunPending, Params: c.Params,
				SlotCount: c.SlotCount, ParentRunID: parentRunID, TimeZone: c.TimeZone, DedupScope: c.DedupScope,
				UncertainPolicy: c.UncertainPolicy, RecordMaxAttempts: c.RecordMaxAttempts}
			_, err := tx.ExecContext(ctx, s.q.get("RunInsert"), nr.insertArgs(parent.Epoch)...)
			if err != nil {
				return fmt.Errorf("trigger child job %d of run %d: %w", child, parentRunID, err)
			}
		}
	}
	return nil
}

// ActiveToken is an unfinished attempt and where its executor listens.
type ActiveToken struct {
	Token   int64  `db:"token"`
	Address string `db:"address"`
}

// CancelRun moves a pending or running run to cancelled and cancels its
// unfinished attempts (their executors are told by push and in their next
// heartbeat response). It returns the attempts to stop and whether the run
// was cancelled by this call.
func (s *Store) CancelRun(ctx context.Context, runID int64, reason string) ([]ActiveToken, bool, error) {
	var active []ActiveToken
	cancelled := false
	err := s.Tx(ctx, func(tx *sqlx.Tx) error {
		now, err := s.txNow(ctx, tx)
		if err != nil {
			return err
		}
		for _, from := range []string{RunPending, RunRunning} {
			ok, err := s.TransitionRun(ctx, tx, runID, from, RunCancelled, now, reason)
			if err != nil {
				return err
			}
			if ok {
				cancelled = true
				break
			}
		}
		if !cancelled {
			return nil
		}
		if err := tx.SelectContext(ctx, &active, s.q.get("AttemptsActiveOfRun"), runID); err != nil {
			return fmt.Errorf("active attempts of run %d: %w", runID, err)
		}
		_, err = tx.ExecContext(ctx, s.q.get("AttemptsCancelRun"), truncate(reason, 2000), runID)
		return err
	})
	return active, cancelled, err
}

// LostAttempts returns current, unfinished attempts whose executor is lost.
func (s *Store) LostAttempts(ctx context.Context, limit int) ([]Attempt, error) {
	var out []Attempt
	if err := s.db.SelectContext(ctx, &out, s.q.get("AttemptsOfLostExecutors"), limit); err != nil {
		return nil, fmt.Errorf("attempts of lost executors: %w", err)
	}
	return out, nil
}

// Reassign supersedes an attempt and creates the next attempt of the same
// slot on another executor, guarded by the leader epoch. The new attempt has
// a larger token. It returns the new token, or 0 if the old attempt was no
// longer current and active.
func (s *Store) Reassign(ctx context.Context, epoch int64, old Attempt, executorID, leaseUntilMS int64) (int64, error) {
	return s.move(ctx, epoch, old, executorID, leaseUntilMS, AttemptLost)
}

// Steal moves an attempt that has not started to another executor: like
// Reassign, the old attempt is superseded (status moved) and the new one
// has a larger token.
func (s *Store) Steal(ctx context.Context, epoch int64, old Attempt, executorID, leaseUntilMS int64) (int64, error) {
	return s.move(ctx, epoch, old, executorID, leaseUntilMS, AttemptMoved)
}

func (s *Store) move(ctx context.Context, epoch int64, old Attempt, executorID, leaseUntilMS int64, oldStatus string) (int64, error) {
	var token int64
	err := s.Tx(ctx, func(tx *sqlx.Tx) error {
		if err := s.CheckEpoch(ctx, tx, epoch); err != nil {
			return err
		}
		token = 0
		res, err := tx.ExecContext(ctx, s.q.get("AttemptSupersede"), oldStatus, old.ID)
		if err != nil {
			return fmt.Errorf("supersede token %d: %w", old.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		res, err = tx.ExecContext(ctx, s.q.get("AttemptInsertMoved"), old.RunID, old.Slot, old.Attempt+1, old.Failures, executorID, leaseUntilMS)
		if err != nil {
			return fmt.Errorf("reassign slot %d of run %d: %w", old.Slot, old.RunID, err)
		}
		token, err = res.LastInsertId()
		return err
	})
	return token, err
}
