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

// fillScaleRollupAll writes, for the same minutes, the row of every app
// together that the fold writes beside the apps' rows.
const fillScaleRollupAll = `INSERT INTO run_stat_minute_all (minute, started, succeeded, failed, lag_0, lag_3, lag_11)
SELECT {minute} - (seq + 1) * 60000, 125 * {apps}, 119 * {apps}, 6 * {apps}, 100 * {apps}, 20 * {apps}, 5 * {apps}
FROM seq_0_to_{minutes}`

// fillScaleMinuteAttempts gives each run that finishes in {minute} a
// second slot attempt, beside the scale fixture's first (the fold reads
// when its first slot started).
const fillScaleMinuteAttempts = `INSERT INTO slot_attempt (run_id, slot, attempt, status, started_at)
SELECT r.id, 1, 1, 'succeeded', r.started_at + 20
FROM job_run r
WHERE r.finished_at >= {minute} AND r.finished_at < {minute} + 60000`

// checkDashboard (TestScaleQueriesExamineOnlyTheirWork/Dashboard): with
// the scale fixture's 1,000,000 runs (1,000 a minute) and a week of rollup
// minutes for 8 apps, folding one minute examines O(the runs started and
// finished in it), and the dashboard's read O(the window's minutes) for
// every app and O(minutes × apps) for some apps, never O(runs).
func (f *scaleFixture) checkDashboard(t *testing.T) {
	ctx := context.Background()
	s, db := f.s, f.s.DB()
	minute := f.now - f.now%store.MinuteMS - 30*store.MinuteMS // in the fixture's busy hours
	const weekRows = 7 * 24 * 60 * scaleApps
	start := time.Now()
	for _, q := range []string{fillScaleMinuteAttempts, fillScaleRollup, fillScaleRollupAll} {
		f.exec(t, q, "minute", minute, "rows", weekRows-1, "minutes", weekRows/scaleApps-1)
	}
	f.exec(t, "ANALYZE TABLE slot_attempt, run_stat_minute, run_stat_minute_all")
	t.Logf("filled %d rollup rows in %s", weekRows, time.Since(start).Round(time.Millisecond))

	_, err := s.InitRunStats(ctx, minute)
	require.NoError(t, err)
	var started, finished int
	require.NoError(t, db.Get(&started, "SELECT COUNT(*) FROM job_run WHERE started_at >= ? AND started_at < ?", minute, minute+store.MinuteMS))
	require.NoError(t, db.Get(&finished, "SELECT COUNT(*) FROM job_run WHERE finished_at >= ? AND finished_at < ?", minute, minute+store.MinuteMS))
	window := func(from int64, apps []string, n int) func(ctx context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			_, err := s.RunStats(ctx, store.RunStatFilter{FromMS: from, ToMS: minute, Apps: apps})
			return n, err
		}
	}
	week := minute - 7*24*60*store.MinuteMS
	f.check(t, []scaleCase{
		// n: runs started + runs finished in the minute. Per finished run:
		// its index entry, its row, the first of its attempts (and the
		// next key); per started run its index entry and its group.
		{"RunStatFold", "leader: fold one minute (1,000 runs a minute)", "6n + 100", linear(6, 100),
			func(ctx context.Context) (int, error) {
				folded, err := s.FoldRunStats(ctx, minute)
				if err == nil && !folded {
					err = fmt.Errorf("minute %d not folded", minute)
				}
				return started + finished, err
			}},
		// n: rollup rows in the window: its minutes for every app
		// (run_stat_minute_all), minutes × apps for some apps.
		{"RunStatRange (1h)", "GET /api/v1/dashboard?window=1h", "2n + 100", linear(2, 100),
			window(minute-60*store.MinuteMS, nil, 60)},
		{"RunStatRange (7d)", "GET /api/v1/dashboard?window=7d", "2n + 100", linear(2, 100),
			window(week, nil, weekRows/scaleApps)},
		{"RunStatRangeOfApps (7d, one app)", "GET /api/v1/dashboard?window=7d, a user of one app", "2n + 100", linear(2, 100),
			window(week, []string{"app3"}, 7*24*60)},
	}, false)

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
	for _, name := range []string{"RunStatStarted", "RunStatFinished", "RunStatRange", "RunStatRangeOfApps", "RunStatPrune", "RunStatPruneAll"} {
		q, ok := queries[name]
		require.True(t, ok, name)
		plan := sqlitePlan(t, s, name, q)
		for _, step := range plan {
			if f := strings.Fields(step); len(f) >= 2 && f[0] == "SCAN" {
				t.Errorf("%s scans %s on SQLite: %s", name, f[1], strings.Join(plan, "; "))
			}
		}
		t.Logf("%s: %s", name, strings.Join(plan, "; "))
	}
}
