package store_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// BenchmarkListRuns measures (Store.Runs) the run list of the console and the API on a
// big history in MariaDB: SHARDJOB_BENCH_RUNS runs (default 1,000,000)
// over 10,000 jobs, 1 % of them failed. Side by side: keyset pagination
// (what the API does: id < before) and OFFSET pagination (the naive way),
// 100 rows a page, 2,000 pages deep; filtered by status and by job.
func BenchmarkListRuns(b *testing.B) {
	ctx := context.Background()
	n := 1_000_000
	if v := os.Getenv("SHARDJOB_BENCH_RUNS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err, "SHARDJOB_BENCH_RUNS")
	}
	st := storetest.Open(b, sqlfiles.MySQL)
	db := st.DB()
	// 10,000 jobs, then n runs with one INSERT … SELECT over MariaDB's
	// sequence engine (seconds, not minutes).
	_, err := db.ExecContext(ctx, `INSERT INTO job (app, name, description, handler, cron_expr, time_zone, misfire_policy, overlap_policy,
		misfire_threshold_ms, max_catch_up, slot_count, slot_params, params, timeout_ms, retry_max, retry_backoff_ms, enabled, paused,
		child_job_ids, next_fire_at, created_at, updated_at, version)
		SELECT CONCAT('app', seq % 20), CONCAT('job', seq), '', 'h', '* * * * *', 'UTC', 'run_once', 'allow', 0, 0, 1, '', '', 0, 0, 0, 1, 0, '', NULL, 0, 0, 1
		FROM seq_1_to_10000`)
	require.NoError(b, err)
	_, err = db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, created_at, finished_at, app)
		SELECT seq %% 10000 + 1, seq, 'cron', IF(seq %% 100 = 0, 'failed', 'succeeded'), '', 1, 1, seq, seq, CONCAT('app', (seq %% 10000 + 1) %% 20)
		FROM seq_1_to_%d`, n))
	require.NoError(b, err)
	_, err = db.ExecContext(ctx, `ANALYZE TABLE job_run, job`)
	require.NoError(b, err)

	const pageSize, depth = 100, 2000
	deepID := func(f store.RunFilter) int64 { // the id the keyset starts after, depth pages in
		var id int64
		q := `SELECT id FROM job_run WHERE 1=1`
		var args []any
		if f.Status != "" {
			q += ` AND status = ?`
			args = append(args, f.Status)
		}
		q += ` ORDER BY id DESC LIMIT 1 OFFSET ?`
		args = append(args, min(depth*pageSize, n/200)) // the failed ones: half-way
		require.NoError(b, db.GetContext(ctx, &id, q, args...))
		return id
	}
	cases := []struct {
		name string
		run  func(b *testing.B)
	}{
		{"first-page", func(b *testing.B) {
			runs, err := st.Runs(ctx, store.RunFilter{Limit: pageSize})
			require.NoError(b, err)
			require.Len(b, runs, pageSize)
		}},
		{"keyset-deep-page", func(b *testing.B) {
			before := deepID(store.RunFilter{})
			b.ResetTimer()
			for range b.N {
				runs, err := st.Runs(ctx, store.RunFilter{BeforeID: before, Limit: pageSize})
				require.NoError(b, err)
				require.Len(b, runs, pageSize)
			}
		}},
		{"offset-deep-page(naive)", func(b *testing.B) {
			for range b.N {
				var ids []int64
				require.NoError(b, db.SelectContext(ctx, &ids, `SELECT r.id FROM job_run r LEFT JOIN job j ON j.id = r.job_id ORDER BY r.id DESC LIMIT ? OFFSET ?`, pageSize, min(depth*pageSize, n-pageSize)))
				require.Len(b, ids, pageSize)
			}
		}},
		{"status-failed-deep-page", func(b *testing.B) {
			before := deepID(store.RunFilter{Status: store.RunFailed})
			b.ResetTimer()
			for range b.N {
				runs, err := st.Runs(ctx, store.RunFilter{Status: store.RunFailed, BeforeID: before, Limit: pageSize})
				require.NoError(b, err)
				require.NotEmpty(b, runs)
			}
		}},
		{"one-job", func(b *testing.B) {
			for range b.N {
				runs, err := st.Runs(ctx, store.RunFilter{JobID: 4242, Limit: pageSize})
				require.NoError(b, err)
				require.Len(b, runs, min(pageSize, n/10000))
			}
		}},
		{"one-app-of-20", func(b *testing.B) {
			for range b.N {
				runs, err := st.Runs(ctx, store.RunFilter{Apps: []string{"app7"}, Limit: pageSize})
				require.NoError(b, err)
				require.Len(b, runs, pageSize)
			}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.name == "first-page" {
				for range b.N {
					c.run(b)
				}
			} else {
				c.run(b)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
		})
	}
}
