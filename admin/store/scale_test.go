package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// The scale fixture: as many jobs and runs as a large installation holds.
const (
	scaleJobs = 1_000_000
	scaleRuns = 1_000_000
	scaleApps = 8
	// scaleRunningJob has one running run (fillScaleRuns: the runs of jobs
	// scaleRuns-99 to scaleRuns-50 run).
	scaleRunningJob = scaleRuns - 60
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
// once per group. A query that must look at the active work (running runs,
// active attempts) to decide is bounded by that work, stated in its bound:
// the fixture has 50 running runs with one active attempt each, beside
// 1,009,950 finished attempts that no periodic query may read.

// fillScaleHistory gives job 9 (every minute) a week of history: 10,000
// succeeded runs, 2 to 9 days old (the fixture holds 1,010,000 runs).
const fillScaleHistory = `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch,
                     created_at, started_at, finished_at, app)
SELECT 9, {now} - 172800000 - seq * 60000, 'cron', 'succeeded', '', 1, 1,
       {now} - 172800000 - seq * 60000, {now} - 172800000 - seq * 60000, {now} - 172800000 - seq * 60000 + 500,
       (SELECT app FROM job WHERE id = 9)
FROM seq_1_to_10000`

// fillScaleExecutor is the live executor of the attempts below.
const fillScaleExecutor = `INSERT INTO executor (id, instance_id, app, address, capacity, handlers, state, registered_at, last_heartbeat)
VALUES (1, 'scale-1', 'app0', '127.0.0.1:1', 100, 'noop', 'live', {now}, {now})`

// fillScaleAttempts gives every run that started one attempt (slot 0) on
// that executor, in the state of its run: 1,009,950 finished attempts
// (5 % failed, as their runs) and 50 running ones (the fixture's history of
// attempts, which only retention shrinks).
const fillScaleAttempts = `INSERT INTO slot_attempt (run_id, slot, attempt, executor_id, status, current, dispatched_at, acked,
                          lease_until, started_at, finished_at)
SELECT r.id, 0, 1, 1, r.status, 1, r.started_at, 1, IF(r.status = 'running', {now} + 60000, NULL), r.started_at, r.finished_at
FROM job_run r WHERE r.status <> 'pending' ORDER BY r.id`

// fillScaleAudit gives every job the watchdog's audit cursor: none for the
// disabled and paused jobs, 1 job in 1,000 due 2.5 to 3.5 minutes ago (an
// audit behind), the others due over the next hour.
const fillScaleAudit = `INSERT INTO job_audit (job_id, audit_next_at)
SELECT id, CASE WHEN enabled = 0 OR paused = 1 THEN NULL WHEN id % 1000 = 999 THEN {now} - 150000 - id % 60000
                ELSE {now} + 1000 + (id * 7919) % 3600000 END
FROM job`

// fillScaleDead gives every failed run's slot a dead letter (50,500
// letters, one in three permanent, the others retryable), in the order of
// the runs.
const fillScaleDead = `INSERT INTO dead_letter (app, job_id, job_name, handler, run_id, scheduled_at, slot, token, attempt, params,
                         slot_param, error, error_msg, error_class, died_at)
SELECT r.app, r.job_id, CONCAT('job-', LPAD(r.job_id, 7, '0')), 'noop', r.id, r.scheduled_at, 0, a.id, 1, '', '',
       'failed', '', IF(r.id % 3 = 0, 'permanent', 'retryable'), r.finished_at
FROM job_run r JOIN slot_attempt a ON a.run_id = r.id WHERE r.status = 'failed' ORDER BY r.id`

// fillScaleBreakers gives one job in 10,000 a circuit breaker (100 jobs),
// open since a minute, probing in a minute.
const fillScaleBreakers = `INSERT INTO job_breaker (job_id, app, state, failures, last_error, opened_at, reason, probe_at, epoch)
SELECT seq * 10000, CONCAT('app', (seq * 10000 - 1) * {apps} DIV {jobs}), 'open', 0, 'down', {now} - 60000, '', {now} + 60000, 1
FROM seq_1_to_100`

// fillScaleBackfill gives job 29 (hourly) a backfill (job_backfill 1, see
// fillScaleBackfillRuns).
const fillScaleBackfill = `INSERT INTO job_backfill (id, job_id, app, from_date, to_date, newest_first, parallel, only_missing, created_by, created_at)
SELECT 1, id, app, '2025-10-01', '2026-11-30', 0, 2, 0, 'scale', {now} FROM job WHERE id = 29`

// fillScaleBackfillRuns writes that backfill's 10,000 runs, 3 to 420 days
// old: 9,990 succeeded, 2 running, 8 pending and due (waiting for their
// turn; written after the attempts' fill, they have no attempts).
const fillScaleBackfillRuns = `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, created_at,
                     started_at, finished_at, app, backfill_id)
SELECT 29, {now} - 259200000 - seq * 3600000, 'catch_up',
       CASE WHEN seq > 9992 THEN 'pending' WHEN seq > 9990 THEN 'running' ELSE 'succeeded' END,
       '', 1, 1, {now}, IF(seq > 9992, NULL, {now}), IF(seq > 9990, NULL, {now}), (SELECT app FROM job WHERE id = 29), 1
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

// scaleFixture is a MariaDB store holding the scale fixture (1,000,000
// jobs, 1,010,000 runs, their attempts and audit cursors), filled once for
// every query guard below, on one connection so that the session's
// counters are the query's.
type scaleFixture struct {
	s    *store.Store
	now  int64 // the database clock when the fixture was filled, ms
	self int64 // the rows reading the counters examines itself
}

func newScaleFixture(t *testing.T) *scaleFixture {
	t.Helper()
	ctx := context.Background()
	s := storetest.OpenWith(t, sqlfiles.MySQL, func(c *store.Config) { c.MaxOpenConns = 1 })
	dbNow, err := s.Now(ctx)
	require.NoError(t, err)
	f := &scaleFixture{s: s, now: dbNow.UnixMilli()}
	start := time.Now()
	for _, fill := range []string{fillScaleJobs, fillScaleRuns, fillScaleHistory, fillScaleExecutor, fillScaleAttempts, fillScaleAudit,
		fillScaleDead, fillScaleBreakers, fillScaleBackfill, fillScaleBackfillRuns} {
		f.exec(t, fill)
	}
	f.exec(t, `UPDATE job SET breaker_threshold = 3 WHERE id IN (SELECT job_id FROM job_breaker)`)
	require.NoError(t, s.FillAllJobPartitions(ctx)) // as the admins fill them
	claims := make([]store.PartitionClaim, partition.DefaultCount)
	for p := range claims {
		claims[p] = store.PartitionClaim{Partition: p, Epoch: 1}
	}
	_, err = s.ClaimPartitions(ctx, "admin-1", claims)
	require.NoError(t, err)
	// The jobs written above, counted per app as migration 0033 counts them.
	f.exec(t, `REPLACE INTO app_job_count (app, jobs) SELECT app, COUNT(*) FROM job WHERE workflow_id IS NULL GROUP BY app`)
	f.exec(t, "ANALYZE TABLE job, job_run, slot_attempt, executor, job_audit, dead_letter, job_breaker, job_backfill")
	t.Logf("filled %d jobs, %d runs and their attempts in %s", scaleJobs, scaleRuns, time.Since(start).Round(time.Millisecond))
	// Reading the counters reads rows too: measure that once and take it off.
	base := f.reads(t)
	f.self = f.reads(t) - base
	return f
}

// exec runs a fill statement with the fixture's {now}, {jobs}, {runs},
// {apps} and the given variables.
func (f *scaleFixture) exec(t *testing.T, fill string, more ...any) {
	t.Helper()
	vars := map[string]any{"now": f.now, "jobs": scaleJobs, "runs": scaleRuns, "apps": scaleApps}
	for i := 0; i+1 < len(more); i += 2 {
		vars[more[i].(string)] = more[i+1]
	}
	_, err := f.s.DB().ExecContext(context.Background(), storetest.FillSQL(fill, vars))
	require.NoError(t, err)
}

// reads is the session's Handler_read_% counters summed: every row the
// server asked a storage engine for, through an index or a scan, in every
// subquery and join, temporary tables included.
func (f *scaleFixture) reads(t *testing.T) int64 {
	t.Helper()
	rows, err := f.s.DB().QueryContext(context.Background(), "SHOW SESSION STATUS LIKE 'Handler_read%'")
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

// check runs each case in a subtest, fails it when it examines more rows
// than its bound (or, with found, when it finds nothing: such a case would
// test nothing), and logs the table of docs/performance.md.
func (f *scaleFixture) check(t *testing.T, cases []scaleCase, found bool) {
	t.Helper()
	var table strings.Builder
	fmt.Fprintf(&table, "\n| query | caller | bound | n | rows examined |\n|---|---|---|---|---|\n")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.reads(t)
			n, err := c.run(context.Background())
			require.NoError(t, err)
			examined := f.reads(t) - before - f.self
			fmt.Fprintf(&table, "| %s | %s | %s | %d | %d |\n", c.name, c.caller, c.bound, n, examined)
			if found {
				require.Positive(t, n, "%s found nothing: the case tests nothing", c.name)
			}
			require.LessOrEqual(t, examined, int64(c.limit(n)),
				"%s (%s) examined %d rows for %d: more than its bound %s", c.name, c.caller, examined, n, c.bound)
		})
	}
	t.Log(table.String())
}

func constant(c int) func(int) int { return func(int) int { return c } }

func linear(k, c int) func(int) int { return func(n int) int { return k*n + c } }

// TestScaleQueriesExamineOnlyTheirWork runs, on one MariaDB database
// holding 1,000,000 jobs and 1,000,000 runs (the scale fixture), every
// query a replica runs per tick, round, pass or page, and fails when one
// examines more rows than its bound: O(the rows it returns or decides on),
// never O(jobs) or O(run history). Rows examined are the session's
// Handler_read_% counters around the call: unlike the optimizer's
// estimates they cannot be wrong, and unlike ANALYZE's r_rows they need no
// walk of the plan. A new periodic query gets a case here
// (docs/performance.md). The subtests share the fixture and run in order:
// the periodic queries (which move audit cursors), the console's list
// pages, then the dashboard (which adds its rollup minutes).
func TestScaleQueriesExamineOnlyTheirWork(t *testing.T) {
	t.Parallel()
	f := newScaleFixture(t)
	t.Run("Periodic", func(t *testing.T) { f.check(t, scaleCases(f.now, f.s), false) })
	t.Run("ListPages", func(t *testing.T) { f.check(t, listCases(f.s), true) })
	t.Run("Dashboard", func(t *testing.T) { f.checkDashboard(t) })
}

// sqlitePlan returns the steps of SQLite's plan for q (EXPLAIN QUERY PLAN),
// with every parameter 0 unless args are given.
func sqlitePlan(t *testing.T, s *store.Store, name, q string, args ...any) []string {
	t.Helper()
	if args == nil {
		args = make([]any, strings.Count(q, "?"))
		for i := range args {
			args[i] = 0
		}
	}
	rows, err := s.DB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	require.NoError(t, err, name)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	return plan
}

// scaleCases are the periodic queries, each called as its caller calls it.
func scaleCases(now int64, s *store.Store) []scaleCase {
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
		{"JobCountDue", "scheduler: pre-read count, 30 s ahead, up to 100,000", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) { return s.CountDue(ctx, now+30_000, 100_000) }},
		{"JobCountDue (capped)", "scheduler: pre-read count, 1 hour ahead, up to 1,000", "2 × 1,000 + 100", constant(2100),
			func(ctx context.Context) (int, error) { return s.CountDue(ctx, now+3_600_000, 1000) }},
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
		// A replica that owns half of the 256 partitions (every other one).
		{"JobNextDueIn", "scheduler: wake-up of the fire loop, 128 partitions", "3 × 128 + 100", constant(3*128 + 100),
			func(ctx context.Context) (int, error) { _, err := s.NextDueIn(ctx, halfPartitions); return 1, err }},
		{"JobCountDueIn", "scheduler: pre-read count of 128 partitions, 30 s ahead, up to 100,000", "2n + 2 × 128 + 100", linear(2, 2*128+100),
			func(ctx context.Context) (int, error) { return s.CountDueIn(ctx, halfPartitions, now+30_000, 100_000) }},
		{"JobNextPauseEndIn", "scheduler: wake-up of the fire loop", "100", constant(100),
			func(ctx context.Context) (int, error) { _, err := s.NextPauseEndIn(ctx, halfPartitions); return 1, err }},
		{"JobClaimDueIn", "scheduler: claim of 128 partitions, 1,000 a batch", "2n + 2 × 128 + 100", linear(2, 2*128+100),
			func(ctx context.Context) (int, error) {
				var n int
				err := s.Tx(ctx, func(tx *store.Tx) error {
					jobs, err := tx.ClaimDueIn(ctx, halfPartitions, now+10_000, 1000)
					n = len(jobs)
					return err
				})
				return n, err
			}},
		{"PartitionsNextDue", "GET /api/v1/cluster: each partition's firing lag, 256 partitions", "3 × 256 + 100", constant(3*256 + 100),
			func(ctx context.Context) (int, error) { rows, err := s.PartitionsNextDue(ctx); return len(rows), err }},
		{"JobsPartitionUnset", "every replica's fire loop, once a second", "100", constant(100),
			func(ctx context.Context) (int, error) { n, err := s.FillJobPartitions(ctx); return int(n) + 1, err }},
		{"RunNextPending", "scheduler: wake-up", "100", constant(100),
			func(ctx context.Context) (int, error) { _, err := s.NextPendingAfter(ctx, now); return 1, err }},
		{"RunPendingPage", "scheduler: start round, 1,000 a page", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				runs, err := s.PendingPage(ctx, now, store.PendingCursor{}, 1000)
				return len(runs), err
			}},
		{"RunRunningIDsOfJob", "scheduler: overlap check of a queue or replace job's pending run", "2n + 10", linear(2, 10),
			func(ctx context.Context) (int, error) {
				ids, err := s.RunningRunIDs(ctx, 9, 10)
				return len(ids), err
			}},
		{"RunRunningIDsOfJob (a running job)", "scheduler: overlap check of a queue or replace job's pending run", "2n + 10", linear(2, 10),
			func(ctx context.Context) (int, error) {
				ids, err := s.RunningRunIDs(ctx, scaleRunningJob, 10)
				return len(ids), err
			}},
		{"RunActiveForJob", "scheduler and API: a job's active runs", "2n + 10", linear(2, 10),
			func(ctx context.Context) (int, error) {
				active, err := s.HasActiveRun(ctx, 9)
				if active {
					return 1, err
				}
				return 0, err
			}},
		{"RunLastSucceeded", "watchdog: hourly archive check, per archive job", "10", constant(10),
			func(ctx context.Context) (int, error) { _, err := s.LastSucceeded(ctx, 9); return 1, err }},
		{"RunsDeadlineDue", "scheduler: deadline round, 1,000 a page", "5n + 100", linear(5, 100),
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
		{"AttemptsToRetry", "scheduler: retry round, 1,000 a page", "3n + 4r + b + 100, r = 50 running runs, b = 100 open breakers", linear(3, 400),
			func(ctx context.Context) (int, error) { c, err := s.RetryCandidates(ctx, 1000); return len(c), err }},
		{"AttemptsUnplaced", "scheduler: placement round, 1,000 a page", "4n + 100", linear(4, 100),
			func(ctx context.Context) (int, error) { u, err := s.UnplacedAttempts(ctx, 0, 1000); return len(u), err }},
		{"AppCaps", "scheduler: start and placement rounds, the apps with a cap", "apps + 100 (one row per app)", constant(scaleApps + 100),
			func(ctx context.Context) (int, error) { c, err := s.AppCaps(ctx); return len(c), err }},
		{"AppsPlacedSlots", "scheduler: start and placement rounds, the capped apps' placed slots", "2a + 100, a = 50 active attempts", constant(200),
			func(ctx context.Context) (int, error) {
				apps := make([]string, scaleApps)
				for i := range apps {
					apps[i] = fmt.Sprintf("app%d", i)
				}
				c, err := s.PlacedSlotsOfApps(ctx, apps)
				return len(c), err
			}},
		{"JobsPlacedSlots", "scheduler: start and placement rounds, the capped jobs of a page", "2a + 100, a = the jobs' active attempts", constant(100),
			func(ctx context.Context) (int, error) {
				n, err := s.PlacedSlotsOfJobs(ctx, []int64{scaleRunningJob, 5, 6})
				return len(n), err
			}},
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
		{"PlacedSlots", "scheduler: start and placement rounds, with a platform-wide slot cap", "2a + 100, a = 50 active attempts", constant(200),
			func(ctx context.Context) (int, error) { n, err := s.PlacedSlots(ctx); return int(n), err }},
		{"ExecutorLoad", "scheduler: placement round, the executors' busy and queued slots", "2a + 100, a = 50 active attempts", constant(200),
			func(ctx context.Context) (int, error) { l, err := s.Loads(ctx); return len(l), err }},
		{"AttemptsQueuedOn", "scheduler: stealing round, per executor with queued work", "2a + 100, a = the executor's 50 active attempts", constant(200),
			func(ctx context.Context) (int, error) { _, err := s.QueuedOn(ctx, 1, 100); return 1, err }},
		{"XXLAttemptsOverdue", "xxljob: overdue callbacks, every check (no XXL-JOB executor)", "100", constant(100),
			func(ctx context.Context) (int, error) {
				_, err := s.XXLOverdue(ctx, 60_000, 10_000, 100)
				return 1, err
			}},
		{"UtilizationSample", "leader: every sample interval", "2a + 100, a = 50 active attempts", constant(200),
			func(ctx context.Context) (int, error) { n, err := s.SampleUtilization(ctx, now); return int(n), err }},
		{"JobAuditDue", "watchdog: gap audit, 500 a batch", "3n + 100", linear(3, 100),
			func(ctx context.Context) (int, error) {
				d, err := s.JobAuditsDue(ctx, now-30_000, 500)
				return len(d), err
			}},
		{"RunsOfRanges", "watchdog: gap audit, the runs of a batch of 500", "2n + 100 (n: jobs and runs)", linear(2, 100),
			func(ctx context.Context) (int, error) { return auditRunCounts(ctx, s, now) }},
		{"JobAuditAdvance", "watchdog: gap audit, the cursors of a batch of 500 (with JobAuditDue reading them)", "5n + 100", linear(5, 100),
			func(ctx context.Context) (int, error) { return auditAdvance(ctx, s, now) }},
		{"JobAuditBehind", "watchdog: lag check, every pass", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) {
				lag, err := s.AuditBehind(ctx, store.AuditJobs, now-150_000, 100_000)
				return lag.Behind + 1, err
			}},
		{"RunStatNextActivity", "run stats: a folder behind skips the quiet minutes (with the cursor's move)", "100", constant(100),
			func(ctx context.Context) (int, error) {
				_, _, err := s.SkipQuietRunStats(ctx, now-30*86_400_000, now-29*86_400_000)
				return 1, err
			}},
		{"JobBackfillTurns (a backfill of 10,000 runs)", "scheduler: start round, the backfills of the due runs (n: their running and due runs)", "3n + 100", linear(3, 100),
			func(ctx context.Context) (int, error) {
				turns, err := s.BackfillTurns(ctx, []int64{1}, now)
				n := 0
				for _, t := range turns {
					n += t.Running + len(t.Pending)
				}
				return n, err
			}},
		{"Breakers", "scheduler: breaker round, every tick (n: the jobs with a breaker state)", "2n + 100", linear(2, 100),
			func(ctx context.Context) (int, error) { b, err := s.Breakers(ctx); return len(b), err }},
		{"BreakerHeldRetry (a job with a week of runs)", "scheduler: a due probe, per open breaker", "100", constant(100),
			func(ctx context.Context) (int, error) { _, _, err := s.HeldRetry(ctx, 9); return 1, err }},
		{"BreakerHeldUnplaced (a running job)", "scheduler: a due probe, per open breaker", "100", constant(100),
			func(ctx context.Context) (int, error) { _, err := s.HeldUnplaced(ctx, scaleRunningJob); return 1, err }},
		{"BreakerHeldRun (a pending job)", "scheduler: a due probe, per open breaker", "100", constant(100),
			func(ctx context.Context) (int, error) {
				_, _, err := s.HeldRun(ctx, scaleRuns-10, now+60_000)
				return 1, err
			}},
		{"RetryBudgetUse (a week of runs)", "scheduler: a retry of a job with a retry budget (n: the job's attempts in the window and a day before)", "3n + 100", linear(3, 100),
			func(ctx context.Context) (int, error) {
				u, err := s.RetryBudgetUse(ctx, 9, 0, now-10*86_400_000)
				return u.Firsts + u.Retries, err
			}},
		{"WorkflowAuditDue", "watchdog: gap audit of workflows, 500 a batch", "3n + 100", linear(3, 100),
			func(ctx context.Context) (int, error) {
				d, err := s.WorkflowAuditsDue(ctx, now-30_000, 500)
				return len(d), err
			}},
	}
}

// auditRunCounts counts the runs of the jobs the gap audit's first batch
// reads, each from its cursor on, as the audit does; n is the ranges and
// the runs counted.
func auditRunCounts(ctx context.Context, s *store.Store, now int64) (int, error) {
	due, err := s.JobAuditsDue(ctx, now-30_000, 500)
	if err != nil {
		return 0, err
	}
	ranges := make([]store.AuditRange, len(due))
	for i, d := range due {
		ranges[i] = store.AuditRange{ID: d.ID, FromMS: d.AuditNextAt - 20*3_600_000, ToMS: now - 30_000}
	}
	counts, err := s.CronRunCountsOf(ctx, store.AuditJobs, ranges)
	n := len(ranges)
	for _, c := range counts {
		n += c
	}
	return n, err
}

// auditAdvance moves the cursors of the gap audit's first batch on by an
// hour, as the audit does.
func auditAdvance(ctx context.Context, s *store.Store, now int64) (int, error) {
	due, err := s.JobAuditsDue(ctx, now-30_000, 500)
	if err != nil {
		return 0, err
	}
	steps := make([]store.AuditStep, len(due))
	for i, d := range due {
		steps[i] = store.AuditStep{ID: d.ID, Was: d.AuditNextAt, Next: sql.NullInt64{Int64: d.AuditNextAt + 3_600_000, Valid: true}}
	}
	moved, _, err := s.AdvanceAudits(ctx, store.AuditJobs, steps)
	return len(moved), err
}

// halfPartitions are the partitions a replica owns in the cases above:
// every other one of 256.
var halfPartitions = func() []int {
	var ps []int
	for p := 0; p < partition.DefaultCount; p += 2 {
		ps = append(ps, p)
	}
	return ps
}()

// scaleQueries are the queries of the cases above by name, for the SQLite
// plan check (TestPeriodicQueriesSearchOnSQLite).
var scaleQueries = []string{
	"JobNextDue", "JobCountDue", "JobNextPauseEnd", "JobClaimDue", "JobNextDueIn", "JobCountDueIn", "JobNextPauseEndIn", "JobClaimDueIn", "JobsPartitionUnset", "PartitionsNextDue", "RunNextPending", "RunPendingPage",
	"RunRunningIDsOfJob", "RunActiveForJob", "RunLastSucceeded", "RunsDeadlineDue", "JobsOverdue", "RunCountsInWindow", "WorkflowsOverdue", "WorkflowRunCountsInWindow",
	"AttemptsToRetry", "AttemptsUnplaced", "AttemptsOfLostExecutors", "AttemptsUnacknowledged", "AppCaps", "AppsPlacedSlots", "JobsPlacedSlots",
	"ExecutorsSilent", "AppJobCounts", "JobChildren", "JobsOfHandler", "UtilizationSample",
	"PlacedSlots", "ExecutorLoad", "AttemptsQueuedOn", "XXLAttemptsOverdue",
	"JobAuditDue", "RunsOfRanges", "JobAuditLock", "JobAuditAdvance", "JobAuditOldest", "JobAuditBehindCount",
	"WorkflowAuditDue", "WorkflowRunsOfRanges", "WorkflowAuditLock", "WorkflowAuditAdvance", "WorkflowAuditOldest", "WorkflowAuditBehindCount",
	"Breakers", "BreakerHeldRetry", "BreakerHeldUnplaced", "BreakerHeldRun", "RetryBudgetUse", "RunStatNextActivity",
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
	// b is job_breaker: only the jobs whose breaker has a state (open,
	// probing, or failures counted since the last success). CONSTANT is the
	// one row of a SELECT without FROM (its subqueries are planned apart).
	// x is the executor table again (UtilizationSample's inner query).
	small := map[string]bool{"executor": true, "e": true, "x": true, "app": true, "app_job_count": true, "d": true, "behind": true, "b": true, "CONSTANT": true,
		"sp": true} // sp: scheduler_partition, one row per partition
	for _, name := range scaleQueries {
		q, ok := queries[name]
		require.True(t, ok, name)
		plan := sqlitePlan(t, s, name, q)
		for _, step := range plan {
			f := strings.Fields(step)
			if len(f) >= 2 && f[0] == "SCAN" && !small[f[1]] {
				t.Errorf("%s scans %s on SQLite: %s", name, f[1], strings.Join(plan, "; "))
			}
		}
		t.Logf("%s: %s", name, strings.Join(plan, "; "))
	}
}
