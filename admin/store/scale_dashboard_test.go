package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// fillScaleRollup writes a week of rollup minutes for every app of the
// scale fixture, the minutes before {minute} (the one the test folds):
// 10,080 minutes × 8 apps.
const fillScaleRollup = `INSERT INTO run_stat_minute (minute, app, started, succeeded, failed, lag_0, lag_3, lag_11)
SELECT {minute} - (seq DIV {apps} + 1) * 60000, CONCAT('app', seq % {apps}), 125, 119, 6, 100, 20, 5
FROM seq_0_to_{rows}`

// fillScaleMinuteAttempts gives each run that finishes in {minute} two slot
// attempts (the fold reads when its first slot started).
const fillScaleMinuteAttempts = `INSERT INTO slot_attempt (run_id, slot, attempt, status, started_at)
SELECT r.id, s.seq, 1, 'succeeded', r.started_at + 20 * s.seq
FROM job_run r JOIN seq_0_to_1 s
WHERE r.finished_at >= {minute} AND r.finished_at < {minute} + 60000`

// TestDashboardQueriesExamineOnlyTheirWork: on MariaDB with the scale
// fixture's 1,000,000 runs (1,000 a minute) and a week of rollup minutes
// for 8 apps, folding one minute examines O(the runs started and finished
// in it), and the dashboard's read O(the window's minutes × apps), never
// O(runs): Handler_read_% deltas, as TestPeriodicQueriesExamineOnlyTheirWork
// measures them.
func TestDashboardQueriesExamineOnlyTheirWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.OpenWith(t, sqlfiles.MySQL, func(c *store.Config) { c.MaxOpenConns = 1 })
	db := s.DB()
	dbNow, err := s.Now(ctx)
	require.NoError(t, err)
	now := dbNow.UnixMilli()
	minute := now - now%store.MinuteMS - 30*store.MinuteMS // in the fixture's busy hours
	const weekRows = 7 * 24 * 60 * scaleApps
	r := strings.NewReplacer("{now}", fmt.Sprint(now), "{runs}", fmt.Sprint(scaleRuns), "{apps}", fmt.Sprint(scaleApps),
		"{minute}", fmt.Sprint(minute), "{rows}", fmt.Sprint(weekRows-1))
	start := time.Now()
	for _, q := range []string{fillScaleRuns, fillScaleMinuteAttempts, fillScaleRollup} {
		_, err = db.ExecContext(ctx, r.Replace(q))
		require.NoError(t, err)
	}
	_, err = db.ExecContext(ctx, "ANALYZE TABLE job_run, slot_attempt, run_stat_minute")
	require.NoError(t, err)
	t.Logf("filled %d runs and %d rollup rows in %s", scaleRuns, weekRows, time.Since(start).Round(time.Millisecond))

	reads := func() int64 {
		rows, err := db.QueryContext(ctx, "SHOW SESSION STATUS LIKE 'Handler_read%'")
		require.NoError(t, err)
		defer rows.Close()
		var sum int64
		for rows.Next() {
			var name string
			var v int64
			require.NoError(t, rows.Scan(&name, &v))
			sum += v
		}
		require.NoError(t, rows.Err())
		return sum
	}
	base := reads()
	self := reads() - base

	_, err = s.InitRunStats(ctx, minute)
	require.NoError(t, err)
	var started, finished int
	require.NoError(t, db.Get(&started, "SELECT COUNT(*) FROM job_run WHERE started_at >= ? AND started_at < ?", minute, minute+store.MinuteMS))
	require.NoError(t, db.Get(&finished, "SELECT COUNT(*) FROM job_run WHERE finished_at >= ? AND finished_at < ?", minute, minute+store.MinuteMS))
	sums := func(rows []store.RunStat, err error) (int, error) { return len(rows), err }

	cases := []struct {
		name, what, bound string
		limit             func(n int) int
		run               func(ctx context.Context) (int, error)
	}{
		// n: runs started + runs finished in the minute. Per finished run:
		// its index entry, its row, the first of its attempts (and the
		// next key); per started run its index entry and its group.
		{"RunStatFold", "leader: fold one minute (1,000 runs a minute)", "6n + 100", func(n int) int { return 6*n + 100 },
			func(ctx context.Context) (int, error) {
				folded, err := s.FoldRunStats(ctx, minute)
				if err == nil && !folded {
					err = fmt.Errorf("minute %d not folded", minute)
				}
				return started + finished, err
			}},
		// n: rollup rows in the window (minutes × apps).
		{"RunStatRange (1h)", "GET /api/v1/dashboard?window=1h", "2n + 100", func(n int) int { return 2*n + 100 },
			func(ctx context.Context) (int, error) {
				_, err := sums(s.RunStats(ctx, store.RunStatFilter{FromMS: minute - 60*store.MinuteMS, ToMS: minute}))
				return 60 * scaleApps, err
			}},
		{"RunStatRange (7d)", "GET /api/v1/dashboard?window=7d", "2n + 100", func(n int) int { return 2*n + 100 },
			func(ctx context.Context) (int, error) {
				_, err := sums(s.RunStats(ctx, store.RunStatFilter{FromMS: minute - 7*24*60*store.MinuteMS, ToMS: minute}))
				return weekRows, err
			}},
		{"RunStatRangeOfApps (7d, one app)", "GET /api/v1/dashboard?window=7d, a user of one app", "2n + 100", func(n int) int { return 2*n + 100 },
			func(ctx context.Context) (int, error) {
				_, err := sums(s.RunStats(ctx, store.RunStatFilter{FromMS: minute - 7*24*60*store.MinuteMS, ToMS: minute, Apps: []string{"app3"}}))
				return 7 * 24 * 60, err
			}},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n| query | caller | bound | n | rows examined |\n|---|---|---|---|---|\n")
	for _, c := range cases {
		before := reads()
		n, err := c.run(ctx)
		require.NoError(t, err, c.name)
		examined := reads() - before - self
		fmt.Fprintf(&table, "| %s | %s | %s | %d | %d |\n", c.name, c.what, c.bound, n, examined)
		require.LessOrEqual(t, examined, int64(c.limit(n)), "%s examined %d rows for %d: more than its bound %s", c.name, examined, n, c.bound)
	}
	t.Log(table.String())

	// The folded minute holds the fixture's runs of that minute.
	got, err := s.RunStats(ctx, store.RunStatFilter{FromMS: minute, ToMS: minute + store.MinuteMS})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.EqualValues(t, started, got[0].Started)
	require.EqualValues(t, finished, got[0].Succeeded+got[0].Failed)
	require.EqualValues(t, finished, got[0].LagRuns())
}

// TestDashboardQueriesSearchOnSQLite: on SQLite the fold's and the
// dashboard's queries read index ranges, never a whole table (as
// TestPeriodicQueriesSearchOnSQLite checks the periodic queries).
func TestDashboardQueriesSearchOnSQLite(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, sqlfiles.SQLite)
	queries, err := store.Queries(sqlfiles.SQLite)
	require.NoError(t, err)
	for _, name := range []string{"RunStatStarted", "RunStatFinished", "RunStatRange", "RunStatRangeOfApps", "RunStatPrune"} {
		q, ok := queries[name]
		require.True(t, ok, name)
		args := make([]any, strings.Count(q, "?"))
		for i := range args {
			args[i] = 0
		}
		rows, err := s.DB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
		require.NoError(t, err, name)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		for _, step := range plan {
			if f := strings.Fields(step); len(f) >= 2 && f[0] == "SCAN" {
				t.Errorf("%s scans %s on SQLite: %s", name, f[1], strings.Join(plan, "; "))
			}
		}
		t.Logf("%s: %s", name, strings.Join(plan, "; "))
	}
}
