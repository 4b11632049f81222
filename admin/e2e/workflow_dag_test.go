package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// The workflow benchmark of issue 22: a layered DAG of no-op nodes run by a
// real admin and real executors (the herd harness, herd_test.go), measured
// from the database's timestamps.
//
// The DAG has `layers` layers of `width` nodes; each node after the first
// layer waits for three nodes of the layer before it (its own column and
// the columns 1 and 7 to its right, wrapping), so 10 layers of 100 nodes
// have 2,700 edges, the shape of admin/workflow's pure benchmarks. Each
// node runs its own job (demo.noop, one slot), seeded by SQL, as a
// production workflow's nodes would.

// dagResult holds the figures of one workflow run.
type dagResult struct {
	nodes, edges  int
	readyCreated  []int64 // per node: ready → its node run and job run created (ms), sorted
	readyStarted  []int64 // per node: ready → its slot started on an executor (ms), sorted
	makespan      time.Duration
	criticalPath  time.Duration // the longest path by the nodes' own run time (slot started → run settled)
	runStatus     string
	nodeRuns      int
	jobRuns       int
	okJobRuns     int
	maxRunsPerJob int
}

// dagDef returns the definition of a layers × width DAG whose node (l, i)
// runs the job prefix+"l-i" of app herdApp.
func dagDef(name, prefix string, layers, width int) apitypes.WorkflowDef {
	key := func(l, i int) string { return fmt.Sprintf("n%d-%d", l, i) }
	def := apitypes.WorkflowDef{App: herdApp, Name: name, TimeZone: "UTC", FailurePolicy: "stop"}
	for l := range layers {
		for i := range width {
			def.Nodes = append(def.Nodes, apitypes.WorkflowNode{Key: key(l, i), Job: &apitypes.WorkflowJobRef{Name: prefix + key(l, i)}})
			if l == 0 {
				continue
			}
			parents := []int{i, (i + 1) % width, (i + 7) % width}
			slices.Sort(parents)
			for j, p := range parents {
				if j > 0 && p == parents[j-1] {
					continue // a narrow layer: the same parent twice
				}
				def.Edges = append(def.Edges, apitypes.WorkflowEdge{From: key(l-1, p), To: key(l, i)})
			}
		}
	}
	return def
}

// runDAG seeds the jobs of a layers × width DAG, saves it as a workflow
// through the API, triggers it, waits until the run ended (within
// `within`), checks that every node ran exactly once and succeeded, and
// returns the figures.
func (env *herdEnv) runDAG(tb testing.TB, layers, width int, within time.Duration) dagResult {
	tb.Helper()
	env.iter++
	prefix := fmt.Sprintf("dag%d-", env.iter)
	def := dagDef(fmt.Sprintf("dag-%d", env.iter), prefix, layers, width)

	// The nodes' jobs: once a year, not due during the benchmark.
	far := time.Now().AddDate(1, 0, 0).UnixMilli()
	for start := 0; start < len(def.Nodes); start += 500 {
		q := `INSERT INTO job (app, name, handler, cron_expr, time_zone, slot_count, slot_params, params, next_fire_at, created_at, updated_at) VALUES `
		var args []any
		for i, n := range def.Nodes[start:min(start+500, len(def.Nodes))] {
			if i > 0 {
				q += ","
			}
			q += `(?, ?, 'demo.noop', '0 0 1 1 *', 'UTC', 1, '', '', ?, ?, ?)`
			args = append(args, herdApp, n.Job.Name, far, far, far)
		}
		_, err := env.db.Exec(q, args...)
		require.NoError(tb, err, "seed the nodes' jobs")
	}

	api := env.api(tb)
	var wf apitypes.Workflow
	code, err := api.Call(context.Background(), http.MethodPost, "/api/v1/workflows", apitypes.WorkflowSpec{WorkflowDef: def}, &wf)
	require.NoError(tb, err)
	require.Equal(tb, http.StatusCreated, code, "save the workflow")
	var trig struct{ Run apitypes.WorkflowRun }
	b, isBench := tb.(*testing.B)
	if isBench {
		b.StartTimer()
	}
	code, err = api.Call(context.Background(), http.MethodPost, "/api/v1/workflows/"+strconv.FormatInt(wf.ID, 10)+"/trigger",
		apitypes.WorkflowTrigger{RunKey: "bench", BusinessDate: "2026-03-02"}, &trig)
	require.NoError(tb, err)
	require.Equal(tb, http.StatusCreated, code, "trigger the workflow")
	run := trig.Run.ID

	var r dagResult
	testenv.WaitFor(tb, within, func() (bool, error) {
		err := env.db.QueryRow(`SELECT status FROM workflow_run WHERE id = ?`, run).Scan(&r.runStatus)
		return err == nil && r.runStatus != "pending" && r.runStatus != "running", err
	}, "the workflow run did not end")
	if isBench {
		b.StopTimer()
	}
	r.nodes, r.edges = len(def.Nodes), len(def.Edges)

	// Exactly once: one node run and one job run per node, each job's run
	// its only run, every one succeeded.
	require.NoError(tb, env.db.QueryRow(`SELECT COUNT(*), COUNT(job_run_id) FROM workflow_node_run WHERE workflow_run_id = ?`, run).Scan(&r.nodeRuns, &r.jobRuns))
	require.NoError(tb, env.db.QueryRow(`SELECT COALESCE(SUM(r.status = 'succeeded'), 0), COALESCE(MAX(c.n), 0) FROM job_run r
		JOIN workflow_node_run n ON n.job_run_id = r.id
		JOIN (SELECT job_id, COUNT(*) AS n FROM job_run GROUP BY job_id) c ON c.job_id = r.job_id
		WHERE n.workflow_run_id = ?`, run).Scan(&r.okJobRuns, &r.maxRunsPerJob))
	require.Equal(tb, "succeeded", r.runStatus)
	require.Equal(tb, r.nodes, r.nodeRuns, "one node run per node")
	require.Equal(tb, r.nodes, r.jobRuns, "one job run per node run")
	require.Equal(tb, r.nodes, r.okJobRuns, "every node's job run succeeded")
	require.Equal(tb, 1, r.maxRunsPerJob, "each node's job ran once")

	env.measureDAG(tb, run, def, &r)
	return r
}

// measureDAG reads the figures of an ended run from the database. A node
// is ready when its last parent's job run settled (job_run.finished_at),
// a root when the workflow run started; it is dispatched when its node run
// and job run were created (one transaction), and it runs when its slot
// started on an executor.
func (env *herdEnv) measureDAG(tb testing.TB, run int64, def apitypes.WorkflowDef, r *dagResult) {
	tb.Helper()
	var started, finished int64
	require.NoError(tb, env.db.QueryRow(`SELECT started_at, finished_at FROM workflow_run WHERE id = ?`, run).Scan(&started, &finished))
	r.makespan = msDur(finished - started)

	type node struct{ created, slotStarted, settled int64 }
	nodes := map[string]node{}
	rows, err := env.db.Query(`SELECT n.node_key, n.created_at, MIN(a.started_at), r.finished_at
		FROM workflow_node_run n JOIN job_run r ON r.id = n.job_run_id JOIN slot_attempt a ON a.run_id = r.id
		WHERE n.workflow_run_id = ? GROUP BY n.node_key, n.created_at, r.finished_at`, run)
	require.NoError(tb, err)
	defer rows.Close()
	for rows.Next() {
		var k string
		var n node
		var slot sql.NullInt64
		require.NoError(tb, rows.Scan(&k, &n.created, &slot, &n.settled))
		require.True(tb, slot.Valid, "node %s: its slot started", k)
		n.slotStarted = slot.Int64
		nodes[k] = n
	}
	require.NoError(tb, rows.Err())
	require.Len(tb, nodes, len(def.Nodes))

	parents := map[string][]string{}
	for _, e := range def.Edges {
		parents[e.To] = append(parents[e.To], e.From)
	}
	longest := map[string]int64{} // the longest path ending at the node, by own run time
	for _, d := range def.Nodes { // layer by layer: parents come first
		n := nodes[d.Key]
		ready, before := started, int64(0)
		for _, p := range parents[d.Key] {
			ready = max(ready, nodes[p].settled)
			before = max(before, longest[p])
		}
		longest[d.Key] = before + (n.settled - n.slotStarted)
		r.criticalPath = max(r.criticalPath, msDur(longest[d.Key]))
		r.readyCreated = append(r.readyCreated, n.created-ready)
		r.readyStarted = append(r.readyStarted, n.slotStarted-ready)
	}
	slices.Sort(r.readyCreated)
	slices.Sort(r.readyStarted)
}

// api returns a client of the admin logged in as admin, with the password
// its first start printed.
func (env *herdEnv) api(tb testing.TB) *cli.Client {
	tb.Helper()
	m := harness.PasswordRE.FindStringSubmatch(env.admin.Stdout())
	require.NotNil(tb, m, "the admin's first start prints the console password")
	c := harness.NewClient(env.url)
	require.NoError(tb, c.Login(context.Background(), "admin", m[1]))
	return c
}

// BenchmarkWorkflowDAGE2E runs a 1,000-node layered DAG (10 layers of 100
// no-op nodes, 2,700 edges) through a real admin and 2 real executors on a
// private MariaDB (the herd harness) and reports, from the database:
//
//	ready-created-p50-ms, -p99-ms, -max-ms  workflow scheduling overhead per
//	                node: its last parent settled (a root: the run started)
//	                → its node run and job run created by the engine
//	ready-started-p50-ms, -p99-ms  the same node → its slot started on an
//	                executor (what the node's handler feels)
//	makespan-s      the workflow run's start → its end
//	critical-path-ms  the longest path by the nodes' own run time (slot
//	                started → job run settled): what the makespan would be
//	                with no scheduling overhead
//	per-layer-ms    makespan / layers
//
// One op is one workflow run, timed from the trigger until the test saw it
// ended; run it once: go test -run '^$' -bench WorkflowDAGE2E -benchtime 1x ./admin/e2e/
func BenchmarkWorkflowDAGE2E(b *testing.B) {
	const layers, width = 10, 100
	dsn, mysqld := privateHerdDB(b)
	env := startHerdEnv(b, dsn, nil)
	env.mysqldPID = mysqld
	b.ResetTimer()
	b.StopTimer()
	var created50, created99, createdMax, started50, started99, makespan, critical float64
	for range b.N {
		r := env.runDAG(b, layers, width, 10*time.Minute)
		created50 += float64(percentile(r.readyCreated, 0.50))
		created99 += float64(percentile(r.readyCreated, 0.99))
		createdMax += float64(r.readyCreated[len(r.readyCreated)-1])
		started50 += float64(percentile(r.readyStarted, 0.50))
		started99 += float64(percentile(r.readyStarted, 0.99))
		makespan += r.makespan.Seconds()
		critical += float64(r.criticalPath.Milliseconds())
		b.Logf("%d nodes, %d edges: ready→created p50 %d ms p99 %d ms max %d ms; ready→slot started p50 %d ms p99 %d ms; makespan %s, critical path %s",
			r.nodes, r.edges, percentile(r.readyCreated, 0.50), percentile(r.readyCreated, 0.99), r.readyCreated[len(r.readyCreated)-1],
			percentile(r.readyStarted, 0.50), percentile(r.readyStarted, 0.99), r.makespan, r.criticalPath)
	}
	n := float64(b.N)
	b.ReportMetric(created50/n, "ready-created-p50-ms")
	b.ReportMetric(created99/n, "ready-created-p99-ms")
	b.ReportMetric(createdMax/n, "ready-created-max-ms")
	b.ReportMetric(started50/n, "ready-started-p50-ms")
	b.ReportMetric(started99/n, "ready-started-p99-ms")
	b.ReportMetric(makespan/n, "makespan-s")
	b.ReportMetric(critical/n, "critical-path-ms")
	b.ReportMetric(makespan/n*1000/layers, "per-layer-ms")
}
