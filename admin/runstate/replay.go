package runstate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// Replay is a replay by hand of dead letters (docs/failures.md, "Dead
// letters"): each letter's slot runs again as a new attempt of the same
// run.
type Replay struct {
	// IDs are the dead letters to replay.
	IDs []int64
	// Params, when valid, replace the params of the replayed slots (every
	// later attempt of those slots in their runs runs with them).
	Params sql.NullString
	// Force replays letters that were replayed already.
	Force bool
	// By is who replays (the audit log's actor).
	By string
}

// Refusal is why one dead letter is not replayed.
type Refusal struct {
	ID     int64
	Reason msg.Msg
}

// ErrReplayRace is returned when a slot or a letter changed between the
// replay's checks and its writes (a concurrent replay or result): nothing
// was written; the caller may try again.
var ErrReplayRace = errors.New("replay: a dead letter or its slot changed meanwhile")

// replayPlan decides a replay from what is locked: the letters (by id),
// the current attempt of each letter's slot (by letter; absent: the run
// is gone) and the runs (by id). A letter is refused when it does not
// exist, was replayed and force is not set, its run is gone or its job
// deleted, or its slot runs or succeeded since. The slots to run again
// are the others, once per slot: two letters of one slot in one request
// share its new attempt.
func replayPlan(ids []int64, letters map[int64]store.DeadLetter, slots map[int64]store.DeadSlot, runs map[int64]bool, force bool) (plan []store.SlotReplay, refused []Refusal) {
	type slotKey struct {
		run  int64
		slot int
	}
	planned := map[slotKey]bool{}
	for _, id := range ids {
		d, ok := letters[id]
		if !ok {
			refused = append(refused, Refusal{id, msg.New(msg.DeadNotFound, "id", id)})
			continue
		}
		if d.ReplayedAt.Valid && !force {
			refused = append(refused, Refusal{id, msg.New(msg.DeadReplayed, "id", id, "user", d.ReplayedBy,
				"at", time.UnixMilli(d.ReplayedAt.Int64).UTC().Format(time.RFC3339), "token", d.ReplayToken.Int64)})
			continue
		}
		sl, ok := slots[id]
		if !ok || !runs[d.RunID] {
			refused = append(refused, Refusal{id, msg.New(msg.DeadRunGone, "id", id, "run", d.RunID)})
			continue
		}
		switch {
		case sl.JobDeleted:
			refused = append(refused, Refusal{id, msg.New(msg.DeadJobDeleted, "id", id, "job", d.JobName)})
		case active(sl.Status):
			refused = append(refused, Refusal{id, msg.New(msg.DeadSlotActive, "id", id, "slot", d.Slot, "run", d.RunID, "token", sl.Token)})
		case sl.Status == store.AttemptSucceeded:
			refused = append(refused, Refusal{id, msg.New(msg.DeadSlotSucceeded, "id", id, "slot", d.Slot, "run", d.RunID, "token", sl.Token)})
		case !planned[slotKey{sl.RunID, sl.Slot}]:
			planned[slotKey{sl.RunID, sl.Slot}] = true
			plan = append(plan, store.SlotReplay{Token: sl.Token, RunID: sl.RunID, Slot: sl.Slot, Attempt: sl.Attempt})
		}
	}
	return plan, refused
}

// Replay runs the slots of dead letters again (see replayPlan), all or
// none, in one transaction of a fixed number of statements whatever the
// number of letters: the letters, their slots' current attempts and their
// runs are locked (in that order; attempts and runs in id order, as
// results lock them), the current attempts superseded, one new unplaced
// attempt per slot inserted (a newer token, a fresh retry budget; the
// leader places it), the runs that ended reopened (running), and the
// letters marked replayed with the new tokens — only letters not replayed
// yet unless forced, so that a concurrent second replay of the same
// letters creates nothing. With refusals nothing is written and they are
// returned; otherwise the letters as marked.
func (m *Machine) Replay(ctx context.Context, r Replay) (replayed []store.DeadLetter, refused []Refusal, err error) {
	ids := slices.Clone(r.IDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	err = m.st.Tx(ctx, func(tx *store.Tx) error {
		replayed, refused = nil, nil
		locked, err := tx.LockDeadLetters(ctx, ids)
		if err != nil {
			return err
		}
		letters := make(map[int64]store.DeadLetter, len(locked))
		var runIDs []int64
		for _, d := range locked {
			letters[d.ID] = d
			runIDs = append(runIDs, d.RunID)
		}
		cur, err := tx.LockDeadSlots(ctx, ids)
		if err != nil {
			return err
		}
		slots := make(map[int64]store.DeadSlot, len(cur))
		for _, s := range cur {
			slots[s.DeadID] = s
		}
		slices.Sort(runIDs)
		runIDs = slices.Compact(runIDs)
		runs := map[int64]bool{}
		if len(runIDs) > 0 {
			lockedRuns, err := tx.LockRuns(ctx, runIDs)
			if err != nil {
				return err
			}
			for _, lr := range lockedRuns {
				runs[lr.ID] = true
			}
		}
		plan, no := replayPlan(r.IDs, letters, slots, runs, r.Force)
		if len(no) > 0 {
			refused = no
			return nil
		}
		for i := range plan {
			plan[i].Params = r.Params
		}
		now, err := tx.Now(ctx)
		if err != nil {
			return err
		}
		created, err := tx.ReplaySlots(ctx, plan, now)
		if err != nil {
			return err
		}
		if created != int64(len(plan)) {
			return fmt.Errorf("%w: %d of %d slots", ErrReplayRace, created, len(plan))
		}
		marked, err := tx.MarkReplayed(ctx, ids, now, r.By, r.Force)
		if err != nil {
			return err
		}
		if marked != int64(len(ids)) {
			return fmt.Errorf("%w: %d of %d letters", ErrReplayRace, marked, len(ids))
		}
		if _, err := m.settleRuns(ctx, tx, runIDs); err != nil { // counters; none ends: each has a new attempt
			return err
		}
		replayed, err = tx.LockDeadLetters(ctx, ids)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return replayed, refused, nil
}
