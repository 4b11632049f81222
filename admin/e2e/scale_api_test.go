package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// The operator API at scale (issue 31: "API p95 ≤ 200 ms at 10 M jobs for
// jobs first page, search by name, filter by app, /apps, dashboard summary,
// one job's runs"). BenchmarkScaleAPI loads BENCH_SCALE_JOBS jobs
// (default 1,000,000) over BENCH_SCALE_APPS apps (20) and BENCH_SCALE_RUNS runs
// (default 1,000,000) finished over the last 24 hours into the herd
// harness's private MariaDB, lets the leader fold the runs into the
// dashboard's rollup, and times each endpoint of apiEndpoints through the
// real admin process: first one client at a time (latency), then
// scaleAPIWorkers clients at once. The jobs' first firings are a day ahead,
// so the installation is quiet: the figures are the API's own. The same
// endpoints are timed under firing load by BenchmarkScaleE2E's API burst.

const (
	scaleRunsEnv = "BENCH_SCALE_RUNS"
	// scaleAppsEnv is how many apps the jobs of BenchmarkScaleAPI are
	// spread over (job seq % apps; 20 unless set).
	scaleAppsEnv = "BENCH_SCALE_APPS"
	// scaleAPISerial and scaleAPIConcurrent are the calls per endpoint made
	// one at a time and then scaleAPIWorkers at once.
	scaleAPISerial     = 100
	scaleAPIConcurrent = 200
	// scaleAPIEndpointLimit bounds the time spent on one endpoint in one
	// phase: an endpoint that slow is reported with the calls it made.
	scaleAPIEndpointLimit = 90 * time.Second
)

// fillAPIJobs writes jobs {from}..{to} over {apps} apps, every one enabled,
// first due a day after now ({t0}) spread over that day.
const fillAPIJobs = `INSERT INTO job (app, name, handler, cron_expr, time_zone, slot_count, slot_params, params, next_fire_at, created_at, updated_at)
SELECT CONCAT('app', seq % {apps}), CONCAT('s-', LPAD(seq, 8, '0')), 'demo.noop', {cron}, 'UTC', 1, '', '',
       {t0} + ((seq * 7919) % 1440) * 60000, {now}, {now}
FROM seq_{from}_to_{to}`

// fillAPIRuns writes runs {from}..{to} of {runs}, one every {step} ms over
// the 24 hours before {now}, each of the job numbered 1 + (seq × 7919) mod
// {jobs} by fillAPIJobs (found by its app and name: a bulk insert leaves
// gaps in the ids): 95 % succeeded, 5 % failed, 2 % manual, each settled
// 500 ms after it started.
const fillAPIRuns = `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, slots_succeeded, slots_failed, epoch,
                     created_at, started_at, finished_at, app, job_name)
SELECT j.id, {now} - 86400000 + s.seq * {step}, IF(s.seq % 50 = 0, 'manual', 'cron'),
       IF(s.seq % 20 = 0, 'failed', 'succeeded'), '', 1, IF(s.seq % 20 = 0, 0, 1), IF(s.seq % 20 = 0, 1, 0), 1,
       {now} - 86400000 + s.seq * {step}, {now} - 86400000 + s.seq * {step} + 40, {now} - 86400000 + s.seq * {step} + 540,
       j.app, j.name
FROM seq_{from}_to_{to} s
JOIN job j ON j.app = CONCAT('app', (1 + (s.seq * 7919) % {jobs}) % {apps})
          AND j.name = CONCAT('s-', LPAD(1 + (s.seq * 7919) % {jobs}, 8, '0'))`

// apiEndpoint is one API call of issue 31's list, with the path of its
// i-th call (the parameters vary so that no two calls read the same rows).
type apiEndpoint struct {
	name string
	path func(i int) string
}

// apiEndpoints are the calls timed at scale: jobs is how many jobs the
// installation has (names s-%08d), apps its apps' names and withRuns ids
// of jobs that have runs.
func apiEndpoints(jobs int, apps []string, withRuns []int64) []apiEndpoint {
	app := func(i int) string { return apps[i%len(apps)] }
	// A name prefix that matches 1,000 jobs: the first five of the eight
	// digits of the names s-%08d.
	prefix := func(i int) string { return fmt.Sprintf("s-%05d", (i*7919)%max(1, jobs/1000)) }
	job := func(i int) int64 { return withRuns[(i*7919)%len(withRuns)] }
	return []apiEndpoint{
		{"jobs, first page (console)", func(int) string { return "/api/v1/jobs?limit=50" }},
		{"jobs, search by name prefix", func(i int) string { return "/api/v1/jobs?limit=50&q=" + prefix(i) }},
		{"jobs, search by name substring", func(i int) string {
			return fmt.Sprintf("/api/v1/jobs?limit=50&match=contains&q=%04d", (i*31)%10000)
		}},
		{"jobs, filter by app", func(i int) string { return "/api/v1/jobs?limit=50&app=" + app(i) }},
		{"apps", func(int) string { return "/api/v1/apps" }},
		{"dashboard summary, 1 h", func(int) string { return "/api/v1/dashboard?window=1h" }},
		{"dashboard summary, 24 h", func(int) string { return "/api/v1/dashboard?window=24h" }},
		{"one job's runs", func(i int) string { return fmt.Sprintf("/api/v1/runs?limit=50&job_id=%d", job(i)) }},
		{"runs, first page", func(int) string { return "/api/v1/runs?limit=50" }},
	}
}

// apiTiming is what the calls of one endpoint took.
type apiTiming struct {
	name           string
	calls, failed  int
	p50, p95, max  time.Duration
	workers        int
	stoppedByLimit bool
}

// timeEndpoint calls e calls times with workers clients at once (stopping
// after scaleAPIEndpointLimit) and returns the latencies' percentiles.
func timeEndpoint(tb testing.TB, c *cli.Client, e apiEndpoint, calls, workers int) apiTiming {
	tb.Helper()
	var mu sync.Mutex
	var took []int64
	failed := 0
	deadline := time.Now().Add(scaleAPIEndpointLimit)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var out any
				t0 := time.Now()
				err := c.Do(context.Background(), http.MethodGet, e.path(i), nil, &out)
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					if failed == 0 {
						tb.Logf("%s: %s: %v", e.name, e.path(i), err)
					}
					failed++
				} else {
					took = append(took, d.Microseconds())
				}
				mu.Unlock()
			}
		}()
	}
	var t apiTiming
	for i := range calls {
		if time.Now().After(deadline) {
			t.stoppedByLimit = true
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	timed := newAPITiming(e.name, took, failed, workers)
	timed.stoppedByLimit = t.stoppedByLimit
	return timed
}

// newAPITiming is the timing of an endpoint's calls that succeeded in
// tookUS (µs each, sorted here) and failed.
func newAPITiming(name string, tookUS []int64, failed, workers int) apiTiming {
	slices.Sort(tookUS)
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	t := apiTiming{name: name, calls: len(tookUS) + failed, failed: failed, workers: workers}
	t.p50, t.p95 = us(percentile(tookUS, 0.5)), us(percentile(tookUS, 0.95))
	if len(tookUS) > 0 {
		t.max = us(tookUS[len(tookUS)-1])
	}
	return t
}

// apiTable prints timings as the rows of docs/performance.md.
func apiTable(title string, rows []apiTiming) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n| %s | calls | p50 | p95 | max |\n|---|---|---|---|---|\n", title)
	for _, r := range rows {
		note := ""
		if r.failed > 0 {
			note += fmt.Sprintf(", %d failed", r.failed)
		}
		if r.stoppedByLimit {
			note += fmt.Sprintf(", stopped after %s", scaleAPIEndpointLimit)
		}
		fmt.Fprintf(&b, "| %s (%d at once) | %d%s | %s | %s | %s |\n", r.name, r.workers, r.calls, note,
			r.p50.Round(100*time.Microsecond), r.p95.Round(100*time.Microsecond), r.max.Round(100*time.Microsecond))
	}
	return b.String()
}

// BenchmarkScaleAPI times the operator API's lists at BENCH_SCALE_JOBS jobs
// and BENCH_SCALE_RUNS runs (see the comment at the top of this file) and
// prints the table of docs/performance.md. Run it once, through
// `make bench-scale-api`.
func BenchmarkScaleAPI(b *testing.B) {
	jobs := envInt(b, scaleJobsEnv, 1_000_000)
	runs := envInt(b, scaleRunsEnv, 1_000_000)
	appCount := envInt(b, scaleAppsEnv, 20)
	require.Positive(b, appCount, scaleAppsEnv)
	require.Positive(b, jobs, scaleJobsEnv)
	require.GreaterOrEqual(b, runs, 1440, scaleRunsEnv+": at least one run a minute")
	dsn, mysqld := privateHerdDB(b)
	env := startHerdEnv(b, dsn, nil)
	env.mysqldPID = mysqld
	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		env.fillAPIScale(b, jobs, runs, appCount)
		c := env.api(b)
		apps := make([]string, appCount)
		for i := range apps {
			apps[i] = "app" + strconv.Itoa(i)
		}
		endpoints := apiEndpoints(jobs, apps, env.jobsWithRuns(b))
		for _, e := range endpoints { // once each: the first call of a route pays for its plans
			var out any
			require.NoError(b, c.Do(context.Background(), http.MethodGet, e.path(0), nil, &out), e.name)
		}
		var serial, concurrent []apiTiming
		for _, e := range endpoints {
			serial = append(serial, timeEndpoint(b, c, e, scaleAPISerial, 1))
		}
		for _, e := range endpoints {
			concurrent = append(concurrent, timeEndpoint(b, c, e, scaleAPIConcurrent, scaleAPIWorkers))
		}
		env.checkAlive(b)
		load := ""
		if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
			load = strings.Join(strings.Fields(string(raw))[:3], " ")
		}
		title := fmt.Sprintf("bench-scale-api: %d jobs over %d apps, %d runs in 24 h; %d cores, load average %s at the end",
			jobs, appCount, runs, runtime.NumCPU(), load)
		fmt.Fprint(os.Stderr, apiTable(title, append(serial, concurrent...)))
		worst := slices.MaxFunc(serial, func(a, b apiTiming) int { return int(a.p95 - b.p95) })
		b.ReportMetric(float64(worst.p95.Microseconds())/1000, "worst-p95-ms")
	}
}

// fillAPIScale writes the jobs and runs of BenchmarkScaleAPI, each
// statement committed on its own, and waits until the leader folded the
// runs' 24 hours into the dashboard's rollup.
func (env *herdEnv) fillAPIScale(tb testing.TB, jobs, runs, apps int) {
	tb.Helper()
	now := env.dbNow(tb)
	t0 := now.Add(24 * time.Hour).Truncate(time.Minute)
	start := time.Now()
	for from := 1; from <= jobs; from += scaleFillChunk {
		vars := map[string]any{"apps": apps, "from": from, "to": min(from+scaleFillChunk-1, jobs), "t0": t0.UnixMilli(), "now": now.UnixMilli()}
		_, err := env.db.Exec(storetest.FillSQL(fillAPIJobs, vars))
		require.NoError(tb, err, "fill the jobs")
		storetest.FillJobPartitions(tb, env.db, env.dialect)
	}
	jobsTook := time.Since(start)
	step := int64(24*time.Hour/time.Millisecond) / int64(runs)
	for from := 1; from <= runs; from += scaleFillChunk {
		vars := map[string]any{"from": from, "to": min(from+scaleFillChunk-1, runs), "jobs": jobs, "apps": apps, "step": step, "now": now.UnixMilli() - step}
		res, err := env.db.Exec(storetest.FillSQL(fillAPIRuns, vars))
		require.NoError(tb, err, "fill the runs")
		n, err := res.RowsAffected()
		require.NoError(tb, err)
		require.Equal(tb, int64(min(from+scaleFillChunk-1, runs)-from+1), n, "runs %d…: each finds its job", from)
	}
	runsTook := time.Since(start) - jobsTook
	_, err := env.db.Exec(`REPLACE INTO app_job_count (app, jobs) SELECT app, COUNT(*) FROM job WHERE workflow_id IS NULL GROUP BY app`)
	require.NoError(tb, err)
	for _, table := range []string{"job", "job_run"} {
		_, err = env.db.Exec("ANALYZE TABLE " + table)
		require.NoError(tb, err)
	}
	// The rollup started when the admin did, with no runs: fold the day
	// again, as a leader that was down for a day would.
	from := now.Add(-24 * time.Hour).Truncate(time.Minute).UnixMilli()
	for _, table := range []string{"run_stat_minute", "run_stat_minute_all"} {
		_, err = env.db.Exec("DELETE FROM " + table) // minutes the leader folded during the fill
		require.NoError(tb, err)
	}
	_, err = env.db.Exec(`UPDATE run_stat_cursor SET folded_until = ? WHERE id = 1`, from)
	require.NoError(tb, err)
	foldStart := time.Now()
	want := now.Add(-time.Minute).Truncate(time.Minute).UnixMilli()
	testenv.WaitFor(tb, 15*time.Minute, func() (bool, error) {
		var until int64
		err := env.db.QueryRow(`SELECT folded_until FROM run_stat_cursor WHERE id = 1`).Scan(&until)
		return until >= want, err
	}, "the leader did not fold the day of runs into the dashboard's rollup")
	tb.Logf("scale-api: filled %d jobs in %s and %d runs in %s, counted and analysed them in %s; the leader folded the day in %s",
		jobs, jobsTook.Round(time.Millisecond), runs, runsTook.Round(time.Millisecond),
		(foldStart.Sub(start) - jobsTook - runsTook).Round(time.Millisecond), time.Since(foldStart).Round(time.Millisecond))
}

// envInt reads a positive count from the environment, def when unset.
func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(tb, err, name)
	return n
}

// jobsWithRuns returns the ids of up to 500 jobs among those of the newest
// runs (one's runs is a list the API is timed on).
func (env *herdEnv) jobsWithRuns(tb testing.TB) []int64 {
	tb.Helper()
	rows, err := env.db.Query(`SELECT DISTINCT job_id FROM (SELECT job_id FROM job_run ORDER BY id DESC LIMIT 2000) newest LIMIT 500`)
	require.NoError(tb, err)
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		require.NoError(tb, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(tb, rows.Err())
	require.NotEmpty(tb, ids, "no job has runs")
	return ids
}
