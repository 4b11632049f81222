package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
func (s *Store) StartRun(ctx context.Context, epoch int64, runID int64, lease time.Duration, atts []NewAttempt) (bool, error) {
	started, err := s.StartRuns(ctx, epoch, lease, []RunStart{{RunID: runID, Attempts: atts}})
	return len(started) == 1, err
}

func (s *Store) txNow(ctx context.Context, tx *sqlx.Tx) (int64, error) {
	var now int64
	if err := tx.GetContext(ctx, &now, s.q.get(qDBNow)); err != nil {
		return 0, fmt.Errorf("read database clock: %w", err)
	}
	return now, nil
}

// Attempts returns every attempt of a run, by slot then attempt.
func (s *Store) Attempts(ctx context.Context, runID int64) ([]Attempt, error) {
	var out []Attempt
	if err := s.db.SelectContext(ctx, &out, s.q.get(qAttemptsOfRun), runID); err != nil {
		return nil, fmt.Errorf("attempts of run %d: %w", runID, err)
	}
	return out, nil
}

// Attempt returns one attempt by token.
func (s *Store) Attempt(ctx context.Context, token int64) (Attempt, error) {
	var a Attempt
	if err := s.db.GetContext(ctx, &a, s.q.get(qAttemptByID), token); err != nil {
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
	if err := s.db.SelectContext(ctx, &out, s.q.get(qDispatchUnacked), executorID, limit); err != nil {
		return nil, fmt.Errorf("unacknowledged attempts of executor %d: %w", executorID, err)
	}
	return out, nil
}

// AckAttempts marks tokens as received by the executor (queued there,
// perhaps not started yet).
func (s *Store) AckAttempts(ctx context.Context, executorID int64, tokens []int64) error {
	return s.RecordAccepted(ctx, executorID, tokens, nil, 0)
}

// RecordAccepted records what an executor process reports it accepted in
// its batch acceptSeq or earlier (0: it does not number its batches):
// queued tokens as acknowledged, started ones as running. The first
// acknowledgement of a token fixes its accept_seq for Reconcile.
func (s *Store) RecordAccepted(ctx context.Context, executorID int64, queued, started []int64, acceptSeq int64) error {
	if err := s.updateTokens(ctx, qAttemptAck, queued, acceptSeq, executorID); err != nil {
		return err
	}
	return s.updateTokens(ctx, qAttemptStarted, started, acceptSeq, executorID)
}

// updateTokens runs a named "… id IN (?)" update of slot attempts (or of
// runs) over tokens (ids), args first, in autocommit statements of up to 1000 tokens in
// token order, each retried on a deadlock (see Store.exec).
func (s *Store) updateTokens(ctx context.Context, query query, tokens []int64, args ...any) error {
	tokens = slices.Sorted(slices.Values(tokens))
	for start := 0; start < len(tokens); start += 1000 {
		chunk := tokens[start:min(start+1000, len(tokens))]
		q, qargs, err := sqlx.In(s.q.get(query), append(slices.Clip(args), chunk)...)
		if err != nil {
			return err
		}
		if _, err := s.exec(ctx, q, qargs...); err != nil {
			return fmt.Errorf("%s of %d tokens: %w", query, len(chunk), err)
		}
	}
	return nil
}

// MarkStarted records that the executor runs tokens (not only queued).
func (s *Store) MarkStarted(ctx context.Context, executorID int64, tokens []int64) error {
	return s.RecordAccepted(ctx, executorID, nil, tokens, 0)
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
	if err := s.db.SelectContext(ctx, &rows, s.q.get(qExecutorLoad)); err != nil {
		return nil, fmt.Errorf("executor loads: %w", err)
	}
	out := make(map[int64]ExecutorLoad, len(rows))
	for _, r := range rows {
		out[r.ExecutorID] = r
	}
	return out, nil
}

// QueuedAttempt is an attempt queued on an executor, with its job's
// handler.
type QueuedAttempt struct {
	Attempt
	Handler string `db:"handler"`
}

// QueuedOn returns up to limit attempts queued (acknowledged, not started)
// on an executor, newest first: the ones it would start last.
func (s *Store) QueuedOn(ctx context.Context, executorID int64, limit int) ([]QueuedAttempt, error) {
	var out []QueuedAttempt
	if err := s.db.SelectContext(ctx, &out, s.q.get(qAttemptsQueuedOn), executorID, limit); err != nil {
		return nil, fmt.Errorf("queued attempts of executor %d: %w", executorID, err)
	}
	return out, nil
}

// StaleTokens returns which of tokens, claimed as running by an executor,
// are not its current, unfinished attempts any more (superseded, finished,
// unknown, or another executor's): the executor must cancel them.
func (s *Store) StaleTokens(ctx context.Context, executorID int64, tokens []int64) ([]int64, error) {
	if len(tokens) == 0 {
		return nil, nil
	}
	q, args, err := sqlx.In(s.q.get(qAttemptsLive), executorID, tokens)
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
	tokens := make([]int64, len(outcomes))
	for i, o := range outcomes {
		tokens[i] = o.Token
	}
	slices.Sort(tokens)
	tokens = slices.Compact(tokens)
	return s.Tx(ctx, func(tx *sqlx.Tx) error {
		clear(accepted) // the transaction may be retried
		cur, err := s.lockAttempts(ctx, tx, tokens)
		if err != nil || len(cur) == 0 {
			return err
		}
		info, err := s.attemptsForStats(ctx, tx, tokens)
		if err != nil {
			return err
		}
		var applied []SlotOutcome
		appliedAt := map[int64]int{} // token → index in applied
		for i, o := range outcomes {
			a, ok := cur[o.Token]
			switch {
			case !ok: // unknown token
			case a.Current && (a.Status == AttemptAssigned || a.Status == AttemptRunning) && a.ExecutorID.Valid && a.ExecutorID.Int64 == o.ExecutorID:
				if _, ok := info[o.Token]; !ok {
					return fmt.Errorf("run of token %d: %w", o.Token, ErrNotFound)
				}
				accepted[i] = true
				if k, ok := appliedAt[o.Token]; ok { // applied before in this batch, as an active status
					applied[k] = o
				} else {
					appliedAt[o.Token] = len(applied)
					applied = append(applied, o)
				}
				a.Status = o.Status
				cur[o.Token] = a
			default:
				// A result delivered again because its acknowledgement was
				// lost is accepted again: same token, same executor, same
				// outcome. Anything else is stale.
				accepted[i] = a.Current && a.Status == o.Status && a.ExecutorID.Int64 == o.ExecutorID
			}
		}
		if len(applied) == 0 {
			return nil
		}
		if err := s.applyOutcomes(ctx, tx, applied); err != nil {
			return err
		}
		if err := s.recordStats(ctx, tx, applied, info); err != nil {
			return err
		}
		alarms := slotAlarms(applied, info)
		runIDs := make([]int64, 0, len(applied))
		for _, o := range applied {
			runIDs = append(runIDs, info[o.Token].RunID)
		}
		slices.Sort(runIDs) // lock runs in one order: concurrent batches do not deadlock
		runIDs = slices.Compact(runIDs)
		runAlarms, err := s.settleRuns(ctx, tx, runIDs)
		if err != nil {
			return err
		}
		return s.raiseInTx(ctx, tx, append(alarms, runAlarms...)...)
	})
}

// attemptState is what deciding on a result needs to know about its
// attempt, read under the attempt's lock.
type attemptState struct {
	ID         int64         `db:"id"`
	RunID      int64         `db:"run_id"`
	Status     string        `db:"status"`
	Current    bool          `db:"current"`
	ExecutorID sql.NullInt64 `db:"executor_id"`
}

// lockAttempts locks the attempts of tokens (sorted) in id order and returns
// them by id; unknown tokens are absent.
func (s *Store) lockAttempts(ctx context.Context, tx *sqlx.Tx, tokens []int64) (map[int64]attemptState, error) {
	q, args, err := sqlx.In(s.q.get(qAttemptsLockForFinish), tokens)
	if err != nil {
		return nil, err
	}
	var rows []attemptState
	if err := tx.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("lock %d attempts: %w", len(tokens), err)
	}
	out := make(map[int64]attemptState, len(rows))
	for _, r := range rows {
		out[r.ID] = r
	}
	return out, nil
}

// applyOutcomes writes accepted outcomes (distinct tokens, locked and
// checked) to their attempts, in id order.
func (s *Store) applyOutcomes(ctx context.Context, tx *sqlx.Tx, applied []SlotOutcome) error {
	sorted := slices.SortedFunc(slices.Values(applied), func(a, b SlotOutcome) int { return cmp.Compare(a.Token, b.Token) })
	ids := make([]int64, len(sorted))
	cols := make([][]any, 8) // as in AttemptsFinish
	for c := range cols {
		cols[c] = make([]any, len(sorted))
	}
	for r, o := range sorted {
		ids[r] = o.Token
		// The executor's start time, from the same clock as its finish time.
		started := sql.NullInt64{Int64: o.StartedAt, Valid: o.StartedAt > 0}
		for c, v := range []any{o.Status, o.FinishedAt, started, o.Processed, o.Skipped, o.Failed, o.Uncertain, truncate(o.Error, 2000)} {
			cols[c][r] = v
		}
	}
	n, err := s.execByKey(ctx, tx, qAttemptsFinish, "id", ids, cols...)
	if err != nil {
		return fmt.Errorf("finish %d attempts: %w", len(ids), err)
	}
	if n != int64(len(ids)) {
		return fmt.Errorf("finish %d attempts: %d matched, although they were locked and checked", len(ids), n)
	}
	return nil
}

// slotAlarms are the alarms applied outcomes raise: slot_dead for a failure
// on the slot's last allowed attempt, records_uncertain for skipped
// uncertain records.
func slotAlarms(applied []SlotOutcome, info map[int64]attemptStats) []Alarm {
	var out []Alarm
	for _, o := range applied {
		a := info[o.Token]
		job := sql.NullInt64{Int64: a.JobID, Valid: a.JobID > 0}
		run := sql.NullInt64{Int64: a.RunID, Valid: true}
		if o.Status == AttemptFailed && a.Failures >= a.RetryMax {
			out = append(out, Alarm{
				Kind: AlarmSlotDead, Severity: "critical", JobID: job, RunID: run, App: a.App,
				DedupKey: fmt.Sprintf("slot_dead:%d", o.Token),
				Message: fmt.Sprintf("job %s run %d: slot %d failed on its last allowed attempt (%d failure(s), retry_max %d): %s",
					a.JobName, a.RunID, a.Slot, a.Failures+1, a.RetryMax, o.Error),
			})
		}
		if o.Uncertain > 0 {
			out = append(out, Alarm{
				Kind: AlarmRecordsUncertain, Severity: "critical", JobID: job, RunID: run, App: a.App,
				DedupKey: fmt.Sprintf("records_uncertain:%d", o.Token),
				Message: fmt.Sprintf("job %s run %d slot %d: %d record(s) left pending by a crashed attempt were skipped (policy skip): their effect may or may not have happened; check them in the dedup table",
					a.JobName, a.RunID, a.Slot, o.Uncertain),
			})
		}
	}
	return out
}

// settleRuns updates the counters of runs (sorted ids) and finishes those
// with no active slot, in a constant number of statements, and returns the
// run_failed alarms to raise. It locks the runs first: two batches of the
// same run committed at the same time would otherwise each count the
// other's slot as still active (READ COMMITTED), and neither would finish
// the run. A run ends only from running; its finished_at is the database
// clock when it is settled.
func (s *Store) settleRuns(ctx context.Context, tx *sqlx.Tx, runIDs []int64) ([]Alarm, error) {
	var locked []struct {
		ID     int64  `db:"id"`
		JobID  int64  `db:"job_id"`
		App    string `db:"app"`
		Status string `db:"status"`
		Epoch  int64  `db:"epoch"`
		Now    int64  `db:"db_now"`
	}
	q, args, err := sqlx.In(s.q.get(qRunsLock), runIDs)
	if err != nil {
		return nil, err
	}
	if err := tx.SelectContext(ctx, &locked, q, args...); err != nil {
		return nil, fmt.Errorf("lock %d runs: %w", len(runIDs), err)
	}
	if len(locked) == 0 {
		return nil, nil
	}
	type slotCounts struct {
		RunID     int64  `db:"run_id"`
		Succeeded int    `db:"succeeded"`
		Failed    int    `db:"failed"`
		Active    int    `db:"active"`
		Children  string `db:"child_job_ids"`
	}
	var rows []slotCounts
	if q, args, err = sqlx.In(s.q.get(qRunsSlotCounts), runIDs); err != nil {
		return nil, err
	}
	if err := tx.SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("slot counts of %d runs: %w", len(runIDs), err)
	}
	counts := make(map[int64]slotCounts, len(rows))
	for _, c := range rows {
		counts[c.RunID] = c
	}
	now := locked[0].Now
	ids := make([]int64, len(locked))
	cols := make([][]any, 5) // slots_succeeded, slots_failed, finished_at, error, status
	for c := range cols {
		cols[c] = make([]any, len(locked))
	}
	var alarms []Alarm
	var parents []childTrigger
	for r, run := range locked {
		c := counts[run.ID] // none: no current attempt
		ids[r] = run.ID
		cols[0][r], cols[1][r] = c.Succeeded, c.Failed
		cols[2][r], cols[3][r], cols[4][r] = sql.NullInt64{}, sql.NullString{}, sql.NullString{}
		if c.Active > 0 || run.Status != RunRunning {
			continue
		}
		to, errText := RunSucceeded, ""
		switch {
		case c.Failed > 0 && c.Succeeded == 0:
			to, errText = RunFailed, fmt.Sprintf("%d slot(s) failed", c.Failed)
		case c.Failed > 0:
			to, errText = RunPartiallyFailed, fmt.Sprintf("%d of %d slot(s) failed", c.Failed, c.Failed+c.Succeeded)
		}
		cols[2][r], cols[3][r], cols[4][r] = now, truncate(errText, 2000), to
		switch {
		case to != RunSucceeded:
			alarms = append(alarms, Alarm{
				Kind: AlarmRunFailed, Severity: "critical", JobID: sql.NullInt64{Int64: run.JobID, Valid: true}, RunID: sql.NullInt64{Int64: run.ID, Valid: true}, App: run.App,
				DedupKey: fmt.Sprintf("run_failed:%d:%d", run.ID, now),
				Message:  fmt.Sprintf("run %d %s: %s", run.ID, strings.ReplaceAll(to, "_", " "), errText),
			})
		case c.Children != "":
			parents = append(parents, childTrigger{RunID: run.ID, Epoch: run.Epoch, Children: c.Children})
		}
	}
	if _, err := s.execByKey(ctx, tx, qRunsSettle, "id", ids, cols...); err != nil {
		return nil, fmt.Errorf("settle %d runs: %w", len(ids), err)
	}
	for _, p := range parents {
		if err := s.triggerChildren(ctx, tx, p, now); err != nil {
			return nil, err
		}
	}
	return alarms, nil
}

// childTrigger is a run that succeeded and the child jobs of its job.
type childTrigger struct {
	RunID    int64
	Epoch    int64
	Children string // child_job_ids
}

// triggerChildren creates one pending run of each child job of a succeeded
// run, in the transaction that finished it. The unique key (job_id,
// parent_run_id) makes a parent trigger each child at most once.
func (s *Store) triggerChildren(ctx context.Context, tx *sqlx.Tx, parent childTrigger, atMS int64) error {
	for _, child := range ParseIDList(parent.Children) {
		var c struct {
			App               string `db:"app"`
			SlotCount         int    `db:"slot_count"`
			Params            string `db:"params"`
			Enabled           bool   `db:"enabled"`
			TimeZone          string `db:"time_zone"`
			DedupScope        string `db:"dedup_scope"`
			UncertainPolicy   string `db:"uncertain_policy"`
			RecordMaxAttempts int    `db:"record_max_attempts"`
		}
		err := tx.GetContext(ctx, &c, s.q.get(qJobForChildRun), child)
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
			if err := tx.GetContext(ctx, &exists, s.q.get(qRunCountOfParent), child, parent.RunID); err != nil {
				return fmt.Errorf("child run of %d: %w", parent.RunID, err)
			}
			if exists > 0 {
				break
			}
			nr := NewRun{JobID: child, App: c.App, ScheduledAt: at, TriggerKind: TriggerChild, Status: RunPending, Params: c.Params,
				SlotCount: c.SlotCount, ParentRunID: parent.RunID, TimeZone: c.TimeZone, DedupScope: c.DedupScope,
				UncertainPolicy: c.UncertainPolicy, RecordMaxAttempts: c.RecordMaxAttempts}
			if _, err := tx.ExecContext(ctx, s.q.get(qRunInsert), nr.insertArgs(parent.Epoch)...); err != nil {
				return fmt.Errorf("trigger child job %d of run %d: %w", child, parent.RunID, err)
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
		if err := tx.SelectContext(ctx, &active, s.q.get(qAttemptsActiveOfRun), runID); err != nil {
			return fmt.Errorf("active attempts of run %d: %w", runID, err)
		}
		_, err = tx.ExecContext(ctx, s.q.get(qAttemptsCancelRun), truncate(reason, 2000), runID)
		return err
	})
	return active, cancelled, err
}

// LostAttempts returns current, unfinished attempts whose executor is lost.
func (s *Store) LostAttempts(ctx context.Context, limit int) ([]Attempt, error) {
	var out []Attempt
	if err := s.db.SelectContext(ctx, &out, s.q.get(qAttemptsOfLostExecutors), limit); err != nil {
		return nil, fmt.Errorf("attempts of lost executors: %w", err)
	}
	return out, nil
}

// Reassign supersedes an attempt and creates the next attempt of the same
// slot on another executor, guarded by the leader epoch. The new attempt has
// a larger token. It returns the new token, or 0 if the old attempt was no
// longer current and active. The new attempt's lease runs for lease from
// the database clock.
func (s *Store) Reassign(ctx context.Context, epoch int64, old Attempt, executorID int64, lease time.Duration) (int64, error) {
	return s.move(ctx, epoch, old, executorID, lease, AttemptLost)
}

// Steal moves an attempt that has not started to another executor: like
// Reassign, the old attempt is superseded (status moved) and the new one
// has a larger token.
func (s *Store) Steal(ctx context.Context, epoch int64, old Attempt, executorID int64, lease time.Duration) (int64, error) {
	return s.move(ctx, epoch, old, executorID, lease, AttemptMoved)
}

func (s *Store) move(ctx context.Context, epoch int64, old Attempt, executorID int64, lease time.Duration, oldStatus string) (int64, error) {
	var token int64
	err := s.Tx(ctx, func(tx *sqlx.Tx) error {
		if err := s.CheckEpoch(ctx, tx, epoch); err != nil {
			return err
		}
		token = 0
		res, err := tx.ExecContext(ctx, s.q.get(qAttemptSupersede), oldStatus, old.ID)
		if err != nil {
			return fmt.Errorf("supersede token %d: %w", old.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		res, err = tx.ExecContext(ctx, s.q.get(qAttemptInsertMoved), old.RunID, old.Slot, old.Attempt+1, old.Failures, executorID, lease.Milliseconds())
		if err != nil {
			return fmt.Errorf("reassign slot %d of run %d: %w", old.Slot, old.RunID, err)
		}
		token, err = res.LastInsertId()
		return err
	})
	return token, err
}
