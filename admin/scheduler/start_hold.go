package scheduler

import (
	"context"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// hold decides whether pending run r is held instead of started this
// round: its job waits for runs of its business date that have not
// succeeded (holdForWaits), or it belongs to a job backfill whose turn it
// is not (holdForBackfill). A held run is passed over until HoldRecheck
// later (store.HoldPending), its reason shown on the run; a run whose waits
// timed out is ended instead (held true: it does not start either).
func (st *starter) hold(ctx context.Context, r store.PendingRun) (bool, error) {
	if held, err := st.holdForWaits(ctx, r); err != nil || held {
		return held, err
	}
	return st.holdForBackfill(ctx, r)
}

// heldRuns are pending runs of a page held until one instant for one
// reason.
type heldRuns struct {
	until  time.Time
	reason msg.Msg
	ids    []int64
}

// holdRun records that run id is held until until for reason, written by
// settleHolds at the end of the page (one statement per reason, not one
// per run).
func (st *starter) holdRun(id int64, until time.Time, reason msg.Msg) {
	if st.held == nil {
		st.held = map[string]*heldRuns{}
	}
	key := reason.String() + "\x00" + until.UTC().Format(time.RFC3339Nano)
	h := st.held[key]
	if h == nil {
		h = &heldRuns{until: until, reason: reason}
		st.held[key] = h
	}
	h.ids = append(h.ids, id)
}

// settleHolds writes the page's holds.
func (st *starter) settleHolds(ctx context.Context) error {
	for _, h := range st.held {
		if err := st.s.store.HoldPending(ctx, h.until.UnixMilli(), h.reason, h.ids); err != nil {
			return err
		}
	}
	st.held = nil
	return nil
}
