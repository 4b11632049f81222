package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// ExecutorInfo is what a heartbeat tells about an executor.
type ExecutorInfo struct {
	InstanceID string
	App        string
	Address    string
	Capacity   int
	Version    string
	Handlers   []string
	Draining   bool
}

// Heartbeat registers or refreshes an executor (database clock) and returns
// its row.
func (s *Store) Heartbeat(ctx context.Context, in ExecutorInfo) (Executor, error) {
	state := ExecutorOnline
	if in.Draining {
		state = ExecutorDraining
	}
	handlers := strings.Join(in.Handlers, ",")
	for range 2 {
		// The app is part of the identity: an instance never moves to another
		// app (the caller sees the stored app and refuses).
		n, err := s.q.ExecutorHeartbeat(ctx, s.db, executorHeartbeatParams{
			Address: in.Address, Capacity: in.Capacity, Version: in.Version, Handlers: handlers, State: state,
			InstanceID: in.InstanceID, App: in.App,
		})
		if err != nil {
			return Executor{}, fmt.Errorf("heartbeat of %s: %w", in.InstanceID, err)
		}
		if n == 0 {
			// MySQL reports 0 affected rows when nothing changed, so look first.
			if e, err := s.ExecutorByInstance(ctx, in.InstanceID); err == nil {
				return e, nil
			}
			_, err = s.q.ExecutorUpsert(ctx, s.db, executorUpsertParams{
				InstanceID: in.InstanceID, App: in.App, Address: in.Address, Capacity: in.Capacity, Version: in.Version,
				Handlers: handlers, State: state,
			})
			if err != nil && !isDuplicate(err) {
				return Executor{}, fmt.Errorf("register %s: %w", in.InstanceID, err)
			}
			if err := s.EnsureApp(ctx, in.App); err != nil { // its first heartbeat: the app is an object from now on
				return Executor{}, err
			}
			continue
		}
		break
	}
	return s.ExecutorByInstance(ctx, in.InstanceID)
}

// Reincarnate records that the process behind an executor is now
// incarnation, where it was previous. When previous was another process
// (not "": the first heartbeat that carries one), that process is gone: the
// attempts it held, except keep (tokens the new process reports as its own:
// results it restored from its journal), are superseded as lost and
// replaced by unplaced attempts with the same failure count, which the
// leader places again — as if the executor had been declared lost, without
// waiting for its heartbeats to stop (they never do). It returns how many
// attempts it moved and whether this call recorded the change (of several
// heartbeats racing, one does).
func (s *Store) Reincarnate(ctx context.Context, executorID int64, previous, incarnation string, keep []int64) (moved int, changed bool, err error) {
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		moved, changed = 0, false
		n, err := s.q.ExecutorReincarnate(ctx, tx, executorReincarnateParams{Incarnation: incarnation, ID: executorID, Previous: previous})
		if err != nil {
			return fmt.Errorf("record incarnation of executor %d: %w", executorID, err)
		}
		if n == 0 {
			return nil
		}
		changed = true
		if previous == "" {
			return nil
		}
		held, err := s.q.AttemptsHeldBy(ctx, tx, executorID)
		if err != nil {
			return fmt.Errorf("attempts of executor %d: %w", executorID, err)
		}
		moved, err = s.loseHeld(ctx, tx, held, keep)
		return err
	})
	return moved, changed, err
}

// loseHeld supersedes as lost every attempt of held whose token is not in
// keep, and replaces each by an unplaced attempt with the same failure
// count (the leader places it again). It returns how many it moved.
func (s *Store) loseHeld(ctx context.Context, tx *sqlx.Tx, held []Attempt, keep []int64) (int, error) {
	kept := make(map[int64]bool, len(keep))
	for _, t := range keep {
		kept[t] = true
	}
	moved := 0
	var runs []int64
	for _, a := range held {
		if kept[a.Token] {
			continue
		}
		if _, err := s.q.AttemptSupersede(ctx, tx, attemptSupersedeParams{Status: AttemptLost, ErrorClass: protocol.ClassLost, ID: a.Token}); err != nil {
			return moved, fmt.Errorf("supersede lost token %d: %w", a.Token, err)
		}
		if _, err := s.insertNext(ctx, tx, a); err != nil {
			return moved, fmt.Errorf("replace lost token %d: %w", a.Token, err)
		}
		moved++
		runs = append(runs, a.RunID)
	}
	return moved, s.countLost(ctx, tx, runs) // failures their jobs' circuit breakers count
}

// Reconcile compares what an executor process reports with what the
// database says it holds: every current attempt the process acknowledged in
// its batch acceptSeq or earlier and does not report (reported: its
// running, queued, released and finished-unsent tokens) is lost at once and
// placed again. The process built its report after that batch, so it would
// list the token if it still had it; a result it delivered meanwhile has
// made the attempt final, and a cancelled one is no longer current, so
// neither is counted. acceptSeq 0 (an executor that does not number its
// batches) moves nothing. It returns the tokens moved.
func (s *Store) Reconcile(ctx context.Context, executorID, acceptSeq int64, reported []int64) ([]int64, error) {
	if acceptSeq <= 0 {
		return nil, nil
	}
	ids, err := s.q.AttemptsAcceptedBy(ctx, s.db, attemptsAcceptedByParams{ExecutorID: executorID, AcceptSeq: acceptSeq})
	if err != nil {
		return nil, fmt.Errorf("attempts executor %d accepted: %w", executorID, err)
	}
	has := make(map[int64]bool, len(reported))
	for _, t := range reported {
		has[t] = true
	}
	var missing []int64
	for _, id := range ids {
		if !has[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil, nil // the usual case: one indexed read, no write
	}
	missing = missing[:min(len(missing), 1000)] // the next heartbeat moves the rest
	var moved []int64
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		moved = moved[:0]
		held, err := s.q.AttemptsAcceptedByLocked(ctx, tx, attemptsAcceptedByLockedParams{ExecutorID: executorID, AcceptSeq: acceptSeq, IDs: missing})
		if err != nil {
			return fmt.Errorf("lock attempts executor %d no longer has: %w", executorID, err)
		}
		if _, err := s.loseHeld(ctx, tx, held, nil); err != nil {
			return err
		}
		for _, a := range held {
			moved = append(moved, a.Token)
		}
		return nil
	})
	return moved, err
}

// ExecutorByInstance returns an executor by its instance id.
func (s *Store) ExecutorByInstance(ctx context.Context, instanceID string) (Executor, error) {
	e, err := s.q.ExecutorByInstance(ctx, s.db, instanceID)
	if err != nil {
		return e, notFound(err, "executor "+instanceID)
	}
	return e, nil
}

// Executor returns an executor by id.
func (s *Store) Executor(ctx context.Context, id int64) (Executor, error) {
	e, err := s.q.ExecutorByID(ctx, s.db, id)
	if err != nil {
		return e, notFound(err, fmt.Sprintf("executor %d", id))
	}
	return e, nil
}

// Executors lists every executor.
func (s *Store) Executors(ctx context.Context) ([]Executor, error) {
	out, err := s.q.ExecutorList(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("list executors: %w", err)
	}
	return out, nil
}

// OnlineExecutors returns the executors of an app that are online and whose
// last heartbeat is younger than maxAgeMS by the database clock.
func (s *Store) OnlineExecutors(ctx context.Context, app string, maxAgeMS int64) ([]Executor, error) {
	out, err := s.q.ExecutorsOnline(ctx, s.db, executorsOnlineParams{App: app, MaxAgeMS: maxAgeMS})
	if err != nil {
		return nil, fmt.Errorf("online executors of %s: %w", app, err)
	}
	return out, nil
}

// MarkLostExecutors marks executors silent for more than maxAgeMS as lost
// and returns how many changed.
func (s *Store) MarkLostExecutors(ctx context.Context, maxAgeMS int64) (int64, error) {
	silent, err := s.q.ExecutorsSilent(ctx, s.db, maxAgeMS)
	if err != nil {
		return 0, fmt.Errorf("silent executors: %w", err)
	}
	var lost int64
	for _, e := range silent {
		err := s.inTx(ctx, func(tx *sqlx.Tx) error {
			n, err := s.q.ExecutorMarkLost(ctx, tx, executorMarkLostParams{ID: e.ID, MaxAgeMS: maxAgeMS})
			if err != nil {
				return fmt.Errorf("mark executor %d lost: %w", e.ID, err)
			}
			if n == 0 {
				return nil // it heartbeated meanwhile, or another replica marked it
			}
			lost++
			return s.raiseInTx(ctx, tx, Alarm{
				Kind: AlarmExecutorLost, Severity: "warning", App: e.App, ExecutorID: sql.NullInt64{Int64: e.ID, Valid: true},
				DedupKey: fmt.Sprintf("executor_lost:%d:%d", e.ID, e.LastHeartbeat),
				Msg:      msg.New(msg.AlarmExecutorLost, "executor", e.InstanceID, "app", e.App),
			})
		})
		if err != nil {
			return lost, err
		}
	}
	return lost, nil
}

// ForgetLostExecutors marks gone the lost executors silent for more than
// maxAgeMS (database clock) and returns how many changed. A gone executor is
// not listed by default (GET /api/v1/executors without all=1) and gets no
// slots; its row stays for the history of the attempts it ran. It comes back
// online as any executor does: with a heartbeat, or an XXL-JOB executor by
// registering again.
func (s *Store) ForgetLostExecutors(ctx context.Context, maxAgeMS int64) (int64, error) {
	ids, err := s.q.ExecutorsLostSince(ctx, s.db, maxAgeMS)
	if err != nil {
		return 0, fmt.Errorf("executors lost for %d ms: %w", maxAgeMS, err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := s.q.ExecutorsForget(ctx, s.db, executorsForgetParams{MaxAgeMS: maxAgeMS, IDs: ids})
	if err != nil {
		return 0, fmt.Errorf("forget %d lost executors: %w", len(ids), err)
	}
	return n, nil
}

// SetDrain asks (or stops asking) that an executor get no new slots and give
// back the ones it has queued; its running slots finish there.
func (s *Store) SetDrain(ctx context.Context, id int64, drain bool) error {
	if _, err := s.q.ExecutorSetDrain(ctx, s.db, executorSetDrainParams{DrainRequested: drain, ID: id}); err != nil {
		return fmt.Errorf("drain executor %d: %w", id, err)
	}
	return nil
}

// DrainingExecutors returns the live executors an operator asked to drain.
func (s *Store) DrainingExecutors(ctx context.Context) ([]Executor, error) {
	out, err := s.q.ExecutorsDraining(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("draining executors: %w", err)
	}
	return out, nil
}

// Deregister marks an executor gone.
func (s *Store) Deregister(ctx context.Context, instanceID string) error {
	if _, err := s.q.ExecutorDeregister(ctx, s.db, instanceID); err != nil {
		return fmt.Errorf("deregister %s: %w", instanceID, err)
	}
	return nil
}
