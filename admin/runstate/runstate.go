package runstate

import (
	"context"
	"fmt"
	"slices"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// Machine applies the run state machine's decisions to the platform
// database, each change in one store transaction. It is safe for
// concurrent use.
type Machine struct {
	st *store.Store
}

// New returns the state machine over st.
func New(st *store.Store) *Machine { return &Machine{st: st} }

// FinishAttempt records an outcome if the token is still current and active,
// then finishes the run when no slot is active any more. accepted is false
// for stale or unknown tokens; their result is ignored.
func (m *Machine) FinishAttempt(ctx context.Context, o store.SlotOutcome) (accepted bool, err error) {
	acc, err := m.FinishAttempts(ctx, []store.SlotOutcome{o})
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
func (m *Machine) FinishAttempts(ctx context.Context, outcomes []store.SlotOutcome) (accepted []bool, err error) {
	accepted = make([]bool, len(outcomes))
	for start := 0; start < len(outcomes); start += maxResultsPerTx {
		end := min(start+maxResultsPerTx, len(outcomes))
		if err := m.finishBatch(ctx, outcomes[start:end], accepted[start:end]); err != nil {
			return nil, err
		}
	}
	return accepted, nil
}

// finishBatch applies one batch in one transaction with a fixed number of
// statements: the attempts locked in id order, one update of all outcomes,
// one upsert of slot statistics, the touched runs locked in id order,
// counted and settled; alarms and child runs in the same transaction.
func (m *Machine) finishBatch(ctx context.Context, outcomes []store.SlotOutcome, accepted []bool) error {
	tokens := make([]int64, len(outcomes))
	for i, o := range outcomes {
		tokens[i] = o.Token
	}
	slices.Sort(tokens)
	tokens = slices.Compact(tokens)
	return m.st.Tx(ctx, func(tx *store.Tx) error {
		clear(accepted) // the transaction may be retried
		cur, err := tx.LockAttempts(ctx, tokens)
		if err != nil || len(cur) == 0 {
			return err
		}
		info, err := tx.AttemptInfos(ctx, tokens)
		if err != nil {
			return err
		}
		acc, applied := accept(outcomes, cur)
		for _, o := range applied {
			if _, ok := info[o.Token]; !ok {
				return fmt.Errorf("run of token %d: %w", o.Token, store.ErrNotFound)
			}
		}
		copy(accepted, acc)
		if len(applied) == 0 {
			return nil
		}
		if err := tx.ApplyOutcomes(ctx, applied); err != nil {
			return err
		}
		if err := tx.RecordSlotStats(ctx, applied, info); err != nil {
			return err
		}
		if err := writeDeadLetters(ctx, tx, deadTokens(applied, info)); err != nil {
			return err
		}
		if err := tx.CountBreakers(ctx, breakerCounts(applied, info)); err != nil {
			return err
		}
		alarms := slotAlarms(applied, info)
		runIDs := make([]int64, 0, len(applied))
		for _, o := range applied {
			runIDs = append(runIDs, info[o.Token].RunID)
		}
		slices.Sort(runIDs) // lock runs in one order: concurrent batches do not deadlock
		runIDs = slices.Compact(runIDs)
		runAlarms, err := m.settleRuns(ctx, tx, runIDs)
		if err != nil {
			return err
		}
		return tx.RaiseAlarms(ctx, append(alarms, runAlarms...)...)
	})
}

// writeDeadLetters keeps the dead attempts of tokens as dead letters, in
// two statements (one read of what they ran with, one multi-row insert).
func writeDeadLetters(ctx context.Context, tx *store.Tx, tokens []int64) error {
	if len(tokens) == 0 {
		return nil
	}
	sources, err := tx.DeadSources(ctx, tokens)
	if err != nil {
		return err
	}
	return tx.InsertDeadLetters(ctx, deadLetters(sources))
}

// settleRuns updates the counters of runs (sorted ids) and finishes those
// with no active slot (see settle), and returns the run_failed alarms to
// raise. A run ends only from running; its finished_at is the database
// clock when it is settled. A run that succeeds creates one pending run of
// each enabled child job of its job, in the same transaction.
func (m *Machine) settleRuns(ctx context.Context, tx *store.Tx, runIDs []int64) ([]store.Alarm, error) {
	locked, err := tx.LockRuns(ctx, runIDs)
	if err != nil || len(locked) == 0 {
		return nil, err
	}
	counts, err := tx.RunSlotCounts(ctx, runIDs)
	if err != nil {
		return nil, err
	}
	rows, alarms, parents := settle(locked, counts)
	if err := tx.SettleRuns(ctx, rows); err != nil {
		return nil, err
	}
	if err := completeMaxRuns(ctx, tx, maxRunsCandidates(rows, locked, counts)); err != nil {
		return nil, err
	}
	now := locked[0].Now
	for _, p := range parents {
		for _, id := range p.Children {
			job, found, err := tx.ChildJob(ctx, id)
			if err != nil {
				return nil, err
			}
			r, ok := childRun(p, job, now)
			if !found || !ok {
				continue // deleted or disabled child: nothing to trigger
			}
			if err := tx.InsertChildRun(ctx, p.Epoch, r); err != nil {
				return nil, err
			}
		}
	}
	return alarms, nil
}

// completeMaxRuns completes, in the transaction that settles their runs,
// the jobs (sorted ids) whose max_runs scheduled runs have now succeeded:
// a job completes as soon as its Nth successful scheduled run settles, not
// at its next firing time (the leader still checks there too).
func completeMaxRuns(ctx context.Context, tx *store.Tx, jobIDs []int64) error {
	if len(jobIDs) == 0 {
		return nil
	}
	jobs, err := tx.JobsMaxRuns(ctx, jobIDs)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		why := jobrules.MaxRunsReached(store.Job{JobWindow: store.JobWindow{MaxRuns: j.MaxRuns}}, store.RunCounts{Succeeded: j.Succeeded})
		if why.IsZero() {
			continue
		}
		if err := tx.CompleteJobIfOpen(ctx, j.ID, why); err != nil {
			return err
		}
	}
	return nil
}

// Cancel moves a pending or running run to cancelled and cancels its
// unfinished attempts (their executors are told by push and in their next
// heartbeat response). It returns the attempts to stop and whether the run
// was cancelled by this call.
func (m *Machine) Cancel(ctx context.Context, runID int64, reason msg.Msg) ([]store.ActiveToken, bool, error) {
	var active []store.ActiveToken
	cancelled := false
	err := m.st.Tx(ctx, func(tx *store.Tx) error {
		active, cancelled = nil, false
		now, err := tx.Now(ctx)
		if err != nil {
			return err
		}
		for _, from := range []string{store.RunPending, store.RunRunning} {
			ok, err := tx.TransitionRun(ctx, transition(runID, from, store.RunCancelled, now, reason))
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
		if active, err = tx.ActiveAttemptsOfRun(ctx, runID); err != nil {
			return err
		}
		return tx.CancelAttemptsOfRun(ctx, runID, reason)
	})
	return active, cancelled, err
}

// EndPending ends a run that has not started, as the leader decides before
// starting it: cancelled (its job was deleted) or skipped (its job was
// disabled or paused), finished at atMS. It returns false if the run was
// no longer pending.
func (m *Machine) EndPending(ctx context.Context, runID int64, to string, atMS int64, reason msg.Msg) (bool, error) {
	if to != store.RunCancelled && to != store.RunSkipped {
		return false, fmt.Errorf("run %d: a pending run ends cancelled or skipped, not %s", runID, to)
	}
	return m.st.TransitionRun(ctx, transition(runID, store.RunPending, to, atMS, reason))
}

// Retry reopens a finished run whose slots failed or were cancelled: it
// moves the run back to running and creates a new, unplaced attempt for
// each such slot (the leader places them). It returns how many slots it
// retries; 0 when the run has none or is not in a status a retry reopens
// (reopenable). A retry by hand starts a fresh retry budget: the job's
// retry_max applies again to the new attempts.
func (m *Machine) Retry(ctx context.Context, runID int64) (int, error) {
	n := 0
	err := m.st.Tx(ctx, func(tx *store.Tx) error {
		n = 0
		failed, err := tx.FailedAttemptsOfRun(ctx, runID)
		if err != nil || len(failed) == 0 {
			return err
		}
		now, err := tx.Now(ctx)
		if err != nil {
			return err
		}
		reopened := false
		for _, from := range reopenable {
			if reopened, err = tx.ReopenRun(ctx, runID, from, now); err != nil {
				return err
			}
			if reopened {
				break
			}
		}
		if !reopened {
			return nil
		}
		for _, a := range failed {
			tok, err := tx.RetryAttempt(ctx, a)
			if err != nil {
				return err
			}
			if tok > 0 {
				n++
			}
		}
		return nil
	})
	return n, err
}

// DenyRetry ends the failed slot of attempt token, which its job's retry
// budget does not let retry (docs/failures.md): the attempt becomes final
// with reason, a slot_dead alarm says why, and its run settles — in one
// transaction fenced by the leader's epoch. false when the attempt was no
// longer a failed current attempt with a retry left (nothing changed).
func (m *Machine) DenyRetry(ctx context.Context, epoch, token int64, reason msg.Msg) (bool, error) {
	denied := false
	err := m.st.Tx(ctx, func(tx *store.Tx) error {
		denied = false
		if err := tx.CheckEpoch(ctx, epoch); err != nil {
			return err
		}
		if _, err := tx.LockAttempts(ctx, []int64{token}); err != nil {
			return err
		}
		info, err := tx.AttemptInfos(ctx, []int64{token})
		if err != nil {
			return err
		}
		a, ok := info[token]
		if !ok {
			return nil
		}
		if denied, err = tx.DenyRetry(ctx, token, reason); err != nil || !denied {
			return err
		}
		if err := writeDeadLetters(ctx, tx, []int64{token}); err != nil { // a slot the budget let die is dead
			return err
		}
		runAlarms, err := m.settleRuns(ctx, tx, []int64{a.RunID})
		if err != nil {
			return err
		}
		return tx.RaiseAlarms(ctx, append([]store.Alarm{budgetAlarm(a, reason)}, runAlarms...)...)
	})
	if err != nil {
		return false, fmt.Errorf("deny the retry of token %d: %w", token, err)
	}
	return denied, nil
}
