package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/shardjob/shardjob/admin/msg"
)

// PendingRun is a run waiting for its slots to be placed, with what the
// leader needs of its job to start it (read in the same query, so that
// starting a page of runs costs no query per run).
type PendingRun struct {
	Run
	// JobExists is false when the job was deleted after the run was created.
	JobExists     bool   `db:"job_exists"`
	Handler       string `db:"handler"`
	OverlapPolicy string `db:"overlap_policy"`
	JobEnabled    bool   `db:"job_enabled"`
	JobPaused     bool   `db:"job_paused"`
	// WaitFor is the job's waits (a JSON array like a workflow node's
	// wait_for; "" for none), WaitTimeout and OnTimeout its settings as
	// stored ("" for the defaults).
	WaitFor     string `db:"wait_for"`
	WaitTimeout string `db:"wait_timeout"`
	OnTimeout   string `db:"on_timeout"`
	// HeldUntil is when the run was last held until (HoldPending; 0: never
	// held): it is due again now.
	HeldUntil int64 `db:"held_until"`
	// BackfillID is the job backfill the run belongs to (0: none).
	BackfillID int64 `db:"backfill_id"`
	// JobMaxRunningSlots is the job's concurrency cap (0: none).
	JobMaxRunningSlots int64 `db:"job_max_running_slots"`
	// Priority is the run's priority (a protocol.Priority: its own when
	// its trigger lowered it, else its job's), JobPriority its job's.
	Priority    int `db:"priority"`
	JobPriority int `db:"job_priority"`
}

// Scheduled reports whether the run is a firing of the job's schedule (cron
// or catch-up), as opposed to a run somebody asked for (manual, API,
// retry, child).
func (r PendingRun) Scheduled() bool {
	return r.TriggerKind == TriggerCron || r.TriggerKind == TriggerCatchUp
}

// PendingCursor is the position after the last run of a page of
// PendingPage (keyset on scheduled time, then id). The zero value starts
// at the beginning.
type PendingCursor struct {
	ScheduledAt int64
	ID          int64
}

// PendingPage returns up to limit pending runs due at nowMS (scheduled at
// or before it, and a jittered run's start_after and a held run's
// held_until too), after cur, oldest
// first. Runs that cannot start yet (no executor
// with their handler) therefore do not hide the ones behind them: the
// caller pages on.
func (s *Store) PendingPage(ctx context.Context, nowMS int64, cur PendingCursor, limit int) ([]PendingRun, error) {
	out, err := s.q.RunPendingPage(ctx, s.db, runPendingPageParams{NowMS: nowMS, ScheduledAt: cur.ScheduledAt, ID: cur.ID, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("pending runs: %w", err)
	}
	return out, nil
}

// RunStart is one run to start: the first attempt of each of its slots,
// in the order they should be dispatched, and the makespan the placement
// predicted (0: none). An attempt without an executor (ExecutorID 0) is a
// slot a concurrency cap holds back: it waits unplaced (PlaceAttempts).
type RunStart struct {
	RunID       int64
	Attempts    []NewAttempt
	PredictedMS int64
}

// StartRuns starts many pending runs in one transaction fenced by the
// leader epoch: it locks the runs that are still pending (in id order),
// moves them to running, records their predicted makespans and inserts the
// first attempt of every slot of each, in multi-row statements. A run that
// is no longer pending (cancelled meanwhile) is left alone. It returns the
// ids of the runs it started. A stale epoch writes nothing (ErrStaleEpoch).
// Each attempt's lease runs for lease from the database clock.
func (s *Store) StartRuns(ctx context.Context, epoch int64, lease time.Duration, runs []RunStart) ([]int64, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	slices.Sort(ids)
	var started []int64
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		started = nil
		if err := s.checkEpoch(ctx, tx, epoch); err != nil {
			return err
		}
		now, err := s.dbNow(ctx, tx)
		if err != nil {
			return err
		}
		pending, err := s.lockPending(ctx, tx, ids)
		if err != nil || len(pending) == 0 {
			return err
		}
		for start := 0; start < len(pending); start += 1000 {
			p := runsStartParams{StartedAt: now, IDs: pending[start:min(start+1000, len(pending))]}
			if _, err := s.q.RunsStart(ctx, tx, p); err != nil {
				return fmt.Errorf("start %d runs: %w", len(pending), err)
			}
		}
		isPending := make(map[int64]bool, len(pending))
		for _, id := range pending {
			isPending[id] = true
		}
		var rows []attemptRow
		var predicted []int64 // run id, makespan pairs
		for _, r := range runs {
			if !isPending[r.RunID] {
				continue
			}
			for _, a := range r.Attempts {
				rows = append(rows, attemptRow{runID: r.RunID, NewAttempt: a})
			}
			if r.PredictedMS > 0 {
				predicted = append(predicted, r.RunID, r.PredictedMS)
			}
		}
		if err := s.insertAttemptRows(ctx, tx, lease, rows); err != nil {
			return err
		}
		if err := s.setPredicted(ctx, tx, predicted); err != nil {
			return err
		}
		started = pending
		return nil
	})
	if err != nil {
		return nil, err
	}
	return started, nil
}

// lockPending locks the runs of ids (sorted) that are pending and returns
// their ids, in chunks of 1000.
func (s *Store) lockPending(ctx context.Context, tx *sqlx.Tx, ids []int64) ([]int64, error) {
	var out []int64
	for start := 0; start < len(ids); start += 1000 {
		chunk, err := s.q.RunsLockPending(ctx, tx, ids[start:min(start+1000, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("lock %d pending runs: %w", len(ids), err)
		}
		out = append(out, chunk...)
	}
	return out, nil
}

// attemptRow is a first attempt of a slot of a run, for a multi-row insert.
type attemptRow struct {
	runID int64
	NewAttempt
}

// insertAttemptRows inserts attempts of any runs, 512 rows per statement:
// placed ones with their lease, and those without an executor unplaced.
func (s *Store) insertAttemptRows(ctx context.Context, tx *sqlx.Tx, lease time.Duration, rows []attemptRow) error {
	var placed, waiting []attemptRow
	for _, a := range rows {
		if a.ExecutorID == 0 {
			waiting = append(waiting, a)
		} else {
			placed = append(placed, a)
		}
	}
	const batch = 512
	for start := 0; start < len(placed); start += batch {
		chunk := placed[start:min(start+batch, len(placed))]
		ps := make([]attemptInsertParams, len(chunk))
		for i, a := range chunk {
			ps[i] = attemptInsertParams{RunID: a.runID, Slot: a.Slot, Attempt: a.Attempt, ExecutorID: a.ExecutorID, LeaseMS: lease.Milliseconds()}
		}
		if _, err := s.q.AttemptInsert(ctx, tx, ps); err != nil {
			return fmt.Errorf("insert %d slot attempts: %w", len(chunk), err)
		}
	}
	for start := 0; start < len(waiting); start += batch {
		chunk := waiting[start:min(start+batch, len(waiting))]
		ps := make([]attemptInsertWaitingParams, len(chunk))
		for i, a := range chunk {
			ps[i] = attemptInsertWaitingParams{RunID: a.runID, Slot: a.Slot, Attempt: a.Attempt}
		}
		if _, err := s.q.AttemptInsertWaiting(ctx, tx, ps); err != nil {
			return fmt.Errorf("insert %d slot attempts held back by a cap: %w", len(chunk), err)
		}
	}
	return nil
}

// setPredicted records predicted makespans: pairs of (run id, ms), one
// statement per 1000 runs.
func (s *Store) setPredicted(ctx context.Context, tx *sqlx.Tx, pairs []int64) error {
	type pred struct{ id, ms int64 }
	preds := make([]pred, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		preds = append(preds, pred{pairs[i], pairs[i+1]})
	}
	slices.SortFunc(preds, func(a, b pred) int { return cmp.Compare(a.id, b.id) }) // byKey searches ids
	for start := 0; start < len(preds); start += caseRowsPerStatement {
		chunk := preds[start:min(start+caseRowsPerStatement, len(preds))]
		ids, ms := make([]int64, len(chunk)), make([]any, len(chunk))
		for i, p := range chunk {
			ids[i], ms[i] = p.id, p.ms
		}
		q, args, err := byKey(s.q.get(qRunsSetPredicted), "id", ids, ms)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("record predicted makespans of %d runs: %w", len(chunk), err)
		}
	}
	return nil
}

// SlotStatsOfJobs returns the measured slots of many jobs, by job then slot.
func (s *Store) SlotStatsOfJobs(ctx context.Context, jobIDs []int64) (map[int64][]SlotStat, error) {
	out := map[int64][]SlotStat{}
	for start := 0; start < len(jobIDs); start += 1000 {
		rows, err := s.q.SlotStatsOfJobs(ctx, s.db, jobIDs[start:min(start+1000, len(jobIDs))])
		if err != nil {
			return nil, fmt.Errorf("slot stats of %d jobs: %w", len(jobIDs), err)
		}
		for _, r := range rows {
			out[r.JobID] = append(out[r.JobID], SlotStat{Slot: r.Slot, CostMS: r.CostMS, Records: r.Records, Samples: r.Samples, LastExecutor: r.LastExecutor})
		}
	}
	return out, nil
}

// DispatchOfExecutor returns up to limit current attempts placed on an
// executor and not acknowledged by it, with a token larger than afterToken,
// oldest first: one push carries them, whatever their runs.
func (s *Store) DispatchOfExecutor(ctx context.Context, executorID, afterToken int64, limit int) ([]DispatchSlot, error) {
	out, err := s.q.DispatchOfExecutor(ctx, s.db, dispatchOfExecutorParams{ExecutorID: executorID, ID: afterToken, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("dispatch of executor %d: %w", executorID, err)
	}
	return out, nil
}

// MarkWaiting records on pending runs why they cannot start yet (shown on
// the run; cleared when it starts).
func (s *Store) MarkWaiting(ctx context.Context, reason msg.Msg, ids []int64) error {
	err := s.updatePending(ctx, qRunsWaiting, ids, func(chunk []int64) (int64, error) {
		return s.q.RunsWaiting(ctx, s.db, runsWaitingParams{Error: truncate(reason.String(), 2000), ErrorMsg: reason, IDs: chunk})
	})
	if err != nil {
		return fmt.Errorf("mark %d runs waiting: %w", len(ids), err)
	}
	return nil
}

// HoldPending holds pending runs until untilMS with reason (shown on the
// run): the leader passes them over until then (PendingPage), and wakes for
// them (NextPendingAfter). Runs no longer pending are left alone.
func (s *Store) HoldPending(ctx context.Context, untilMS int64, reason msg.Msg, ids []int64) error {
	err := s.updatePending(ctx, qRunsHold, ids, func(chunk []int64) (int64, error) {
		return s.q.RunsHold(ctx, s.db, runsHoldParams{HeldUntil: untilMS, Error: truncate(reason.String(), 2000), ErrorMsg: reason, IDs: chunk})
	})
	if err != nil {
		return fmt.Errorf("hold %d pending runs: %w", len(ids), err)
	}
	return nil
}

// FailPending ends pending runs as failed with reason, at atMS; runs no
// longer pending are left alone.
func (s *Store) FailPending(ctx context.Context, reason msg.Msg, atMS int64, ids []int64) error {
	err := s.updatePending(ctx, qRunsFailPending, ids, func(chunk []int64) (int64, error) {
		return s.q.RunsFailPending(ctx, s.db, runsFailPendingParams{FinishedAt: atMS, Error: truncate(reason.String(), 2000), ErrorMsg: reason, IDs: chunk})
	})
	if err != nil {
		return fmt.Errorf("fail %d pending runs: %w", len(ids), err)
	}
	return nil
}

// updatePending runs update, an autocommit update of pending runs by id,
// for ids sorted (the order their rows lock in) in chunks of 1000, each
// again on a deadlock or lock-wait timeout (see retry); name is the
// update's query, for the error.
func (s *Store) updatePending(ctx context.Context, name query, ids []int64, update func(chunk []int64) (int64, error)) error {
	ids = slices.Sorted(slices.Values(ids))
	for start := 0; start < len(ids); start += 1000 {
		chunk := ids[start:min(start+1000, len(ids))]
		if err := retry(ctx, func() error { _, err := update(chunk); return err }); err != nil {
			return fmt.Errorf("%s of %d tokens: %w", name, len(chunk), err)
		}
	}
	return nil
}

// Unacknowledged is an attempt its executor has not acknowledged in time.
type Unacknowledged struct {
	Token      int64  `db:"token"`
	ExecutorID int64  `db:"executor_id"`
	InstanceID string `db:"instance_id"`
}

// UnacknowledgedAttempts returns up to limit current attempts placed on an
// executor more than olderThanMS ago (database clock) that it has not
// acknowledged.
func (s *Store) UnacknowledgedAttempts(ctx context.Context, olderThanMS int64, limit int) ([]Unacknowledged, error) {
	out, err := s.q.AttemptsUnacknowledged(ctx, s.db, attemptsUnacknowledgedParams{OlderThanMS: olderThanMS, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("unacknowledged attempts: %w", err)
	}
	return out, nil
}
