package cluster

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"
)

// LeaderObs is one change of the leader row (table leader, id 1) seen by a
// LeaderWatch.
type LeaderObs struct {
	Epoch   int64
	Holder  string
	SinceMS int64     // the database time of the claim statement (leader.since_ms)
	SeenAt  time.Time // when the watch first read it: the claim had committed by then
}

// LeaderWatch polls the leader row of a platform database and records
// every change of epoch: which replica led when, as the database saw it.
type LeaderWatch struct {
	mu   sync.Mutex
	obs  []LeaderObs
	stop func()
}

// WatchLeader polls the leader row through db every 50ms until Stop or
// the end of the test. Query errors (the database is down on purpose) are
// skipped: the next tick retries.
func WatchLeader(t testing.TB, db *sql.DB) *LeaderWatch {
	w := &LeaderWatch{}
	w.stop = pollEvery(t, 50*time.Millisecond, func(ctx context.Context) {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		var o LeaderObs
		if err := db.QueryRowContext(qctx, "SELECT epoch, holder, since_ms FROM leader WHERE id = 1").Scan(&o.Epoch, &o.Holder, &o.SinceMS); err != nil {
			return
		}
		o.SeenAt = time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		if n := len(w.obs); n == 0 || w.obs[n-1].Epoch != o.Epoch {
			w.obs = append(w.obs, o)
		}
	})
	return w
}

// Stop ends the polling; it may be called more than once.
func (w *LeaderWatch) Stop() { w.stop() }

// Observed returns the leader changes seen so far, in order.
func (w *LeaderWatch) Observed() []LeaderObs {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]LeaderObs(nil), w.obs...)
}

// Epoch returns the observation of epoch e, if any.
func (w *LeaderWatch) Epoch(e int64) (LeaderObs, bool) {
	for _, o := range w.Observed() {
		if o.Epoch == e {
			return o, true
		}
	}
	return LeaderObs{}, false
}
