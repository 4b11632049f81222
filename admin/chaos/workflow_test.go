package chaos

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// TestChaosWorkflowLeaderKilled: three admins on ZooKeeper and one real
// executor run a 20-node diamond-shaped workflow (a root, three layers of
// six nodes each after every node of the layer before, a sink; each node
// a job sleeping 1.5s). Once the first layer runs, the leader is killed
// with kill -9; a successor takes over after the ZooKeeper session. Every
// node must have run exactly once — one node run, one job run, one
// succeeded slot attempt — and the workflow run must succeed, with node
// runs created under both epochs.
func TestChaosWorkflowLeaderKilled(t *testing.T) {
	c, first := startWorkflowCluster(t)

	// The jobs and the workflow.
	const layers, width = 3, 6
	key := func(layer, i int) string { return fmt.Sprintf("l%d-%d", layer, i) }
	nodes := []apitypes.WorkflowNode{{Key: "root", Job: &apitypes.WorkflowJobRef{Name: "root"}}}
	var edges []apitypes.WorkflowEdge
	for l := 1; l <= layers; l++ {
		for i := range width {
			k := key(l, i)
			nodes = append(nodes, apitypes.WorkflowNode{Key: k, Job: &apitypes.WorkflowJobRef{Name: k}})
			if l == 1 {
				edges = append(edges, apitypes.WorkflowEdge{From: "root", To: k})
				continue
			}
			for p := range width {
				edges = append(edges, apitypes.WorkflowEdge{From: key(l-1, p), To: k})
			}
		}
	}
	nodes = append(nodes, apitypes.WorkflowNode{Key: "sink", Job: &apitypes.WorkflowJobRef{Name: "sink"}})
	for p := range width {
		edges = append(edges, apitypes.WorkflowEdge{From: key(layers, p), To: "sink"})
	}
	require.Len(t, nodes, 20)
	for _, n := range nodes {
		code, err := c.call(first, http.MethodPost, "/api/v1/jobs", map[string]any{
			"app": jobApp, "name": n.Key, "handler": "demo.sleep", "cron": "0 3 1 1 *", "params": "ms=1500", "slots": 1,
		}, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code, n.Key)
	}
	var wf apitypes.Workflow
	code, err := c.call(first, http.MethodPost, "/api/v1/workflows", apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{
		App: jobApp, Name: "diamond", Nodes: nodes, Edges: edges}}, &wf)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)

	var trig struct{ Run apitypes.WorkflowRun }
	code, err = c.call(first, http.MethodPost, "/api/v1/workflows/"+strconv.FormatInt(wf.ID, 10)+"/trigger",
		apitypes.WorkflowTrigger{RunKey: "chaos-1", BusinessDate: "2026-03-02"}, &trig)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)
	runID := trig.Run.ID

	// Once the first layer was started, kill -9 the leader.
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var n int
		err := c.sql.QueryRow(`SELECT COUNT(*) FROM workflow_node_run WHERE workflow_run_id = ? AND node_key LIKE 'l1-%'`, runID).Scan(&n)
		return n == width, err
	}, "the first layer did not start")
	holder, epoch := killLeader(t, c)
	killed := time.Now()
	t.Logf("chaos: killed the leader %s (epoch %d) while the first layer ran", holder, epoch)

	var status string
	testenv.WaitFor(t, 120*time.Second, func() (bool, error) {
		err := c.sql.QueryRow(`SELECT status FROM workflow_run WHERE id = ?`, runID).Scan(&status)
		return err == nil && status != "pending" && status != "running", err
	}, "the workflow run did not end")
	t.Logf("chaos: the workflow run ended %s %s after the kill", status, time.Since(killed).Round(time.Millisecond))
	require.Equal(t, "succeeded", status)

	// Count rows: one node run and one job run per node, each job run
	// succeeded with one succeeded attempt.
	var nodeRuns, distinctNodes, jobRuns, linked, succeeded, attempts, okAttempts, epochs int
	require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT node_key), COUNT(job_run_id), COUNT(DISTINCT epoch)
		FROM workflow_node_run WHERE workflow_run_id = ?`, runID).Scan(&nodeRuns, &distinctNodes, &linked, &epochs))
	require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*), COALESCE(SUM(status = 'succeeded'), 0) FROM job_run WHERE trigger_kind = 'workflow'`).Scan(&jobRuns, &succeeded))
	require.NoError(t, c.sql.QueryRow(`SELECT COUNT(*), COALESCE(SUM(a.status = 'succeeded'), 0) FROM slot_attempt a
		JOIN job_run r ON r.id = a.run_id WHERE r.trigger_kind = 'workflow'`).Scan(&attempts, &okAttempts))
	var perJobMax int
	require.NoError(t, c.sql.QueryRow(`SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM job_run WHERE trigger_kind = 'workflow' GROUP BY job_id) x`).Scan(&perJobMax))
	t.Logf("chaos workflow summary: node_runs=%d distinct_nodes=%d job_runs=%d succeeded=%d attempts=%d succeeded_attempts=%d node_run_epochs=%d max_runs_per_job=%d",
		nodeRuns, distinctNodes, jobRuns, succeeded, attempts, okAttempts, epochs, perJobMax)
	require.Equal(t, 20, nodeRuns)
	require.Equal(t, 20, distinctNodes)
	require.Equal(t, 20, linked)
	require.Equal(t, 20, jobRuns)
	require.Equal(t, 20, succeeded)
	require.Equal(t, 1, perJobMax, "each node's job ran once")
	require.Equal(t, 20, okAttempts, "one succeeded attempt per job run")
	require.GreaterOrEqual(t, epochs, 2, "node runs were created before and after the failover")
	c.stopAdmins()
}

// startWorkflowCluster starts the three admins and one real executor of
// jobApp (capacity 8) that knows all of them, and returns the cluster and
// its first admin.
func startWorkflowCluster(t *testing.T) (*cluster, *admin) {
	t.Helper()
	c := newCluster(t)
	c.startAdmins()
	var urls []string
	for i := 1; i <= adminCount; i++ {
		urls = append(urls, c.admins["admin-"+strconv.Itoa(i)].URL)
	}
	harness.StartExecutor(t, harness.ExecutorOpts{App: jobApp, Admins: strings.Join(urls, ","), Capacity: 8,
		Heartbeat: 500 * time.Millisecond, Secret: c.secret, StartTimeout: 60 * time.Second})
	return c, c.admins["admin-1"]
}

// killLeader kills the holder of the leader row with kill -9 and returns
// its id and epoch.
func killLeader(t *testing.T, c *cluster) (string, int64) {
	t.Helper()
	var epoch int64
	var holder string
	require.NoError(t, c.sql.QueryRow("SELECT epoch, holder FROM leader WHERE id = 1").Scan(&epoch, &holder))
	leader := c.admins[holder]
	require.NotNil(t, leader, "the leader row names %q", holder)
	require.NoError(t, leader.Kill())
	leader.dead = true
	return holder, epoch
}
