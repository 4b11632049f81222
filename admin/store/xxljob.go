package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/shardjob/shardjob/admin/msg"
)

// Executor protocols (executor.protocol).
const (
	// ProtocolShardjob executors speak shardjob's signed protocol.
	ProtocolShardjob = "shardjob"
	// ProtocolXXLJob executors are unchanged XXL-JOB executors, 2.x to 3.5
	// (admin/xxljob).
	ProtocolXXLJob = "xxljob"
)

// RegisterXXLExecutor records an XXL-JOB executor's registration: the
// executor is (again) online, with the xxljob protocol marker, and its
// heartbeat is now (database clock). in.Handlers is ignored: XXL-JOB
// executors do not list their handlers (they refuse unknown ones).
func (s *Store) RegisterXXLExecutor(ctx context.Context, in ExecutorInfo) (Executor, error) {
	for range 2 {
		n, err := s.q.XXLExecutorRefresh(ctx, s.db, xxlExecutorRefreshParams{
			Address: in.Address, Capacity: in.Capacity, Version: in.Version, InstanceID: in.InstanceID, App: in.App,
		})
		if err != nil {
			return Executor{}, fmt.Errorf("register XXL-JOB executor %s: %w", in.InstanceID, err)
		}
		if n > 0 {
			break
		}
		// MySQL reports 0 affected rows when nothing changed: look first.
		if e, err := s.ExecutorByInstance(ctx, in.InstanceID); err == nil {
			return e, nil
		}
		_, err = s.q.XXLExecutorInsert(ctx, s.db, xxlExecutorInsertParams{
			InstanceID: in.InstanceID, App: in.App, Address: in.Address, Capacity: in.Capacity, Version: in.Version,
		})
		if err != nil && !isDuplicate(err) {
			return Executor{}, fmt.Errorf("register XXL-JOB executor %s: %w", in.InstanceID, err)
		}
		if err := s.EnsureApp(ctx, in.App); err != nil {
			return Executor{}, err
		}
		if err == nil {
			break
		}
	}
	return s.ExecutorByInstance(ctx, in.InstanceID)
}

// XXLBeat records a heartbeat on behalf of an XXL-JOB executor that answered
// the admin's probe (which keeps its attempts alive, as a heartbeat does).
// It reports false when the executor is no longer online (lost or removed:
// it comes back by registering again).
func (s *Store) XXLBeat(ctx context.Context, executorID int64) (bool, error) {
	n, err := s.q.XXLExecutorBeat(ctx, s.db, executorID)
	if err != nil {
		return false, fmt.Errorf("beat of XXL-JOB executor %d: %w", executorID, err)
	}
	if n == 0 {
		// MySQL: 0 rows also when last_heartbeat did not change (same ms).
		e, err := s.Executor(ctx, executorID)
		if err != nil || (e.State != ExecutorOnline && e.State != ExecutorDraining) {
			return false, nil //nolint:nilerr // a removed or offline executor is reported as false, as documented above
		}
	}
	return true, nil
}

// XXLExecutors returns the online and draining XXL-JOB executors of every app.
func (s *Store) XXLExecutors(ctx context.Context) ([]Executor, error) {
	out, err := s.q.XXLExecutorsLive(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("list XXL-JOB executors: %w", err)
	}
	return out, nil
}

// ExecutorRef names an executor and the protocol it speaks.
type ExecutorRef struct {
	ID       int64  `db:"id"`
	App      string `db:"app"`
	Protocol string `db:"protocol"`
	// Version is the executor's version; for XXL-JOB executors, the
	// protocol generation the admin detected (admin/xxljob.Generation).
	Version string `db:"version"`
}

// ExecutorProtocol returns the executor listening at address (the newest if
// the address was reused); ErrNotFound if none registered it.
func (s *Store) ExecutorProtocol(ctx context.Context, address string) (ExecutorRef, error) {
	row, err := s.q.ExecutorProtocolByAddress(ctx, s.db, address)
	if err != nil {
		return row, notFound(err, "executor at "+address)
	}
	return row, nil
}

// LiveExecutorsAt returns the executors other than instanceID that are live
// at address: online or draining, and heard from within maxAgeMS (database
// clock). The address matches with or without a trailing slash (XXL-JOB
// executors register "http://host:port/", shardjob executors advertise
// "http://host:port").
func (s *Store) LiveExecutorsAt(ctx context.Context, address, instanceID string, maxAgeMS int64) ([]ExecutorRef, error) {
	base := strings.TrimRight(address, "/")
	out, err := s.q.ExecutorsLiveAtAddress(ctx, s.db, executorsLiveAtAddressParams{
		Address: base, AddressSlash: base + "/", InstanceID: instanceID, MaxAgeMS: maxAgeMS,
	})
	if err != nil {
		return nil, fmt.Errorf("executors at %s: %w", address, err)
	}
	return out, nil
}

// ClaimRedispatch claims an unaccepted attempt of an XXL-JOB executor,
// placed more than olderThanMS ago, for pushing it again; false when it was
// accepted, moved, or claimed by another replica meanwhile.
func (s *Store) ClaimRedispatch(ctx context.Context, token, executorID, olderThanMS int64) (bool, error) {
	n, err := s.q.XXLClaimRedispatch(ctx, s.db, xxlClaimRedispatchParams{ID: token, ExecutorID: executorID, OlderThanMS: olderThanMS})
	if err != nil {
		return false, fmt.Errorf("claim token %d for redispatch: %w", token, err)
	}
	return n > 0, nil
}

// XXLUnacked returns current attempts placed on an XXL-JOB executor that it
// has not accepted, placed more than olderThanMS ago (database clock).
func (s *Store) XXLUnacked(ctx context.Context, executorID, olderThanMS int64, limit int) ([]DispatchSlot, error) {
	out, err := s.q.XXLUnackedStale(ctx, s.db, xxlUnackedStaleParams{ExecutorID: executorID, OlderThanMS: olderThanMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("unaccepted attempts of XXL-JOB executor %d: %w", executorID, err)
	}
	return out, nil
}

// OverdueAttempt is a running attempt on an XXL-JOB executor whose callback
// is overdue.
type OverdueAttempt struct {
	Token      int64 `db:"token"`
	ExecutorID int64 `db:"executor_id"`
	RunID      int64 `db:"run_id"`
	Slot       int   `db:"slot"`
	TimeoutMS  int64 `db:"timeout_ms"`
}

// XXLOverdue returns running attempts on XXL-JOB executors that started more
// than their job's timeout (defaultTimeoutMS when the job has none) plus
// graceMS ago, by the database clock.
func (s *Store) XXLOverdue(ctx context.Context, defaultTimeoutMS, graceMS int64, limit int) ([]OverdueAttempt, error) {
	out, err := s.q.XXLAttemptsOverdue(ctx, s.db, xxlAttemptsOverdueParams{DefaultTimeoutMS: defaultTimeoutMS, GraceMS: graceMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("overdue XXL-JOB attempts: %w", err)
	}
	return out, nil
}

// TokenInfo is an attempt with its run and executor, as the XXL-JOB
// callback, log and kill calls need it.
type TokenInfo struct {
	Token      int64         `db:"token"`
	RunID      int64         `db:"run_id"`
	Slot       int           `db:"slot"`
	Status     string        `db:"status"`
	Current    bool          `db:"current"`
	ExecutorID int64         `db:"executor_id"`
	StartedAt  sql.NullInt64 `db:"started_at"`
	// DispatchedAt is when the attempt was placed, or last sent again (Unix
	// ms, database clock): never later than the executor's start of it.
	DispatchedAt int64  `db:"dispatched_at"`
	JobID        int64  `db:"job_id"`
	ScheduledAt  int64  `db:"scheduled_at"`
	App          string `db:"app"`        // of the executor; "" when unplaced
	Address      string `db:"address"`    // of the executor
	Protocol     string `db:"protocol"`   // of the executor
	Version      string `db:"version"`    // of the executor (XXL-JOB: its protocol generation)
	TimeoutMS    int64  `db:"timeout_ms"` // the job's; 0: none
}

// TokenInfo returns an attempt by token with its run and executor.
func (s *Store) TokenInfo(ctx context.Context, token int64) (TokenInfo, error) {
	t, err := s.q.XXLAttemptByToken(ctx, s.db, token)
	if err != nil {
		return t, notFound(err, fmt.Sprintf("attempt %d", token))
	}
	return t, nil
}

// JobSlot names a slot of a job.
type JobSlot struct {
	JobID int64 `db:"job_id"`
	Slot  int   `db:"slot"`
}

// SlotsOfTokens returns the distinct job slots of attempts, ordered.
func (s *Store) SlotsOfTokens(ctx context.Context, tokens []int64) ([]JobSlot, error) {
	if len(tokens) == 0 {
		return nil, nil
	}
	out, err := s.q.XXLSlotsOfTokens(ctx, s.db, tokens)
	if err != nil {
		return nil, fmt.Errorf("job slots of %d tokens: %w", len(tokens), err)
	}
	return out, nil
}

// NowMS reads the database clock in Unix milliseconds.
func (s *Store) NowMS(ctx context.Context) (int64, error) { return s.dbNow(ctx, s.db) }

// XXLHandlerTurns returns, for each handler with unfinished attempts on an
// XXL-JOB executor, the smallest of their tokens: on an executor that runs
// one task per handler at a time, the attempt whose turn it is.
func (s *Store) XXLHandlerTurns(ctx context.Context, executorID int64) (map[string]int64, error) {
	rows, err := s.q.XXLHandlerTurns(ctx, s.db, executorID)
	if err != nil {
		return nil, fmt.Errorf("handler turns on XXL-JOB executor %d: %w", executorID, err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Handler] = r.Token
	}
	return out, nil
}

// RunningAttempt is a running attempt on an XXL-JOB executor, as the
// prober's idle check needs it.
type RunningAttempt struct {
	Token   int64  `db:"token"`
	RunID   int64  `db:"run_id"`
	Slot    int    `db:"slot"`
	JobID   int64  `db:"job_id"`
	Handler string `db:"handler"`
}

// XXLRunningSince returns the running attempts of an XXL-JOB executor that
// it accepted more than olderThanMS ago (database clock), oldest first.
func (s *Store) XXLRunningSince(ctx context.Context, executorID, olderThanMS int64, limit int) ([]RunningAttempt, error) {
	out, err := s.q.XXLRunningSince(ctx, s.db, xxlRunningSinceParams{ExecutorID: executorID, OlderThanMS: olderThanMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("running attempts of XXL-JOB executor %d: %w", executorID, err)
	}
	return out, nil
}

// XXLLoseIdle supersedes a running attempt of an XXL-JOB executor that the
// executor says it no longer has (idle for the slot's job id, no callback)
// as lost, with reason, and replaces it by an unplaced attempt with the same
// failure count: the leader places it again with a new token, as for the
// slots of a lost executor. It reports false when the attempt was no longer
// running there (its callback came meanwhile, or it was moved).
func (s *Store) XXLLoseIdle(ctx context.Context, token, executorID int64, reason msg.Msg) (bool, error) {
	lost := false
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		lost = false
		a, err := s.q.XXLAttemptRunningLocked(ctx, tx, xxlAttemptRunningLockedParams{ID: token, ExecutorID: executorID})
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return fmt.Errorf("lock idle XXL-JOB attempt %d: %w", token, err)
		}
		if _, err := s.q.XXLAttemptLose(ctx, tx, xxlAttemptLoseParams{Error: truncate(reason.String(), 2000), ErrorMsg: reason, ID: token}); err != nil {
			return fmt.Errorf("lose idle XXL-JOB attempt %d: %w", token, err)
		}
		if _, err := s.insertNext(ctx, tx, a); err != nil {
			return fmt.Errorf("replace idle XXL-JOB attempt %d: %w", token, err)
		}
		lost = true
		return nil
	})
	return lost, err
}
