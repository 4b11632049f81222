package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/shardjob/shardjob/sdk/protocol"
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

// dbNow reads the database clock on db (the pool or a transaction).
func (s *Store) dbNow(ctx context.Context, db dbtx) (int64, error) {
	now, err := s.q.DBNow(ctx, db)
	if err != nil {
		return 0, fmt.Errorf("read database clock: %w", err)
	}
	return now, nil
}

// Attempts returns every attempt of a run, by slot then attempt.
func (s *Store) Attempts(ctx context.Context, runID int64) ([]Attempt, error) {
	out, err := s.q.AttemptsOfRun(ctx, s.db, runID)
	if err != nil {
		return nil, fmt.Errorf("attempts of run %d: %w", runID, err)
	}
	return out, nil
}

// Attempt returns one attempt by token.
func (s *Store) Attempt(ctx context.Context, token int64) (Attempt, error) {
	a, err := s.q.AttemptByID(ctx, s.db, token)
	if err != nil {
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
	// The run's records policy (its job's when the run was created).
	RecordsPolicy
	// Workflow is the run's workflow context (NewRun.Workflow), NULL for a
	// run that is no workflow node's.
	Workflow   sql.NullString `db:"workflow"`
	ExecutorID sql.NullInt64  `db:"executor_id"`
	Failures   int            `db:"failures"`
	// Priority is the run's (a protocol.Priority); NULL (a query that
	// does not read it): normal.
	Priority sql.NullInt64 `db:"priority"`
}

// UnackedFor returns the current attempts placed on an executor that it has
// not acknowledged yet (delivered again in heartbeat responses).
func (s *Store) UnackedFor(ctx context.Context, executorID int64, limit int) ([]DispatchSlot, error) {
	out, err := s.q.DispatchUnacked(ctx, s.db, dispatchUnackedParams{ExecutorID: executorID, Limit: limit})
	if err != nil {
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
	ack := func(ids []int64) error {
		_, err := s.q.AttemptAck(ctx, s.db, attemptAckParams{AcceptSeq: acceptSeq, ExecutorID: executorID, IDs: ids})
		return err
	}
	if err := updateTokens(ctx, qAttemptAck, queued, ack); err != nil {
		return err
	}
	start := func(ids []int64) error {
		_, err := s.q.AttemptStarted(ctx, s.db, attemptStartedParams{AcceptSeq: acceptSeq, ExecutorID: executorID, IDs: ids})
		return err
	}
	return updateTokens(ctx, qAttemptStarted, started, start)
}

// updateTokens runs update (an "… id IN (?)" update of slot attempts) over
// tokens (ids) in autocommit statements of up to 1000 tokens in token
// order, each retried on a deadlock (see Store.exec).
func updateTokens(ctx context.Context, query query, tokens []int64, update func(ids []int64) error) error {
	tokens = slices.Sorted(slices.Values(tokens))
	for start := 0; start < len(tokens); start += 1000 {
		chunk := tokens[start:min(start+1000, len(tokens))]
		if err := retry(ctx, func() error { return update(chunk) }); err != nil {
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
	rows, err := s.q.ExecutorLoad(ctx, s.db)
	if err != nil {
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
	out, err := s.q.AttemptsQueuedOn(ctx, s.db, attemptsQueuedOnParams{ExecutorID: executorID, Limit: limit})
	if err != nil {
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
	live, err := s.q.AttemptsLive(ctx, s.db, attemptsLiveParams{ExecutorID: executorID, IDs: tokens})
	if err != nil {
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

// ActiveToken is an unfinished attempt and where its executor listens.
type ActiveToken struct {
	Token   int64  `db:"token"`
	Address string `db:"address"`
}

// LostAttempts returns current, unfinished attempts whose executor is lost.
func (s *Store) LostAttempts(ctx context.Context, limit int) ([]Attempt, error) {
	out, err := s.q.AttemptsOfLostExecutors(ctx, s.db, limit)
	if err != nil {
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
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := s.checkEpoch(ctx, tx, epoch); err != nil {
			return err
		}
		token = 0
		class := "" // moved: not a failure
		if oldStatus == AttemptLost {
			class = protocol.ClassLost
		}
		n, err := s.q.AttemptSupersede(ctx, tx, attemptSupersedeParams{Status: oldStatus, ErrorClass: class, ID: old.Token})
		if err != nil {
			return fmt.Errorf("supersede token %d: %w", old.Token, err)
		}
		if n == 0 {
			return nil
		}
		token, err = s.q.AttemptInsertMoved(ctx, tx, attemptInsertMovedParams{
			RunID: old.RunID, Slot: old.Slot, Attempt: old.Attempt + 1, Failures: old.Failures, ExecutorID: executorID, LeaseMS: lease.Milliseconds(),
		})
		if err != nil {
			return fmt.Errorf("reassign slot %d of run %d: %w", old.Slot, old.RunID, err)
		}
		if oldStatus == AttemptLost { // a failure its job's circuit breaker counts
			return s.countLost(ctx, tx, []int64{old.RunID})
		}
		return nil
	})
	return token, err
}
