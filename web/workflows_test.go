package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestWorkflowsInBrowser: a diamond workflow with a tail (extract → two
// transforms → load → report, and a clean-up after extract) saved through
// the API is listed on the Workflows page; its page draws every node and
// edge from the admin's layout, left to right by layer, and a click on a
// node shows what it runs and what it waits for. A second workflow of real
// jobs is run from its page: every node is coloured by its state and links
// to its job run.
func TestWorkflowsInBrowser(t *testing.T) {
	t.Parallel() // beside TestConsoleInBrowser's wait for its first folded minute
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	wfID := api.createWorkflow(map[string]any{
		"app": "demo", "name": "nightly-etl", "description": "a diamond with a tail", "cron": "0 2 * * *", "time_zone": "Asia/Shanghai",
		"nodes": []map[string]any{
			{"key": "extract", "handler": "demo.sleep", "params": "ms=10", "slots": 4},
			{"key": "transform_a", "handler": "demo.hello"},
			{"key": "transform_b", "handler": "demo.hello"},
			{"key": "load", "handler": "demo.sleep", "start": "all_success"},
			{"key": "report", "handler": "demo.hello"},
			{"key": "cleanup", "handler": "demo.hello", "start": "all_done"},
		},
		"edges": []map[string]any{
			{"from": "extract", "to": "transform_a"}, {"from": "extract", "to": "transform_b"},
			{"from": "transform_a", "to": "load"}, {"from": "transform_b", "to": "load"},
			{"from": "load", "to": "report"}, {"from": "extract", "to": "cleanup"},
		},
	})

	b := newBrowser(t, testenv.Chromium(t), artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)
	b.menu("workflows")
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#workflows-table tbody tr")].some(tr => tr.textContent.includes("nightly-etl") &&
		tr.textContent.includes("0 2 * * *") && tr.textContent.includes("Asia/Shanghai"))`, "workflow listed with its schedule")
	b.screenshot("w1-workflows")

	b.do(chromedp.Click(chromedp.CSS(`#workflows-table a.workflow-link`)))
	b.waitJS(15*time.Second, fmt.Sprintf(`location.hash === "#/workflows/%d" && document.querySelectorAll("#dag-svg .dag-node").length === 6 &&
		document.querySelectorAll("#dag-svg .dag-edge").length === 6`, wfID), "graph drawn: 6 nodes, 6 edges")
	// Left to right by layer: extract, then the transforms and the
	// clean-up, then load, then report.
	x := func(key string) int {
		return b.evalInt(fmt.Sprintf(`Math.round(document.querySelector('#dag-svg .dag-node[data-node=%q]').getBoundingClientRect().left)`, key))
	}
	require.Less(t, x("extract"), x("transform_a"))
	require.Equal(t, x("transform_a"), x("transform_b"))
	require.Equal(t, x("transform_a"), x("cleanup"))
	require.Less(t, x("transform_b"), x("load"))
	require.Less(t, x("load"), x("report"))
	require.True(t, b.evalBool(`document.querySelector('#dag-svg .dag-edge[data-from="load"][data-to="report"]') !== null`))
	require.True(t, b.evalBool(`document.querySelector("#workflow-runs").hidden`), "no runs yet")

	// A click on load: what it runs and whom it waits for.
	b.do(chromedp.Click(chromedp.CSS(`#dag-svg .dag-node[data-node="load"]`)))
	b.waitJS(5*time.Second, `!document.querySelector("#workflow-node").hidden && document.querySelector('#dag-svg .dag-node[data-node="load"]').classList.contains("picked")`, "node picked")
	panel := b.text("#workflow-node")
	require.Contains(t, panel, "demo.sleep")
	require.Contains(t, panel, "transform_a, transform_b")
	require.Contains(t, panel, "every parent succeeded")
	require.Contains(t, panel, "report")
	b.do(chromedp.Click(chromedp.CSS(`#dag-svg .dag-node[data-node="cleanup"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#workflow-node").textContent.includes("every parent ended")`, "cleanup's start rule shown")
	b.screenshot("w2-workflow")

	// A workflow of the demo executor's jobs, run from its page: a bad
	// business date is refused in the dialog, then the run colours every
	// node as it succeeds, and a node links to its job run.
	for _, name := range []string{"wf-extract", "wf-load-a", "wf-load-b"} {
		api.createJob(map[string]any{"app": "demo", "name": name, "handler": "demo.hello", "cron": "0 0 1 1 *", "slots": 2})
	}
	var fan struct {
		ID int64 `json:"id"`
	}
	api.call(http.MethodPost, "/api/v1/workflows", map[string]any{
		"app": "demo", "name": "fan-out",
		"nodes": []map[string]any{
			{"key": "extract", "job": map[string]any{"name": "wf-extract"}},
			{"key": "load_a", "job": map[string]any{"name": "wf-load-a"}},
			{"key": "load_b", "job": map[string]any{"name": "wf-load-b"}},
		},
		"edges": []map[string]any{{"from": "extract", "to": "load_a"}, {"from": "extract", "to": "load_b"}},
	}, &fan)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/workflows/%d", sa.base, fan.ID)))
	b.waitJS(15*time.Second, `document.querySelectorAll("#dag-svg .dag-node").length === 3 && document.querySelector("#workflow-trigger") !== null`, "fan-out drawn")
	b.do(chromedp.Click(chromedp.CSS("#workflow-trigger")), chromedp.WaitVisible(chromedp.CSS("#workflow-trigger-dialog")))
	b.setValue("#wf-date", "2026-13-01")
	b.do(chromedp.Click(chromedp.CSS(`#workflow-trigger-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#workflow-trigger-dialog [data-error-for="business_date"]').textContent.includes("YYYY-MM-DD")`, "bad business date refused")
	b.setValue("#wf-date", "2026-12-01")
	b.do(chromedp.Click(chromedp.CSS(`#workflow-trigger-dialog button[data-action="ok"]`)))
	b.waitJS(60*time.Second, `document.querySelector("#workflow-trigger-dialog") === null &&
		[...document.querySelectorAll("#dag-svg .dag-node")].every(g => g.dataset.state === "succeeded") &&
		document.querySelector("#workflow-run-shown").textContent.includes("2026-12-01") &&
		document.querySelector("#workflow-runs tbody tr.selected") !== null`, "every node succeeded, coloured")
	b.screenshot("w3-workflow-run")
	b.do(chromedp.Click(chromedp.CSS(`#dag-svg .dag-node[data-node="load_b"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#workflow-node-run") !== null`, "the node's job run linked")
	b.do(chromedp.Click(chromedp.CSS("#workflow-node-run")))
	b.waitJS(15*time.Second, `/^#\/runs\/\d+$/.test(location.hash) && document.querySelector(".page-runs") !== null`, "the node's job run page")
	// Backfill three business dates, two at a time, after a dry run that
	// lists them; the runs run and succeed.
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/workflows/%d", sa.base, fan.ID)))
	b.do(chromedp.WaitVisible(chromedp.CSS("#workflow-backfill")), chromedp.Click(chromedp.CSS("#workflow-backfill")), chromedp.WaitVisible(chromedp.CSS("#workflow-backfill-dialog")))
	b.setValue("#bf-from", "2026-11-03")
	b.setValue("#bf-to", "2026-11-01")
	b.do(chromedp.Click(chromedp.CSS("#bf-preview")))
	b.waitJS(15*time.Second, `document.querySelector('#workflow-backfill-dialog [data-error-for="to"]').textContent.includes("is before")`, "a backwards range refused next to To")
	b.setValue("#bf-from", "2026-11-01")
	b.setValue("#bf-to", "2026-11-03")
	b.setValue("#bf-parallel", "2")
	b.do(chromedp.Click(chromedp.CSS("#bf-preview")))
	b.waitJS(15*time.Second, `document.querySelectorAll('#bf-plan tr[data-action="create"]').length === 3 &&
		document.querySelector("#bf-summary").textContent.includes("3 run(s) to create")`, "dry run lists three dates to create")
	b.screenshot("w4-backfill-dry-run")
	require.Equal(t, 1, countRuns(api, fan.ID), "a dry run creates nothing")
	b.do(chromedp.Click(chromedp.CSS(`#workflow-backfill-dialog button[data-action="ok"]`)))
	b.waitJS(60*time.Second, `document.querySelector("#workflow-backfill-dialog") === null &&
		document.querySelectorAll("#workflow-runs tbody tr").length === 4 &&
		[...document.querySelectorAll("#workflow-runs tbody tr")].filter(tr => tr.textContent.includes("Backfill") && tr.textContent.includes("Succeeded")).length === 3`,
		"three backfill runs, succeeded")
	require.Equal(t, 4, countRuns(api, fan.ID))

	// A failed run re-run from its failed node: the job is fixed, "Rerun
	// from here" on the node runs it (and only it) again, and the run
	// succeeds.
	flakyJob := api.createJob(map[string]any{"app": "demo", "name": "wf-flaky", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 1,
		"params": "slots=0", "retry_max": 0})
	var chain struct {
		ID int64 `json:"id"`
	}
	api.call(http.MethodPost, "/api/v1/workflows", map[string]any{
		"app": "demo", "name": "flaky-chain",
		"nodes": []map[string]any{{"key": "extract", "job": map[string]any{"name": "wf-extract"}}, {"key": "settle", "job": map[string]any{"name": "wf-flaky"}}},
		"edges": []map[string]any{{"from": "extract", "to": "settle"}},
	}, &chain)
	api.call(http.MethodPost, fmt.Sprintf("/api/v1/workflows/%d/trigger", chain.ID), map[string]any{"business_date": "2026-12-01"}, nil)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/workflows/%d", sa.base, chain.ID)))
	b.waitJS(60*time.Second, `document.querySelector('#dag-svg .dag-node[data-node="settle"]') !== null &&
		document.querySelector('#dag-svg .dag-node[data-node="settle"]').dataset.state === "failed" &&
		document.querySelector("#workflow-run-shown").textContent.includes("Failed")`, "the settle node failed, and the run")
	var fj struct {
		Version int64 `json:"version"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/jobs/%d", flakyJob), nil, &fj)
	api.call(http.MethodPut, fmt.Sprintf("/api/v1/jobs/%d", flakyJob), map[string]any{"app": "demo", "name": "wf-flaky", "handler": "demo.fail",
		"cron": "0 0 1 1 *", "slots": 1, "params": "slots=5", "retry_max": 0, "version": fj.Version}, nil)
	b.do(chromedp.Click(chromedp.CSS(`#dag-svg .dag-node[data-node="settle"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#workflow-rerun") !== null`, "Rerun from here offered on an ended run")
	b.do(chromedp.Click(chromedp.CSS("#workflow-rerun")), chromedp.WaitVisible(chromedp.CSS("#workflow-rerun-dialog")))
	b.do(chromedp.Click(chromedp.CSS(`#workflow-rerun-dialog button[data-action="ok"]`)))
	b.waitJS(60*time.Second, `document.querySelector('#dag-svg .dag-node[data-node="settle"]').dataset.state === "succeeded" &&
		document.querySelector("#workflow-run-shown").textContent.includes("Succeeded")`, "re-run: settle succeeded, and the run")
	b.screenshot("w5-workflow-rerun")
	var chainRuns struct {
		Runs []struct {
			ID     int64 `json:"id"`
			Reruns int   `json:"reruns"`
		} `json:"runs"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d/runs", chain.ID), nil, &chainRuns)
	require.Len(t, chainRuns.Runs, 1)
	require.Equal(t, 1, chainRuns.Runs[0].Reruns)
	var chainDetail struct {
		Nodes []struct {
			NodeKey string `json:"node_key"`
			Rerun   int    `json:"rerun"`
			Status  string `json:"status"`
		} `json:"nodes"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflow-runs/%d", chainRuns.Runs[0].ID), nil, &chainDetail)
	nodeRuns := map[string][]string{}
	for _, n := range chainDetail.Nodes {
		nodeRuns[n.NodeKey] = append(nodeRuns[n.NodeKey], fmt.Sprintf("%d:%s", n.Rerun, n.Status))
	}
	require.Equal(t, map[string][]string{"extract": {"0:succeeded"}, "settle": {"0:failed", "1:succeeded"}}, nodeRuns, "extract ran once")

	var detail struct {
		Nodes []struct {
			NodeKey      string `json:"node_key"`
			Status       string `json:"status"`
			JobRunStatus string `json:"job_run_status"`
		} `json:"nodes"`
	}
	var runs struct {
		Runs []struct {
			ID           int64  `json:"id"`
			BusinessDate string `json:"business_date"`
			Status       string `json:"status"`
		} `json:"runs"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d/runs", fan.ID), nil, &runs)
	require.Len(t, runs.Runs, 4, "the refused trigger created nothing")
	runs.Runs = runs.Runs[3:] // the oldest: the trigger's
	require.Equal(t, "2026-12-01", runs.Runs[0].BusinessDate)
	require.Equal(t, "succeeded", runs.Runs[0].Status)
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflow-runs/%d", runs.Runs[0].ID), nil, &detail)
	require.Len(t, detail.Nodes, 3)
	for _, n := range detail.Nodes {
		require.Equal(t, "succeeded", n.Status, n.NodeKey)
		require.Equal(t, "succeeded", n.JobRunStatus, n.NodeKey)
	}
}

// TestWorkflowResultsInBrowser: a workflow of inline demo.sum nodes runs
// on the standalone's executor; its page shows a node's result in the
// node's panel, the node's job run page shows the run's result as a
// read-only JSON block, and the job's page says the workflow owns it.
func TestWorkflowResultsInBrowser(t *testing.T) {
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	wfID := api.createWorkflow(map[string]any{
		"app": "demo", "name": "sums",
		"nodes": []map[string]any{
			{"key": "first", "handler": "demo.sum", "params": `{"add":4}`},
			{"key": "second", "handler": "demo.sum", "params": `{"add":3}`},
		},
		"edges": []map[string]any{{"from": "first", "to": "second"}},
	})
	runWorkflow(t, api, wfID)

	b := newBrowser(t, testenv.Chromium(t), artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/workflows/%d", sa.base, wfID)))
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#dag-svg .dag-node")].length === 2 &&
		[...document.querySelectorAll("#dag-svg .dag-node")].every(g => g.dataset.state === "succeeded")`, "both nodes succeeded")
	b.do(chromedp.Click(chromedp.CSS(`#dag-svg .dag-node[data-node="second"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#workflow-node-result") !== null`, "the node's result shown")
	require.JSONEq(t, `{"sum":7}`, b.text("#workflow-node-result"), "second added 3 to first's 4")
	b.screenshot("w5-workflow-result")
	b.do(chromedp.Click(chromedp.CSS("#workflow-node-run")))
	b.waitJS(15*time.Second, `/^#\/runs\/\d+$/.test(location.hash) && document.querySelector("#run-result-card") !== null &&
		!document.querySelector("#run-result-card").hidden`, "the run page shows the result")
	require.JSONEq(t, `{"sum":7}`, b.text("#run-result"))
	// The run's job is the node's, owned by the workflow: its page offers
	// no action but a way back to the workflow.
	b.do(chromedp.Click(chromedp.CSS(`#run-actions a[href^="#/jobs/"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#job-workflow-owned") !== null`, "the job page says the workflow owns the job")
	require.Contains(t, b.text("#job-workflow-owned"), fmt.Sprintf("workflow #%d", wfID))
	require.False(t, b.evalBool(`document.querySelector("#job-actions button") !== null`), "no job actions")
	b.do(chromedp.Click(chromedp.CSS("#job-workflow")))
	b.waitJS(15*time.Second, fmt.Sprintf(`location.hash === "#/workflows/%d"`, wfID), "back to the workflow")
}

// TestCrossAppResultHiddenInBrowser: a workflow of app reports runs a job
// of app demo (saved by the admin). Its run's page shows the node's result
// to the admin; to an operator of reports alone it says the result is
// hidden and why, and the API refuses that operator a rerun, naming the
// app the workflow reaches (docs/security.md, "Apps").
func TestCrossAppResultHiddenInBrowser(t *testing.T) {
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	api.createJob(map[string]any{"app": "demo", "name": "sum", "handler": "demo.sum", "params": `{"add":5}`, "cron": "0 3 * * *"})
	wfID := api.createWorkflow(map[string]any{
		"app": "reports", "name": "uses-demo",
		"nodes": []map[string]any{{"key": "total", "job": map[string]any{"app": "demo", "name": "sum"}}},
	})
	runWorkflow(t, api, wfID)
	const rita, ritaPassword = "rita", "reports-only-9f2k"
	require.Less(t, api.call(http.MethodPost, "/api/v1/users", map[string]any{"username": rita, "password": ritaPassword, "role": "operator", "apps": []string{"reports"}}, nil), 300)

	var runs struct {
		Runs []struct {
			ID int64 `json:"id"`
		} `json:"runs"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d/runs", wfID), nil, &runs)
	require.Len(t, runs.Runs, 1)
	ritaAPI := newAPIClient(t, sa.base, rita, ritaPassword)
	var refusal struct {
		Error string `json:"error"`
	}
	code, err := ritaAPI.api.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/workflow-runs/%d/rerun", runs.Runs[0].ID), map[string]any{"from": []string{"total"}}, &refusal)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, code, refusal.Error)
	require.Contains(t, refusal.Error, "reaches app demo (node total runs job demo/sum)")

	b := newBrowser(t, testenv.Chromium(t), artifactsDir(t))
	defer b.checkConsole()
	open := func(user, password string) {
		b.do(chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
		b.login(user, password)
		b.do(chromedp.Navigate(fmt.Sprintf("%s/#/workflows/%d", sa.base, wfID)))
		b.waitJS(15*time.Second, `[...document.querySelectorAll("#dag-svg .dag-node")].length === 1 &&
			document.querySelector("#dag-svg .dag-node").dataset.state === "succeeded"`, "the node succeeded")
		b.do(chromedp.Click(chromedp.CSS(`#dag-svg .dag-node[data-node="total"]`)))
	}
	open("admin", sa.password)
	b.waitJS(5*time.Second, `document.querySelector("#workflow-node-result") !== null`, "the admin sees the node's result")
	require.JSONEq(t, `{"sum":5}`, b.text("#workflow-node-result"))
	b.do(chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	open(rita, ritaPassword)
	b.waitJS(5*time.Second, `document.querySelector("#workflow-node-result-hidden") !== null`, "rita is told the result is hidden")
	require.False(t, b.evalBool(`document.querySelector("#workflow-node-result") !== null`), "no result shown to rita")
	require.Equal(t, "hidden: the node ran a job of an app you may not see", b.text("#workflow-node-result-hidden"))
	b.screenshot("w6-cross-app-result-hidden")
}

// createWorkflow saves a workflow and returns its id.
func (c *apiClient) createWorkflow(spec map[string]any) int64 {
	var wf struct {
		ID int64 `json:"id"`
	}
	c.call(http.MethodPost, "/api/v1/workflows", spec, &wf)
	return wf.ID
}

// runWorkflow triggers workflow id and waits until its run succeeded.
func runWorkflow(t *testing.T, api *apiClient, id int64) {
	t.Helper()
	var trig struct {
		Run struct {
			ID int64 `json:"id"`
		} `json:"run"`
	}
	api.call(http.MethodPost, fmt.Sprintf("/api/v1/workflows/%d/trigger", id), nil, &trig)
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var d struct {
			Run struct {
				Status string `json:"status"`
			} `json:"run"`
		}
		api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflow-runs/%d", trig.Run.ID), nil, &d)
		return d.Run.Status == "succeeded", fmt.Errorf("workflow run %d is %s", trig.Run.ID, d.Run.Status)
	}, "the workflow run succeeds")
}

// countRuns is the number of runs of workflow id.
func countRuns(api *apiClient, id int64) int {
	var out struct {
		Runs []struct{} `json:"runs"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d/runs", id), nil, &out)
	return len(out.Runs)
}
