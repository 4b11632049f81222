package scheduler

import (
	"context"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// A job backfill (docs/workflows.md, "Backfill of a plain job") runs at most
// its parallelism of runs at once, in its order: its runs were created in
// the order they start (oldest or newest date first), so the order of
// their ids is the backfill's. The pending page is ordered by scheduled
// time instead (for newest first, the reverse), so the turn is decided from
// the backfill's own list, read once per round: where it stood when the
// round began (store.BackfillTurns), and which of its runs this round let
// through, whose start transactions may still be in flight (st.flush).

// backfillTurn is a job backfill's turn in this round of the start path.
type backfillTurn struct {
	parallel int
	running  int           // running when the round read it, plus the runs let through since
	rank     map[int64]int // pending run id → its place among the backfill's due pending runs
	free     int           // how many of them start this round: parallel minus those running then
}

// holdForBackfill holds pending run r of a job backfill unless it is its
// turn: it is among the backfill's first pending runs (in the backfill's
// order) that fit below its parallelism with the runs running. A held run
// says why and is looked at again HoldRecheck later.
func (st *starter) holdForBackfill(ctx context.Context, r store.PendingRun) (bool, error) {
	if r.BackfillID == 0 {
		return false, nil
	}
	t, err := st.backfillTurn(ctx, r.BackfillID)
	if err != nil || t == nil {
		return false, err // a backfill that is gone holds nothing back
	}
	if rank, ok := t.rank[r.ID]; ok && rank < t.free {
		t.running++
		return false, nil
	}
	now := st.s.cfg.Clock.Now()
	st.holdRun(r.ID, now.Add(st.s.cfg.HoldRecheck), msg.New(msg.RunWaitsBackfill,
		"backfill", r.BackfillID, "parallel", t.parallel, "running", t.running))
	return true, nil
}

// backfillTurn returns the turn of job backfill id in this round, read
// from the store the first time the round meets one of its runs (nil: no
// such backfill).
func (st *starter) backfillTurn(ctx context.Context, id int64) (*backfillTurn, error) {
	if t, ok := st.turns[id]; ok {
		return t, nil
	}
	turns, err := st.s.store.BackfillTurns(ctx, []int64{id}, st.s.cfg.Clock.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	if st.turns == nil {
		st.turns = map[int64]*backfillTurn{}
	}
	bt, ok := turns[id]
	if !ok {
		st.turns[id] = nil
		return nil, nil
	}
	t := &backfillTurn{parallel: bt.Parallel, running: bt.Running, rank: make(map[int64]int, len(bt.Pending)),
		free: max(bt.Parallel-bt.Running, 0)}
	for i, runID := range bt.Pending {
		t.rank[runID] = i
	}
	st.turns[id] = t
	return t, nil
}
