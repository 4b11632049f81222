package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

const (
	benchJobs  = 10_000
	naiveCap   = 1_000
	benchBatch = 2000
)

// seedDueJobs inserts n 1-slot jobs firing every second, all due at due.
func seedDueJobs(b *testing.B, st *store.Store, n int, due time.Time) {
	b.Helper()
	const chunk = 1000
	for start := 0; start < n; start += chunk {
		var sb strings.Builder
		sb.WriteString(`INSERT INTO job (app, name, handler, cron_expr, time_zone, slot_count, slot_params, params, next_fire_at, created_at, updated_at) VALUES `)
		args := []any{}
		for i := start; i < min(start+chunk, n); i++ {
			if i > start {
				sb.WriteString(",")
			}
			sb.WriteString("(?, ?, 'h', '* * * * * *', 'UTC', 1, '', '', ?, ?, ?)")
			args = append(args, "bench", fmt.Sprintf("job-%06d", i), due.UnixMilli(), due.UnixMilli(), due.UnixMilli())
		}
		_, err := st.DB().Exec(sb.String(), args...)
		require.NoError(b, err)
	}
}

func rearm(b *testing.B, st *store.Store, due time.Time) {
	b.Helper()
	_, err := st.DB().Exec(`UPDATE job SET next_fire_at = ?`, due.UnixMilli())
	require.NoError(b, err)
}

// BenchmarkFiring measures the sustained firing rate of 1-slot jobs on
// MariaDB: the leader's batched claim (one transaction per 500 jobs) side by
// side with the naive way (one transaction per job: lock, insert, advance).
func BenchmarkFiring(b *testing.B) {
	ctx := context.Background()
	st := storetest.Open(b, sqlfiles.MySQL)
	_, err := st.ClaimEpoch(ctx, 1, "bench")
	require.NoError(b, err)
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	seedDueJobs(b, st, benchJobs, base)

	for _, workers := range []int{1, 2} {
		// Each sub-benchmark fires its own future hours: no run key repeats.
		start := base.Add(time.Duration(workers) * 10_000 * time.Hour)
		b.Run(fmt.Sprintf("batched-%dworkers", workers), func(b *testing.B) { benchBatched(b, st, start, workers) })
	}
	b.Run("naive-per-job-tx", func(b *testing.B) { benchNaive(b, st, base) })
}

func benchBatched(b *testing.B, st *store.Store, base time.Time, workers int) {
	ctx := context.Background()
	c := clock.NewManual(time.Time{})
	s, err := scheduler.New(scheduler.Config{ID: "bench", Clock: c, BatchSize: benchBatch, FireWorkers: workers}, st, &fakePusher{})
	require.NoError(b, err)
	fired := 0
	var elapsed time.Duration
	for i := 0; b.Loop(); i++ {
		due := base.Add(time.Duration(i+1) * time.Hour)
		b.StopTimer()
		rearm(b, st, due)
		c.Set(due)
		b.StartTimer()
		start := time.Now()
		before := s.Stats().Fired
		require.NoError(b, s.FireAll(ctx, 1))
		elapsed += time.Since(start)
		fired += int(s.Stats().Fired - before) // each job fires up to 6 times: now and within the 5 s pre-read window
	}
	b.ReportMetric(float64(fired)/elapsed.Seconds(), "firings/s")
}

func benchNaive(b *testing.B, st *store.Store, base time.Time) {
	ctx := context.Background()
	fired := 0
	var elapsed time.Duration
	for i := 0; b.Loop(); i++ {
		due := base.Add(time.Duration(i+1) * time.Hour).Add(30 * time.Minute)
		b.StopTimer()
		rearm(b, st, due)
		b.StartTimer()
		start := time.Now()
		for {
			n, err := naiveFireOne(ctx, st, due)
			require.NoError(b, err)
			fired += n
			if n == 0 || fired%naiveCap == 0 {
				break // the naive way is slow: a sample of naiveCap firings gives its rate
			}
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(fired)/elapsed.Seconds(), "firings/s")
}

// rawTx runs fn in a transaction on the store's pool (the naive loop writes
// its own SQL: production code goes through store.Tx).
func rawTx(ctx context.Context, st *store.Store, fn func(tx *sqlx.Tx) error) error {
	tx, err := st.DB().BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// naiveFireOne is the textbook loop: one transaction per job.
func naiveFireOne(ctx context.Context, st *store.Store, now time.Time) (int, error) {
	fired := 0
	err := rawTx(ctx, st, func(tx *sqlx.Tx) error {
		var j struct {
			ID   int64 `db:"id"`
			Next int64 `db:"next_fire_at"`
		}
		err := tx.GetContext(ctx, &j, `SELECT id, next_fire_at FROM job WHERE enabled = 1 AND next_fire_at <= ? ORDER BY next_fire_at LIMIT 1 FOR UPDATE SKIP LOCKED`, now.UnixMilli())
		if err != nil {
			if strings.Contains(err.Error(), "no rows") {
				return nil
			}
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT IGNORE INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, created_at) VALUES (?, ?, 'cron', 'pending', '', 1, 1, ?)`, j.ID, j.Next, now.UnixMilli()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE job SET next_fire_at = ? WHERE id = ?`, j.Next+3_600_000*1000, j.ID); err != nil {
			return err
		}
		fired = 1
		return nil
	})
	return fired, err
}
