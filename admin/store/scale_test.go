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

// The scale fixture: as many jobs and runs as a large installation holds.
const (
	scaleJobs = 1_000_000
	scaleRuns = 1_000_000
	scaleApps = 8
)

// fillScaleJobs writes scaleJobs jobs in one statement (MariaDB's Sequence
// engine), in the order of every unique key (app by blocks of ids, names
// padded) so that the fill appends to them: 70 % hourly, 20 % daily, 10 %
// every minute (storetest.FleetCron), over scaleApps apps; 2 % disabled (next_fire_at NULL); 5 % paused, whose next_fire_at
// stays where pausing left it, in the last day (a paused job is not
// claimed, so it is not advanced); 0.1 % overdue by 2 to 3 minutes (as a
// stalled leader leaves them); the others due over the next hour.
// One job in 1,000 has the next job as its child; one in 100,000 is a
// dedup-archive job. {now} is the database clock in ms.
const fillScaleJobs = `INSERT INTO job (app, name, handler, cron_expr, slot_params, params, enabled, paused,
                 next_fire_at, child_job_ids, created_at, updated_at)
SELECT CONCAT('app', (seq - 1) * {apps} DIV {jobs}), CONCAT('job-', LPAD(seq, 7, '0')), IF(seq % 100000 = 5, 'dedup-archive', 'noop'),
       {cron},
       '', '',
       IF(seq % 50 = 7, 0, 1),
       IF(seq % 20 = 3, 1, 0),
       CASE WHEN seq % 50 = 7 THEN NULL
            WHEN seq % 20 = 3 THEN {now} - (seq * 7919) % 86400000
            WHEN seq % 1000 = 999 THEN {now} - 120000 - seq % 60000
            ELSE {now} + 1000 + (seq * 7919) % 3600000 END,
       IF(seq % 1000 = 1, CONCAT(seq + 1), ''),
       {now}, {now}
FROM seq_1_to_{jobs}`

// fillScaleRuns writes scaleRuns runs of the last 16.7 hours (one every
// 60 ms: 1,000 a minute), each of another job (in the order of the keys,
// so that the fill appends to every index instead of writing all over
// it): 95 % succeeded, 5 % failed, all but the newest 100, of which 50 run
// (with a deadline to check in the next minute) and 50 wait (pending). 2 %
// are manual runs.
const fillScaleRuns = `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch,
                     created_at, started_at, finished_at, app, deadline_check_at)
SELECT seq, {now} - ({runs} - seq) * 60 - 60000,
       IF(seq % 50 = 0, 'manual', 'cron'),
       CASE WHEN seq > {runs} - 50 THEN 'pending' WHEN seq > {runs} - 100 THEN 'running'
            WHEN seq % 20 = 0 THEN 'failed' ELSE 'succeeded' END,
       '', 1, 1,
       {now} - ({runs} - seq) * 60, {now} - ({runs} - seq) * 60,
       IF(seq > {runs} - 100, NULL, {now} - ({runs} - seq) * 60 + 500),
       CONCAT('app', seq % {apps}),
       IF(seq > {runs} - 100 AND seq <= {runs} - 50, {now} + 60000, NULL)
FROM seq_1_to_{runs}`

// Bounds: a query that groups its rows (GROUP BY) is allowed 4n: its
// temporary table of groups is looked up once per row read and read back
// once per group.

// fillScaleHistory gives job 9 (every minute) a week of history: 10,000
// succeeded runs, 2 to 9 days old (the fixture holds 1,010,000 runs).
const fillScaleHistory = `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch,
                     created_at, started_at, finished_at, app)
SELECT 9, {now} - 172800000 - seq * 60000, 'cron', 'succeeded', '', 1, 1,
       {now} - 172800000 - seq * 60000, {now} - 172800000 - seq * 60000, {now} - 172800000 - seq * 60000 + 500,
       (SELECT app FROM job WHERE id = 9)
FROM seq_1_to_10000`

// scaleCase is one query a replica runs per tick, round, pass or page:
// run calls it as its caller does and returns how many rows it returned or
// had to decide on (n); bound is the most rows it may examine for that n.
type scaleCase struct {
	name   string
	caller string
	bound  string
	limit  func(n int) int
	run    func(ctx context.Context) (int, error)
}

// TestPeriodicQueriesExamineOnlyTheirWork runs every periodic query on a
// MariaDB database holding 1,000,000 jobs and 1,000,000 runs and fails when
// one examines more rows than its bound: O(the rows it returns or decides
// on), never O(jobs) or O(run history). Rows examined are the session's
// Handler_read_% counters (every row the server asked a storage engine
// for, through an index or a scan, in every subquery and join, temporary
// tables included) around the call, on a store of one connection so that
// the session is the query's: unlike the optimizer's estimates they cannot
// be wrong, and unlike ANALYZE's r_rows they need no walk of the plan. A
// new periodic query gets a case here (docs/performance.md).
func TestPeriodicQueriesExamineOnlyTheirWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.OpenWith(t, sqlfiles.MySQL, func(c *store.Config) { c.MaxOpenConns = 1 })
	db := s.DB()
	dbNow, err := s.Now(ctx)
	require.NoError(t, err)
	now := dbNow.UnixMilli()
	vars := map[string]any{"now": now, "jobs": scaleJobs, "runs": scaleRuns, "apps": scaleApps}
	start := time.Now()
	_, err = db.ExecContext(ctx, storetest.FillSQL(fillScaleJobs, vars))
	require.NoError(t, err)
	jobsTook := time.Since(start)
	_, err = db.ExecContext(ctx, storetest.FillSQL(fillScaleRuns, vars))
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, storetest.FillSQL(fillScaleHistory, vars))
	require.NoError(t, err)
	// The jobs written above, counted per app as migration 0033 counts them.
	_, err = db.ExecContext(ctx, `REPLACE INTO app_job_count (app, jobs) SELECT app, COUNT(*) FROM job WHERE workflow_id IS NULL GROUP BY app`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "ANALYZE TABLE job, job_run")
	require.NoError(t, err)
	t.Logf("filled %d jobs in %s, %d runs in %s", scaleJobs, jobsTook.Round(time.Millisecond),
		scaleRuns, (time.Since(start) - jobsTook).Round(time.Millisecond))

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
	// Reading the counters reads rows too: measure that once and take it off.
	base := reads()
	self := reads() - base

	constant := func(c int) func(int) int { return func(int) int { return c } }
	linear := func(k, c int) func(int) int { return func(n int) int { return k*n + c } }
	cases := scaleCases(now, constant, linear, s)
	var table strings.Builder
	fmt.Fprintf(&table, "\n| query | caller | bound | n | rows examined |\n|---|---|---|---|---|\n")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := reads()
			n, err := c.run(ctx)
			require.NoError(t, err)
			examined := reads() - before - self
			fmt.Fprintf(&table, "| %s | %s | %s | %d | %d |\n", c.name, c.caller, c.bound, n, examined)
			require.LessOrEqual(t, examined, int64(c.limit(n)),
				"%s (%s) examined %d rows for %d: more than its bound %s", c.name, c.caller, examined, n, c.bound)
		})
	}
	t.Log(table.String())
}

// scaleCases are the periodic queries, each called as its caller calls it.
func scaleCases(now int64, constant func(int) func(int) int, linear func(k, c int) func(int) int, s *store.Store) []scaleCase {
	count := func(m map[int64]int, err error) (int, error) {
		n := 0
		for _, v := range m {
			n += v
		}
		return n, err
	}
	return []scaleCase{
		{"JobNextDue", "scheduler: wake-up, every idle loop", "100", constant(100),
			func(ctx context.Context) (int, error) { _, err := s.NextDue(ctx); return 1, err }},
		{"JobCountDue", "scheduler: pre-read count, 30 s ahead", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) { return s.CountDue(ctx, now+30_000) }},
		{"JobNextPauseEnd", "scheduler: wake-up", "100", constant(100),
			func(ctx context.Context) (int, error) { _, err := s.NextPauseEnd(ctx); return 1, err }},
		{"JobClaimDue", "scheduler: claim, 1,000 a batch", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				var n int
				err := s.Tx(ctx, func(tx *store.Tx) error {
					jobs, err := tx.ClaimDue(ctx, now+10_000, 1000)
					n = len(jobs)
					return err
				})
				return n, err
			}},
		{"RunNextPending", "scheduler: wake-up", "100", constant(100),
			func(ctx context.Context) (int, error) { _, err := s.NextPendingAfter(ctx, now); return 1, err }},
		{"RunPendingPage", "scheduler: start round, 1,000 a page", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				runs, err := s.PendingPage(ctx, now, store.PendingCursor{}, 1000)
				return len(runs), err
			}},
		{"RunList (job, running)", "scheduler: overlap check of a pending run", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				runs, err := s.ListRuns(ctx, store.RunFilter{JobID: 9, Status: store.RunRunning, Limit: 10})
				return len(runs), err
			}},
		{"RunsDeadlineDue", "scheduler: deadline round, 1,000 a page", "3n + 100", linear(3, 100),
			func(ctx context.Context) (int, error) {
				d, err := s.DeadlinesDue(ctx, now+120_000, 1000)
				return len(d), err
			}},
		{"JobsOverdue", "watchdog: every minute, 1,000 a page", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				j, err := s.OverdueJobs(ctx, 60_000, 1000)
				return len(j), err
			}},
		{"RunCountsInWindow", "watchdog: every minute, one minute of runs", "4n + 100", linear(4, 100),
			func(ctx context.Context) (int, error) { return count(s.CronRunCounts(ctx, now-180_000, now-120_000)) }},
		{"WorkflowsOverdue", "watchdog: every minute, 1,000 a page", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				w, err := s.OverdueWorkflows(ctx, 60_000, 1000)
				return len(w), err
			}},
		{"WorkflowRunCountsInWindow", "watchdog: every minute", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				return count(s.WorkflowCronRunCounts(ctx, now-180_000, now-120_000))
			}},
		{"AttemptsToRetry", "scheduler: retry round, 1,000 a page", "3n + 100", linear(3, 100),
			func(ctx context.Context) (int, error) { c, err := s.RetryCandidates(ctx, 1000); return len(c), err }},
		{"AttemptsUnplaced", "scheduler: placement round, 1,000 a page", "4n + 100", linear(4, 100),
			func(ctx context.Context) (int, error) { u, err := s.UnplacedAttempts(ctx, 1000); return len(u), err }},
		{"AttemptsOfLostExecutors", "scheduler: lost check, 1,000 a page", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) { a, err := s.LostAttempts(ctx, 1000); return len(a), err }},
		{"AttemptsUnacknowledged", "scheduler: unacknowledged check, 1,000 a page", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				a, err := s.UnacknowledgedAttempts(ctx, 10_000, 1000)
				return len(a), err
			}},
		{"ExecutorsSilent", "scheduler: lost check", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) { n, err := s.MarkLostExecutors(ctx, 30_000); return int(n), err }},
		{"AppJobCounts", "GET /api/v1/apps: jobs per app", "2 × apps + 100", linear(2, 100),
			func(ctx context.Context) (int, error) { c, err := s.AppJobCounts(ctx); return len(c), err }},
		{"JobChildren", "PUT /api/v1/jobs/{id}: child-job cycle check", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				roots := []int64{1, 2001, 5}
				g, err := s.ChildGraphFrom(ctx, roots)
				return len(roots) + len(g), err
			}},
		{"JobsOfHandler", "watchdog: hourly archive check, 1,000 a page", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				j, err := s.JobsOfHandler(ctx, "dedup-archive", 0, 1000)
				return len(j), err
			}},
		{"UtilizationSample", "leader: every sample interval", "100", constant(100),
			func(ctx context.Context) (int, error) { n, err := s.SampleUtilization(ctx, now); return int(n), err }},
	}
}

// scaleQueries are the queries of the cases above by name, for the SQLite
// plan check (TestPeriodicQueriesSearchOnSQLite).
var scaleQueries = []string{
	"JobNextDue", "JobCountDue", "JobNextPauseEnd", "JobClaimDue", "RunNextPending", "RunPendingPage",
	"RunList", "RunsDeadlineDue", "JobsOverdue", "RunCountsInWindow", "WorkflowsOverdue", "WorkflowRunCountsInWindow",
	"AttemptsToRetry", "AttemptsUnplaced", "AttemptsOfLostExecutors", "AttemptsUnacknowledged",
	"ExecutorsSilent", "AppJobCounts", "JobChildren", "JobsOfHandler", "UtilizationSample",
}

// TestPeriodicQueriesSearchOnSQLite: on SQLite (standalone mode) no
// periodic query scans a table that grows with jobs or runs: SQLite's
// EXPLAIN QUERY PLAN names each table it reads as SCAN (every row, or every
// entry of an index) or SEARCH (a range of an index). Small tables
// (executors, an app's counts) and the query's own subqueries may be
// scanned.
func TestPeriodicQueriesSearchOnSQLite(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, sqlfiles.SQLite)
	queries, err := store.Queries(sqlfiles.SQLite)
	require.NoError(t, err)
	small := map[string]bool{"executor": true, "e": true, "app_job_count": true, "d": true}
	for _, name := range scaleQueries {
		q, ok := queries[name]
		require.True(t, ok, name)
		// RunList's optional conditions, as the overlap check sets them.
		q = strings.Replace(q, "{{filters}}", "WHERE r.job_id = ? AND r.status = ?", 1)
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
			f := strings.Fields(step)
			if len(f) >= 2 && f[0] == "SCAN" && !small[f[1]] {
				t.Errorf("%s scans %s on SQLite: %s", name, f[1], strings.Join(plan, "; "))
			}
		}
		t.Logf("%s: %s", name, strings.Join(plan, "; "))
	}
}
