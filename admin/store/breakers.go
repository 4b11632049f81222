package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// The states of a job's circuit breaker (job_breaker.state; a job without
// a row is closed with no failure counted). The metric's values are
// BreakerStateValue.
const (
	BreakerClosed  = "closed"
	BreakerOpen    = "open"
	BreakerProbing = "probing"
)

// BreakerStateValue is state as the metric shardjob_breaker_state shows
// it: 0 closed, 1 open, 2 probing.
func BreakerStateValue(state string) float64 {
	switch state {
	case BreakerOpen:
		return 1
	case BreakerProbing:
		return 2
	}
	return 0
}

// BreakerState is a row of job_breaker with its job's breaker settings
// (docs/failures.md, "Retry budgets and circuit breakers").
type BreakerState struct {
	JobID     int64  `db:"job_id"`
	App       string `db:"app"`
	State     string `db:"state"`
	Failures  int    `db:"failures"` // consecutive failures counted (retryable, timeout, lost)
	LastError string `db:"last_error"`
	// OpenedAt is when it opened from closed (an open again after a failed
	// probe keeps it); Reason why it is open; ProbeAt when the probe goes
	// (Unix ms, admin's clock); ProbeToken the probe attempt while probing.
	OpenedAt   sql.NullInt64 `db:"opened_at"`
	Reason     msg.Msg       `db:"reason"`
	ProbeAt    sql.NullInt64 `db:"probe_at"`
	ProbeToken sql.NullInt64 `db:"probe_token"`
	Epoch      int64         `db:"epoch"` // of the leader that changed its state last
	// Of the job ("" and 0 once it is deleted).
	JobName          string `db:"job_name"`
	BreakerThreshold int    `db:"breaker_threshold"`
	BreakerCooldown  string `db:"breaker_cooldown"`
}

// BreakerCount is what a batch of outcomes says of one job's breaker:
// Reset when a slot of the job succeeded (the count starts again after
// it), then Failures retryable, timeout or lost failures, the last with
// LastError.
type BreakerCount struct {
	JobID     int64
	App       string
	Reset     bool
	Failures  int
	LastError string
}

// maxBreakerError bounds job_breaker.last_error.
const maxBreakerError = 500

// CountBreakers records counts of jobs with a circuit breaker (sorted by
// job, so that concurrent batches lock in one order).
func (t *Tx) CountBreakers(ctx context.Context, counts []BreakerCount) error {
	return t.s.countBreakers(ctx, t.tx, counts)
}

func (s *Store) countBreakers(ctx context.Context, tx *sqlx.Tx, counts []BreakerCount) error {
	for _, c := range counts {
		last := truncate(c.LastError, maxBreakerError)
		var err error
		switch {
		case c.Reset && c.Failures == 0:
			if _, err = s.q.BreakerForgetClosed(ctx, tx, c.JobID); err == nil {
				_, err = s.q.BreakerResetFailures(ctx, tx, breakerResetFailuresParams{Failures: 0, LastError: "", JobID: c.JobID})
			}
		case c.Reset:
			var n int64
			n, err = s.q.BreakerResetFailures(ctx, tx, breakerResetFailuresParams{Failures: c.Failures, LastError: last, JobID: c.JobID})
			if err == nil && n == 0 {
				_, err = s.q.BreakerCountFailures(ctx, tx, breakerCountFailuresParams{JobID: c.JobID, App: c.App, Failures: c.Failures, LastError: last})
			}
		default:
			_, err = s.q.BreakerCountFailures(ctx, tx, breakerCountFailuresParams{JobID: c.JobID, App: c.App, Failures: c.Failures, LastError: last})
		}
		if err != nil {
			return fmt.Errorf("count the breaker of job %d: %w", c.JobID, err)
		}
	}
	return nil
}

// countLost counts one lost failure for the breaker of the jobs (with
// one) of runs.
func (s *Store) countLost(ctx context.Context, tx *sqlx.Tx, runIDs []int64) error {
	if len(runIDs) == 0 {
		return nil
	}
	jobs, err := s.q.BreakerJobsOfRuns(ctx, tx, runIDs)
	if err != nil {
		return fmt.Errorf("breakers of lost attempts: %w", err)
	}
	counts := make([]BreakerCount, len(jobs))
	for i, j := range jobs {
		counts[i] = BreakerCount{JobID: j.JobID, App: j.App, Failures: 1, LastError: protocol.ClassLost}
	}
	return s.countBreakers(ctx, tx, counts)
}

// Breakers returns every breaker with a state, by job (O(such jobs)).
func (s *Store) Breakers(ctx context.Context) ([]BreakerState, error) {
	out, err := s.q.Breakers(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("breakers: %w", err)
	}
	return out, nil
}

// Breaker returns the breaker of job jobID; false when it is closed with
// no failure counted.
func (s *Store) Breaker(ctx context.Context, jobID int64) (BreakerState, bool, error) {
	b, err := s.q.BreakerOfJob(ctx, s.db, jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return BreakerState{}, false, nil
	}
	if err != nil {
		return BreakerState{}, false, fmt.Errorf("breaker of job %d: %w", jobID, err)
	}
	return b, true, nil
}

// BreakersOfJobs returns the breakers with a state among jobs ids (a page
// of the job list), by job id; one statement of O(len(ids)).
func (s *Store) BreakersOfJobs(ctx context.Context, ids []int64) (map[int64]BreakerState, error) {
	out := map[int64]BreakerState{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.q.BreakersOfJobs(ctx, s.db, ids)
	if err != nil {
		return nil, fmt.Errorf("breakers of %d jobs: %w", len(ids), err)
	}
	for _, b := range rows {
		out[b.JobID] = b
	}
	return out, nil
}

// OpenBreaker opens b (closed, or probing after a failed probe: from is
// the state read) at atMS until probeAtMS, fenced by the leader's epoch,
// and raises alarm (when opening from closed; nil: none) in the same
// transaction. false when b's state changed meanwhile (an operator closed
// it).
func (s *Store) OpenBreaker(ctx context.Context, epoch int64, b BreakerState, atMS, probeAtMS int64, reason msg.Msg, alarm *Alarm) (bool, error) {
	ok := false
	err := s.Tx(ctx, func(tx *Tx) error {
		ok = false
		if err := tx.CheckEpoch(ctx, epoch); err != nil {
			return err
		}
		opened := sql.NullInt64{}
		if b.State == BreakerClosed || !b.OpenedAt.Valid {
			opened = sql.NullInt64{Int64: atMS, Valid: true}
		}
		n, err := s.q.BreakerOpen(ctx, tx.tx, breakerOpenParams{OpenedAt: opened, Reason: reason, ProbeAt: probeAtMS, Epoch: epoch, JobID: b.JobID, State: b.State})
		if err != nil || n == 0 {
			return err
		}
		ok = true
		if alarm != nil {
			return tx.RaiseAlarms(ctx, *alarm)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("open the breaker of job %d: %w", b.JobID, err)
	}
	return ok, nil
}

// SetProbe moves the open breaker of job jobID to probing with the probe
// attempt token, fenced by the epoch; false when it was no longer open.
func (s *Store) SetProbe(ctx context.Context, epoch, jobID, token int64) (bool, error) {
	ok := false
	err := s.Tx(ctx, func(tx *Tx) error {
		if err := tx.CheckEpoch(ctx, epoch); err != nil {
			return err
		}
		n, err := s.q.BreakerProbe(ctx, tx.tx, breakerProbeParams{ProbeToken: token, Epoch: epoch, JobID: jobID})
		ok = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("probe of the breaker of job %d: %w", jobID, err)
	}
	return ok, nil
}

// BreakerClosedAlarm is the breaker_closed alarm (info) of job jobID of
// app, named job, closed at atMS by raisedBy because of how (a string or a
// msg.Msg), for CloseBreaker.
func BreakerClosedAlarm(jobID int64, app, job, raisedBy string, how any, atMS int64) *Alarm {
	return &Alarm{
		Kind: AlarmBreakerClosed, Severity: "info", RaisedBy: raisedBy, App: app,
		JobID:    sql.NullInt64{Int64: jobID, Valid: true},
		DedupKey: fmt.Sprintf("breaker_closed:%d:%d", jobID, atMS),
		Msg:      msg.New(msg.AlarmBreakerClosed, "job", job, "how", how),
	}
}

// CloseBreaker closes the breaker of job jobID: from state from (the
// leader, after a succeeded probe, fenced by epoch), or from any state
// (from "": an operator, epoch 0: no fence). The job's held pending runs
// start at the next round, its breaker_open alarm is resolved with
// resolved (by resolvedBy) and alarm (breaker_closed; nil: none) is raised.
// false when there was nothing to close.
func (s *Store) CloseBreaker(ctx context.Context, epoch, jobID int64, from string, resolvedBy string, resolved msg.Msg, alarm *Alarm) (bool, error) {
	ok := false
	err := s.Tx(ctx, func(tx *Tx) error {
		ok = false
		if epoch > 0 {
			if err := tx.CheckEpoch(ctx, epoch); err != nil {
				return err
			}
		}
		n, err := s.q.BreakerClose(ctx, tx.tx, breakerCloseParams{JobID: jobID, State: from})
		if err != nil || n == 0 {
			return err
		}
		ok = true
		if _, err := s.q.BreakerReleaseRuns(ctx, tx.tx, jobID); err != nil {
			return err
		}
		if _, err := s.q.AlarmResolveBreaker(ctx, tx.tx, alarmResolveBreakerParams{ResolvedBy: resolvedBy, ResolvedMsg: resolved, JobID: jobID}); err != nil {
			return err
		}
		if alarm != nil {
			return tx.RaiseAlarms(ctx, *alarm)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("close the breaker of job %d: %w", jobID, err)
	}
	return ok, nil
}

// ProbeOutcome is what became of a probe attempt.
type ProbeOutcome struct {
	Status     string `db:"status"`
	ErrorClass string `db:"error_class"`
	Current    bool   `db:"current"`
	Error      string `db:"error"`
}

// ProbeOutcome reads the probe attempt token; false when it does not exist.
func (s *Store) ProbeOutcome(ctx context.Context, token int64) (ProbeOutcome, bool, error) {
	o, err := s.q.BreakerProbeOutcome(ctx, s.db, token)
	if errors.Is(err, sql.ErrNoRows) {
		return ProbeOutcome{}, false, nil
	}
	if err != nil {
		return ProbeOutcome{}, false, fmt.Errorf("probe token %d: %w", token, err)
	}
	return ProbeOutcome(o), true, nil
}

// HeldRetry returns the oldest failed slot of job jobID waiting for a
// retry; false when none.
func (s *Store) HeldRetry(ctx context.Context, jobID int64) (RetryCandidate, bool, error) {
	c, err := s.q.BreakerHeldRetry(ctx, s.db, jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return RetryCandidate{}, false, nil
	}
	if err != nil {
		return RetryCandidate{}, false, fmt.Errorf("held retry of job %d: %w", jobID, err)
	}
	return c, true, nil
}

// HeldUnplaced returns the token of the oldest unplaced attempt of job
// jobID; 0 when none.
func (s *Store) HeldUnplaced(ctx context.Context, jobID int64) (int64, error) {
	tok, err := s.q.BreakerHeldUnplaced(ctx, s.db, jobID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("held attempt of job %d: %w", jobID, err)
	}
	return tok, nil
}

// HeldRun is a pending run a breaker holds.
type HeldRun struct {
	ID        int64 `db:"id"`
	SlotCount int   `db:"slot_count"`
}

// HeldRun returns the oldest pending run of job jobID due at nowMS; false
// when none.
func (s *Store) HeldRun(ctx context.Context, jobID, nowMS int64) (HeldRun, bool, error) {
	r, err := s.q.BreakerHeldRun(ctx, s.db, breakerHeldRunParams{JobID: jobID, ScheduledAt: nowMS})
	if errors.Is(err, sql.ErrNoRows) {
		return HeldRun{}, false, nil
	}
	if err != nil {
		return HeldRun{}, false, fmt.Errorf("held run of job %d: %w", jobID, err)
	}
	return HeldRun(r), true, nil
}

// RetryBudgetUse is a job's first attempts and retries over its retry
// budget's window.
type RetryBudgetUse struct {
	Firsts  int `db:"firsts"`
	Retries int `db:"retries"`
}

// RetryBudgetUse counts job jobID's first attempts dispatched and failed
// attempts retried since sinceMS (over its runs scheduled since runsSinceMS).
func (s *Store) RetryBudgetUse(ctx context.Context, jobID, sinceMS, runsSinceMS int64) (RetryBudgetUse, error) {
	u, err := s.q.RetryBudgetUse(ctx, s.db, retryBudgetUseParams{DispatchedAt: sinceMS, FinishedAt: sinceMS, JobID: jobID, ScheduledAt: runsSinceMS})
	if err != nil {
		return RetryBudgetUse{}, fmt.Errorf("retry budget of job %d: %w", jobID, err)
	}
	return RetryBudgetUse(u), nil
}

// DenyRetry makes the failed attempt token final (its slot is not retried:
// its retry budget is spent), with reason; false when it was no longer a
// failed current attempt with a retry left.
func (t *Tx) DenyRetry(ctx context.Context, token int64, reason msg.Msg) (bool, error) {
	n, err := t.s.q.AttemptDenyRetry(ctx, t.tx, attemptDenyRetryParams{ErrorMsg: reason, ID: token})
	if err != nil {
		return false, fmt.Errorf("deny the retry of token %d: %w", token, err)
	}
	return n == 1, nil
}
