package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
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
		res, err := s.db.ExecContext(ctx, s.q.get("ExecutorHeartbeat"), in.Address, in.Capacity, in.Version, handlers, state, in.InstanceID, in.App)
		if err != nil {
			return Executor{}, fmt.Errorf("heartbeat of %s: %w", in.InstanceID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// MySQL reports 0 affected rows when nothing changed, so look first.
			if e, err := s.ExecutorByInstance(ctx, in.InstanceID); err == nil {
				return e, nil
			}
			_, err = s.db.ExecContext(ctx, s.q.get("ExecutorUpsert"), in.InstanceID, in.App, in.Address, in.Capacity, in.Version, handlers, state)
			if err != nil && !isDuplicate(err) {
				return Executor{}, fmt.Errorf("register %s: %w", in.InstanceID, err)
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
	err = s.Tx(ctx, func(tx *sqlx.Tx) error {
		moved, changed = 0, false
		res, err := tx.ExecContext(ctx, s.q.get("ExecutorReincarnate"), incarnation, executorID, previous)
		if err != nil {
			return fmt.Errorf("record incarnation of executor %d: %w", executorID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		changed = true
		if previous == "" {
			return nil
		}
		var held []Attempt
		if err := tx.SelectContext(ctx, &held, s.q.get("AttemptsHeldBy"), executorID); err != nil {
			return fmt.Errorf("attempts of executor %d: %w", executorID, err)
		}
		kept := make(map[int64]bool, len(keep))
		for _, t := range keep {
			kept[t] = true
		}
		for _, a := range held {
			if kept[a.ID] {
				continue
			}
			if _, err := tx.ExecContext(ctx, s.q.get("AttemptSupersede"), AttemptLost, a.ID); err != nil {
				return fmt.Errorf("supersede token %d of a restarted executor: %w", a.ID, err)
			}
			if _, err := tx.ExecContext(ctx, s.q.get("AttemptInsertUnplaced"), a.RunID, a.Slot, a.Attempt+1, a.Failures); err != nil {
				return fmt.Errorf("replace token %d of a restarted executor: %w", a.ID, err)
			}
			moved++
		}
		return nil
	})
	return moved, changed, err
}

// ExecutorByInstance returns an executor by its instance id.
func (s *Store) ExecutorByInstance(ctx context.Context, instanceID string) (Executor, error) {
	var e Executor
	if err := s.db.GetContext(ctx, &e, s.q.get("ExecutorByInstance"), instanceID); err != nil {
		return e, notFound(err, "executor "+instanceID)
	}
	return e, nil
}

// ExecutorByID returns an executor by id.
func (s *Store) ExecutorByID(ctx context.Context, id int64) (Executor, error) {
	var e Executor
	if err := s.db.GetContext(ctx, &e, s.q.get("ExecutorByID"), id); err != nil {
		return e, notFound(err, fmt.Sprintf("executor %d", id))
	}
	return e, nil
}

// Executors lists every executor.
func (s *Store) Executors(ctx context.Context) ([]Executor, error) {
	var out []Executor
	if err := s.db.SelectContext(ctx, &out, s.q.get("ExecutorList")); err != nil {
		return nil, fmt.Errorf("list executors: %w", err)
	}
	return out, nil
}

// OnlineExecutors returns the executors of an app that are online and whose
// last heartbeat is younger than maxAgeMS by the database clock.
func (s *Store) OnlineExecutors(ctx context.Context, app string, maxAgeMS int64) ([]Executor, error) {
	var out []Executor
	if err := s.db.SelectContext(ctx, &out, s.q.get("ExecutorsOnline"), app, maxAgeMS); err != nil {
		return nil, fmt.Errorf("online executors of %s: %w", app, err)
	}
	return out, nil
}

// MarkLostExecutors marks executors silent for more than maxAgeMS as lost
// and returns how many changed.
func (s *Store) MarkLostExecutors(ctx context.Context, maxAgeMS int64) (int64, error) {
	var silent []struct {
		ID            int64  `db:"id"`
		InstanceID    string `db:"instance_id"`
		App           string `db:"app"`
		LastHeartbeat int64  `db:"last_heartbeat"`
	}
	if err := s.db.SelectContext(ctx, &silent, s.q.get("ExecutorsSilent"), maxAgeMS); err != nil {
		return 0, fmt.Errorf("silent executors: %w", err)
	}
	var lost int64
	for _, e := range silent {
		err := s.Tx(ctx, func(tx *sqlx.Tx) error {
			res, err := tx.ExecContext(ctx, s.q.get("ExecutorMarkLost"), e.ID, maxAgeMS)
			if err != nil {
				return fmt.Errorf("mark executor %d lost: %w", e.ID, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil // it heartbeated meanwhile, or another replica marked it
			}
			lost++
			return s.raiseInTx(ctx, tx, Alarm{
				Kind: AlarmExecutorLost, Severity: "warning", App: e.App,
				DedupKey: fmt.Sprintf("executor_lost:%d:%d", e.ID, e.LastHeartbeat),
				Message:  fmt.Sprintf("executor %s of app %s stopped heartbeating; its unfinished slots move to other executors", e.InstanceID, e.App),
			})
		})
		if err != nil {
			return lost, err
		}
	}
	return lost, nil
}

// SetDrain asks (or stops asking) that an executor get no new slots and give
// back the ones it has queued; its running slots finish there.
func (s *Store) SetDrain(ctx context.Context, id int64, drain bool) error {
	if _, err := s.db.ExecContext(ctx, s.q.get("ExecutorSetDrain"), drain, id); err != nil {
		return fmt.Errorf("drain executor %d: %w", id, err)
	}
	return nil
}

// DrainingExecutors returns the live executors an operator asked to drain.
func (s *Store) DrainingExecutors(ctx context.Context) ([]Executor, error) {
	var out []Executor
	if err := s.db.SelectContext(ctx, &out, s.q.get("ExecutorsDraining")); err != nil {
		return nil, fmt.Errorf("draining executors: %w", err)
	}
	return out, nil
}

// Deregister marks an executor gone.
func (s *Store) Deregister(ctx context.Context, instanceID string) error {
	if _, err := s.db.ExecContext(ctx, s.q.get("ExecutorDeregister"), instanceID); err != nil {
		return fmt.Errorf("deregister %s: %w", instanceID, err)
	}
	return nil
}
