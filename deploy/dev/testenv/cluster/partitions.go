package cluster

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"
)

// PartitionObs is one change of a scheduling partition's fencing record
// (table scheduler_partition) seen by a PartitionWatch.
type PartitionObs struct {
	Partition int
	Epoch     int64
	Holder    string
	ClaimedMS int64     // the database time of the claim (claimed_ms)
	SeenAt    time.Time // when the watch first read it: the claim had committed by then
}

// PartitionWatch polls the partitions' fencing records of a platform
// database and records every change of a partition's epoch.
type PartitionWatch struct {
	mu   sync.Mutex
	obs  []PartitionObs
	last map[int]int64
	stop func()
}

// WatchPartitions polls scheduler_partition through db every 50ms until
// Stop or the end of the test. Query errors (the database is down on
// purpose, an older schema) are skipped: the next tick retries.
func WatchPartitions(t testing.TB, db *sql.DB) *PartitionWatch {
	w := &PartitionWatch{last: map[int]int64{}}
	w.stop = pollEvery(t, 50*time.Millisecond, func(ctx context.Context) { w.poll(ctx, db) })
	return w
}

func (w *PartitionWatch) poll(ctx context.Context, db *sql.DB) {
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rows, err := db.QueryContext(qctx, "SELECT id, epoch, holder, claimed_ms FROM scheduler_partition ORDER BY id")
	if err != nil {
		return
	}
	defer rows.Close()
	var got []PartitionObs
	for rows.Next() {
		var o PartitionObs
		if rows.Scan(&o.Partition, &o.Epoch, &o.Holder, &o.ClaimedMS) != nil {
			return
		}
		got = append(got, o)
	}
	if rows.Err() != nil {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range got {
		if e, ok := w.last[o.Partition]; ok && e == o.Epoch {
			continue
		}
		o.SeenAt = now
		w.last[o.Partition] = o.Epoch
		w.obs = append(w.obs, o)
	}
}

// Stop ends the polling; it may be called more than once.
func (w *PartitionWatch) Stop() { w.stop() }

// Observed returns the partition changes seen so far, in the order seen.
func (w *PartitionWatch) Observed() []PartitionObs {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]PartitionObs(nil), w.obs...)
}

// pollEvery calls poll at once and then every period in a goroutine of its
// own until the returned stop (which may be called more than once) or the
// end of the test; poll's context ends at stop.
func pollEvery(t testing.TB, period time.Duration, poll func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}
