package chaos

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestChaosWorkflowBackfill: three admins on ZooKeeper and one real
// executor backfill a two-node workflow (extract → load, each a job
// sleeping 300ms) over 30 business dates with parallel 3. Once a third of
// the dates have ended, the leader is killed with kill -9; a successor
// takes over after the ZooKeeper session and finishes the backfill. Then
// the rows are counted: one workflow run per date (each keyed by its
// date), every run succeeded, one node run and one job run per node and
// date, and — from the runs' own start and end times — never more than 3
// runs of the backfill running at once, before, across or after the
// failover. A second request for the same range creates nothing.
func TestChaosWorkflowBackfill(t *testing.T) {
	const (
		dates    = 30
		parallel = 3
		from, to = "2026-01-01", "2026-01-30"
	)
	c, first := startWorkflowCluster(t)

	for _, name := range []string{"extract", "load"} {
		code, err := c.call(first, http.MethodPost, "/api/v1/jobs", map[string]any{
			"app": jobApp, "name": name, "handler": "demo.sleep", "cron": "0 3 1 1 *", "params": "ms=300", "slots": 1,
		}, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code, name)
	}
	var wf apitypes.Workflow
	code, err := c.call(first, http.MethodPost, "/api/v1/workflows", apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{
		App: jobApp, Name: "nightly", TimeZone: "UTC",
		Nodes: []apitypes.WorkflowNode{
			{Key: "extract", Job: &apitypes.WorkflowJobRef{Name: "extract"}},
			{Key: "load", Job: &apitypes.WorkflowJobRef{Name: "load"}},
		},
		Edges: []apitypes.WorkflowEdge{{From: "extract", To: "load"}},
	}}, &wf)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	backfill := "/api/v1/workflows/" + strconv.FormatInt(wf.ID, 10) + "/backfill"

	// The dry run lists the 30 dates, oldest first, and creates nothing.
	var plan apitypes.WorkflowBackfillPlan
	code, err = c.call(first, http.MethodPost, backfill, apitypes.WorkflowBackfill{From: from, To: to, Parallel: parallel, DryRun: true}, &plan)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, plan.Dates, dates)
	require.Equal(t, from, plan.Dates[0].Date)
	var runs int
	require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*) FROM workflow_run WHERE workflow_id = ?`, wf.ID).Scan(&runs))
	require.Zero(t, runs, "a dry run creates nothing")

	code, err = c.call(first, http.MethodPost, backfill, apitypes.WorkflowBackfill{From: from, To: to, Parallel: parallel}, &plan)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, dates, plan.Created)

	// Once a third of the dates have ended, kill -9 the leader.
	ended := func() (int, error) {
		var n int
		err := c.sql.QueryRow(`SELECT COUNT(*) FROM workflow_run WHERE workflow_id = ? AND finished_at IS NOT NULL`, wf.ID).Scan(&n)
		return n, err
	}
	testenv.WaitFor(t, 90*time.Second, func() (bool, error) {
		n, err := ended()
		return n >= dates/3, err
	}, "a third of the backfill did not end")
	holder, epoch := killLeader(t, c)
	killed := time.Now()
	n, err := ended()
	require.NoError(t, err)
	t.Logf("chaos: killed the leader %s (epoch %d) with %d of %d dates ended", holder, epoch, n, dates)

	testenv.WaitFor(t, 180*time.Second, func() (bool, error) {
		n, err := ended()
		return n == dates, err
	}, "the backfill did not finish after the failover")
	t.Logf("chaos: the backfill finished %s after the kill", time.Since(killed).Round(time.Millisecond))

	// One run per date, each succeeded, keyed by its date.
	var total, distinctDates, succeeded, keyed int
	require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT business_date), COALESCE(SUM(status = 'succeeded'), 0),
		COALESCE(SUM(run_key = CONCAT('date:', business_date)), 0)
		FROM workflow_run WHERE workflow_id = ?`, wf.ID).Scan(&total, &distinctDates, &succeeded, &keyed))
	require.Equal(t, dates, total, "one workflow run per date")
	require.Equal(t, dates, distinctDates)
	require.Equal(t, dates, succeeded)
	require.Equal(t, dates, keyed, "each run is keyed by its date")
	var lo, hi string
	require.NoError(t, c.sql.QueryRow(`SELECT MIN(business_date), MAX(business_date) FROM workflow_run WHERE workflow_id = ?`, wf.ID).Scan(&lo, &hi))
	require.Equal(t, from, lo)
	require.Equal(t, to, hi)

	// One node run and one succeeded job run per node and date.
	var nodeRuns, linked, jobRuns, okJobRuns, epochs int
	require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*), COUNT(n.job_run_id), COUNT(DISTINCT n.epoch) FROM workflow_node_run n
		JOIN workflow_run w ON w.id = n.workflow_run_id WHERE w.workflow_id = ?`, wf.ID).Scan(&nodeRuns, &linked, &epochs))
	require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*), COALESCE(SUM(status = 'succeeded'), 0) FROM job_run WHERE trigger_kind = 'workflow'`).Scan(&jobRuns, &okJobRuns))
	require.Equal(t, 2*dates, nodeRuns, "one node run per node and date")
	require.Equal(t, 2*dates, linked)
	require.Equal(t, 2*dates, jobRuns, "one job run per node run")
	require.Equal(t, 2*dates, okJobRuns)
	require.GreaterOrEqual(t, epochs, 2, "node runs were created before and after the failover")

	// Never more than parallel runs at once: a sweep over the runs' own
	// [started_at, finished_at) intervals (database clock, ms).
	most := mostAtOnce(t, c, wf.ID)
	t.Logf("chaos backfill summary: runs=%d dates=%d succeeded=%d node_runs=%d job_runs=%d node_run_epochs=%d most_running_at_once=%d",
		total, distinctDates, succeeded, nodeRuns, jobRuns, epochs, most)
	require.LessOrEqual(t, most, parallel, "more backfill runs ran at once than its parallel")
	require.Equal(t, parallel, most, "the backfill used its parallelism")

	// The same range again creates nothing: every date has its run.
	survivor := c.running()[0]
	code, err = c.call(survivor, http.MethodPost, backfill, apitypes.WorkflowBackfill{From: from, To: to, Parallel: parallel}, &plan)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	require.Zero(t, plan.Created)
	require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*) FROM workflow_run WHERE workflow_id = ?`, wf.ID).Scan(&total))
	require.Equal(t, dates, total)
	c.stopAdmins()
}

// mostAtOnce returns the largest number of runs of workflow id that were
// running at one instant, by their [started_at, finished_at) intervals.
func mostAtOnce(t *testing.T, c *cluster, id int64) int {
	t.Helper()
	most, err := testenv.MostAtOnce(c.sql, `SELECT started_at, finished_at FROM workflow_run WHERE workflow_id = ?`, id)
	require.NoError(t, err)
	return most
}
