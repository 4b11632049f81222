package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
)

// RetryCandidate is a failed attempt whose job allows another attempt.
type RetryCandidate struct {
	Token          int64         `db:"id"`
	RunID          int64         `db:"run_id"`
	Slot           int           `db:"slot"`
	Attempt        int           `db:"attempt"`
	Failures       int           `db:"failures"` // failed attempts of the slot before this one
	ExecutorID     sql.NullInt64 `db:"executor_id"`
	FinishedAt     sql.NullInt64 `db:"finished_at"`
	RetryBackoffMS int64         `db:"retry_backoff_ms"`
	// RetryAfterMS is the least delay before the retry that the failed
	// attempt asked for (capped when recorded); NULL: none.
	RetryAfterMS sql.NullInt64 `db:"retry_after_ms"`
	JobID        int64         `db:"job_id"`
	Error        string        `db:"error"` // the failed attempt's
	// The job's retry budget and backoff cap as it states them
	// (store.JobBreaker; admin/jobrules parses them).
	RetryBackoffMax    string `db:"retry_backoff_max"`
	RetryBudgetPercent int    `db:"retry_budget_percent"`
	RetryBudgetWindow  string `db:"retry_budget_window"`
}

// RetryCandidates returns failed current attempts of running runs that their
// job's retry_max allows to try again: retry_max counts failed attempts only
// (an attempt lost with its executor or moved to another one does not use
// up a retry). A permanent failure (error class) is never a candidate.
func (s *Store) RetryCandidates(ctx context.Context, limit int) ([]RetryCandidate, error) {
	out, err := s.q.AttemptsToRetry(ctx, s.db, limit)
	if err != nil {
		return nil, fmt.Errorf("attempts to retry: %w", err)
	}
	return out, nil
}

// Retry supersedes a failed attempt and creates the next attempt of its
// slot, not yet placed on an executor (PlaceAttempt does that), guarded by
// the leader epoch. It returns the new token, 0 if the attempt was no
// longer current.
func (s *Store) Retry(ctx context.Context, epoch int64, c RetryCandidate) (int64, error) {
	var token int64
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		token = 0
		if err := s.checkEpoch(ctx, tx, epoch); err != nil {
			return err
		}
		var err error
		token, err = s.supersedeAndInsert(ctx, tx, c.Token, c.RunID, c.Slot, c.Attempt, c.Failures+1)
		return err
	})
	return token, err
}

func (s *Store) supersedeAndInsert(ctx context.Context, tx *sqlx.Tx, token, runID int64, slot, attempt, failures int) (int64, error) {
	n, err := s.q.AttemptSupersedeFailed(ctx, tx, token)
	if err != nil {
		return 0, fmt.Errorf("supersede token %d: %w", token, err)
	}
	if n == 0 {
		return 0, nil
	}
	id, err := s.q.AttemptInsertUnplaced(ctx, tx, attemptInsertUnplacedParams{RunID: runID, Slot: slot, Attempt: attempt + 1, Failures: failures})
	if err != nil {
		return 0, fmt.Errorf("retry slot %d of run %d: %w", slot, runID, err)
	}
	return id, nil
}

// insertNext inserts the next attempt of a's slot, unplaced (the leader
// places it), with a's failure count, and returns its token.
func (s *Store) insertNext(ctx context.Context, db dbtx, a Attempt) (int64, error) {
	return s.q.AttemptInsertUnplaced(ctx, db, attemptInsertUnplacedParams{RunID: a.RunID, Slot: a.Slot, Attempt: a.Attempt + 1, Failures: a.Failures})
}

// ReleaseAttempts handles tokens an executor reports it gave back unstarted
// (work stealing) while still current on it — the leader that asked for
// them did not move them (it stopped leading, or failed in between). Each is
// superseded (status moved) and replaced by an unplaced attempt with the
// same failure count, which the leader places on another executor. It
// returns how many it moved. Tokens no longer current, of another executor
// or started are left alone.
func (s *Store) ReleaseAttempts(ctx context.Context, executorID int64, tokens []int64) (int, error) {
	moved := 0
	tokens = slices.Sorted(slices.Values(tokens)) // lock in id order, as results do
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		moved = 0
		for _, tok := range tokens {
			a, err := s.q.AttemptByIDForUpdate(ctx, tx, tok)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("released token %d: %w", tok, err)
			}
			if !a.Current || a.Status != AttemptAssigned || a.ExecutorID.Int64 != executorID {
				continue
			}
			n, err := s.q.AttemptSupersede(ctx, tx, attemptSupersedeParams{Status: AttemptMoved, ErrorClass: "", ID: tok})
			if err != nil {
				return fmt.Errorf("supersede released token %d: %w", tok, err)
			}
			if n == 0 {
				continue
			}
			if _, err := s.insertNext(ctx, tx, a); err != nil {
				return fmt.Errorf("replace released token %d: %w", tok, err)
			}
			moved++
		}
		return nil
	})
	return moved, err
}

// Unplaced is a current attempt that waits for an executor.
type Unplaced struct {
	Token   int64  `db:"id"`
	RunID   int64  `db:"run_id"`
	Slot    int    `db:"slot"`
	Attempt int    `db:"attempt"`
	App     string `db:"app"`
	Handler string `db:"handler"`
	JobID   int64  `db:"job_id"`
	// JobMaxRunningSlots is the job's concurrency cap (0: none).
	JobMaxRunningSlots int64         `db:"job_max_running_slots"`
	PreviousExecutor   sql.NullInt64 `db:"previous_executor"`
}

// UnplacedAttempts returns up to limit attempts waiting for an executor
// (retries, and slots a concurrency cap holds back) with a token larger
// than afterToken, oldest first.
func (s *Store) UnplacedAttempts(ctx context.Context, afterToken int64, limit int) ([]Unplaced, error) {
	out, err := s.q.AttemptsUnplaced(ctx, s.db, attemptsUnplacedParams{ID: afterToken, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("unplaced attempts: %w", err)
	}
	return out, nil
}

// Placement puts one unplaced attempt on an executor.
type Placement struct {
	Token      int64
	ExecutorID int64
}

// PlaceAttempts puts unplaced attempts on executors in one transaction
// fenced by the leader epoch (a former leader places nothing: a cap
// counted by the new one holds). It returns the placements made; an
// attempt placed or superseded meanwhile is left out. Each lease runs for
// lease from the database clock.
func (s *Store) PlaceAttempts(ctx context.Context, epoch int64, lease time.Duration, ps []Placement) ([]Placement, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	var done []Placement
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		done = done[:0]
		if err := s.checkEpoch(ctx, tx, epoch); err != nil {
			return err
		}
		for _, p := range ps {
			n, err := s.q.AttemptPlace(ctx, tx, attemptPlaceParams{ExecutorID: p.ExecutorID, LeaseMS: lease.Milliseconds(), ID: p.Token})
			if err != nil {
				return fmt.Errorf("place token %d: %w", p.Token, err)
			}
			if n == 1 {
				done = append(done, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return done, nil
}

// FailedAttemptsOfRun returns the current attempts of a run whose slot
// failed or was cancelled: what a retry by hand runs again.
func (t *Tx) FailedAttemptsOfRun(ctx context.Context, runID int64) ([]Attempt, error) {
	out, err := t.s.q.AttemptsFailedOfRun(ctx, t.tx, runID)
	if err != nil {
		return nil, fmt.Errorf("failed slots of run %d: %w", runID, err)
	}
	return out, nil
}

// ReopenRun moves run runID from status from back to running at atMS (its
// finish time and error cleared); false when it was not in from.
func (t *Tx) ReopenRun(ctx context.Context, runID int64, from string, atMS int64) (bool, error) {
	k, err := t.s.q.RunReopen(ctx, t.tx, runReopenParams{StartedAt: atMS, ID: runID, Status: from})
	if err != nil {
		return false, fmt.Errorf("reopen run %d: %w", runID, err)
	}
	return k == 1, nil
}

// RetryAttempt supersedes the failed or cancelled attempt a and creates the
// slot's next attempt, unplaced, with failures counted from 0 (a retry by
// hand starts a fresh retry budget). It returns the new token, 0 when a
// was no longer current.
func (t *Tx) RetryAttempt(ctx context.Context, a Attempt) (int64, error) {
	return t.s.supersedeAndInsert(ctx, t.tx, a.Token, a.RunID, a.Slot, a.Attempt, 0)
}
