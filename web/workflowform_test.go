package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestWorkflowEditorInBrowser: an operator writes a workflow in the
// console. From the Workflows page, New workflow: three nodes (two jobs
// picked by name and an inline handler), each running after the one before;
// the graph is drawn as it is typed. A cycle is named above the nodes, an
// unknown job in its node's box, both before saving. Saved, the workflow's
// page draws it. Edited: the failure policy changed and a node added
// through the JSON view, saved as version 2. Run and cancelled while its
// first node sleeps: the run, the node and its job run cancelled. Deleted:
// gone from the list.
func TestWorkflowEditorInBrowser(t *testing.T) {
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	// extract sleeps long enough for its run to be cancelled.
	api.createJob(map[string]any{"app": "demo", "name": "wf-extract", "handler": "demo.sleep", "params": "ms=120000", "cron": "0 0 1 1 *"})
	api.createJob(map[string]any{"app": "demo", "name": "wf-load", "handler": "demo.hello", "cron": "0 0 1 1 *"})

	b := newBrowser(t, testenv.Chromium(t), artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)
	b.menu("workflows")
	b.do(chromedp.WaitVisible(chromedp.CSS("#workflow-new")), chromedp.Click(chromedp.CSS("#workflow-new")))
	b.waitJS(15*time.Second, `location.hash === "#/workflows/new" && document.querySelectorAll("#wf-nodes .wf-node").length === 1`, "the editor with one empty node")

	b.setValue("#wf-app", "demo")
	b.setValue("#wf-name", "nightly")
	b.setValue("#wf-cron", "0 2 * * *")
	b.setValue("#wf-time_zone", "Asia/Shanghai")
	b.setRow(0, "key", "extract")
	b.setRow(0, "ref", "wf-extract")
	b.do(chromedp.Click(chromedp.CSS("#wf-add-node")))
	b.setRow(1, "key", "load")
	b.setRow(1, "ref", "wf-load")
	b.setRow(1, "after", "extract")
	b.do(chromedp.Click(chromedp.CSS("#wf-add-node")))
	b.setRow(2, "key", "notify")
	b.setRow(2, "kind", "handler")
	b.setRow(2, "ref", "demo.hello")
	b.setRow(2, "after", "load")
	b.waitJS(15*time.Second, `document.querySelector("#wf-pv-state").dataset.state === "valid" &&
		document.querySelectorAll("#wf-pv-graph .dag-node").length === 3 && document.querySelectorAll("#wf-pv-graph .dag-edge").length === 2 &&
		document.querySelectorAll("#wf-pv-firings tr").length === 5`, "a valid draft drawn with its next firings")
	require.Contains(t, b.text("#wf-pv-firings"), "02:00:00 CST")
	require.True(t, b.evalBool(`document.querySelector("#wf-nodes .wf-node:nth-child(3) .wf-params").disabled === false &&
		document.querySelector("#wf-nodes .wf-node:nth-child(1) .wf-params").disabled === true`), "params only for an inline node")

	// A cycle is named above the nodes; an unknown job in its node's box.
	b.setRow(0, "after", "notify")
	b.waitJS(15*time.Second, `!document.querySelector("#wf-graph-error").hidden &&
		document.querySelector("#wf-graph-error").textContent.includes("extract → load → notify → extract")`, "the cycle named")
	b.setRow(0, "after", "")
	b.setRow(1, "ref", "no-such-job")
	b.waitJS(15*time.Second, `document.querySelector("#wf-nodes .wf-node:nth-child(2)").classList.contains("has-error") &&
		document.querySelector("#wf-nodes .wf-node:nth-child(2) .wf-row-error").textContent.includes("no job demo/no-such-job") &&
		document.querySelector("#wf-graph-error").hidden`, "the unknown job named in its box")
	b.screenshot("we1-editor-error")
	b.setRow(1, "ref", "wf-load")
	b.waitJS(15*time.Second, `document.querySelector("#wf-pv-state").dataset.state === "valid" && !document.querySelector("#wf-nodes .wf-node.has-error")`, "valid again")
	b.screenshot("we2-editor")
	// Usable at 1440 and 900 px: every field and select shows its whole
	// value in the window, and the preview's text is readable.
	for _, w := range []int64{1440, 900} {
		b.do(chromedp.EmulateViewport(w, 900))
		require.Empty(t, b.evalString(editorProblemsJS), "the editor at %d px", w)
		b.screenshot(fmt.Sprintf("we2-editor-%d", w))
	}
	b.do(chromedp.EmulateViewport(1440, 900))

	b.do(chromedp.Click(chromedp.CSS("#wf-save")))
	b.waitJS(15*time.Second, `/^#\/workflows\/\d+$/.test(location.hash) && document.querySelectorAll("#dag-svg .dag-node").length === 3`, "saved: the workflow's page draws it")
	var saved struct {
		Workflows []struct {
			ID    int64  `json:"id"`
			Name  string `json:"name"`
			Nodes int    `json:"node_count"`
		} `json:"workflows"`
	}
	api.call(http.MethodGet, "/api/v1/workflows", nil, &saved)
	require.Len(t, saved.Workflows, 1)
	id := saved.Workflows[0].ID
	var wf struct {
		Version       int64  `json:"version"`
		FailurePolicy string `json:"failure_policy"`
		Nodes         []struct {
			Key     string          `json:"key"`
			Job     json.RawMessage `json:"job"`
			Handler string          `json:"handler"`
		} `json:"nodes"`
		Edges []struct{ From, To string } `json:"edges"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d", id), nil, &wf)
	require.Equal(t, int64(1), wf.Version)
	require.Len(t, wf.Nodes, 3)
	require.JSONEq(t, `{"name":"wf-extract"}`, string(wf.Nodes[0].Job))
	require.Equal(t, "demo.hello", wf.Nodes[2].Handler)
	require.Len(t, wf.Edges, 2)

	// Edit: continue on failure, and a node added as JSON.
	b.do(chromedp.Click(chromedp.CSS("#workflow-edit")))
	b.waitJS(15*time.Second, fmt.Sprintf(`location.hash === "#/workflows/%d/edit" && document.querySelectorAll("#wf-nodes .wf-node").length === 3 &&
		document.querySelector("#wf-name").readOnly && document.querySelector("#wf-pv-state").dataset.state === "valid"`, id), "the editor with the saved workflow")
	b.setValue("#wf-failure_policy", "continue")
	b.do(chromedp.Click(chromedp.CSS("#wf-json-toggle")))
	b.waitJS(5*time.Second, `!document.querySelector("#wf-json").hidden`, "the JSON view")
	var g struct {
		Nodes []map[string]any `json:"nodes"`
		Edges []map[string]any `json:"edges"`
	}
	require.NoError(t, json.Unmarshal([]byte(b.evalString(`document.querySelector("#wf-json").value`)), &g))
	require.Len(t, g.Nodes, 3)
	g.Nodes = append(g.Nodes, map[string]any{"key": "audit", "handler": "demo.hello", "start": "all_done", "slots": 2})
	g.Edges = append(g.Edges, map[string]any{"from": "extract", "to": "audit"})
	text, err := json.Marshal(g)
	require.NoError(t, err)
	b.setValue("#wf-json", string(text))
	b.do(chromedp.Click(chromedp.CSS("#wf-json-toggle")))
	b.waitJS(15*time.Second, `document.querySelectorAll("#wf-nodes .wf-node").length === 4 && document.querySelector("#wf-nodes .wf-node:nth-child(4) .wf-after").value === "extract" &&
		document.querySelector("#wf-nodes .wf-node:nth-child(4) .wf-start").value === "all_done" &&
		document.querySelectorAll("#wf-pv-graph .dag-node").length === 4`, "back to the boxes with the node added")
	b.do(chromedp.Click(chromedp.CSS("#wf-save")))
	b.waitJS(15*time.Second, fmt.Sprintf(`location.hash === "#/workflows/%d" && document.querySelectorAll("#dag-svg .dag-node").length === 4`, id), "saved as version 2")
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d", id), nil, &wf)
	require.Equal(t, int64(2), wf.Version)
	require.Equal(t, "continue", wf.FailurePolicy)
	require.Len(t, wf.Nodes, 4)
	require.Len(t, wf.Edges, 3)

	// Run it, and cancel the run while extract runs: the run and the node
	// are cancelled, and so is extract's job run.
	b.do(chromedp.Click(chromedp.CSS("#workflow-trigger")), chromedp.WaitVisible(chromedp.CSS("#workflow-trigger-dialog")))
	b.do(chromedp.Click(chromedp.CSS(`#workflow-trigger-dialog button[data-action="ok"]`)))
	b.waitJS(60*time.Second, `document.querySelector('#dag-svg .dag-node[data-node="extract"]').dataset.state === "running" &&
		!document.querySelector("#workflow-cancel").hidden`, "extract runs; the run can be cancelled")
	b.do(chromedp.Click(chromedp.CSS("#workflow-cancel")), chromedp.WaitVisible(chromedp.CSS("#workflow-cancel-dialog")))
	b.do(chromedp.Click(chromedp.CSS(`#workflow-cancel-dialog button[data-action="ok"]`)))
	b.waitJS(30*time.Second, `document.querySelector('#dag-svg .dag-node[data-node="extract"]').dataset.state === "cancelled" &&
		document.querySelector("#workflow-run-shown").textContent.includes("Cancelled") && document.querySelector("#workflow-cancel").hidden`, "the run and extract cancelled")
	b.screenshot("we3-cancelled")
	var runs struct {
		Runs []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"runs"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflows/%d/runs", id), nil, &runs)
	require.Len(t, runs.Runs, 1)
	require.Equal(t, "cancelled", runs.Runs[0].Status)
	var detail struct {
		Nodes []struct {
			Key      string `json:"node_key"`
			Status   string `json:"status"`
			JobRunID int64  `json:"job_run_id"`
		} `json:"nodes"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/workflow-runs/%d", runs.Runs[0].ID), nil, &detail)
	require.Len(t, detail.Nodes, 1, "only extract started")
	var jr struct{ Run struct{ Status string } }
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", detail.Nodes[0].JobRunID), nil, &jr)
	require.Equal(t, "cancelled", jr.Run.Status, "extract's job run cancelled with the workflow run")

	// Delete.
	b.do(chromedp.Click(chromedp.CSS("#workflow-delete")), chromedp.WaitVisible(chromedp.CSS("#workflow-delete-dialog")))
	b.do(chromedp.Click(chromedp.CSS(`#workflow-delete-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `location.hash === "#/workflows" && document.querySelector("#workflows-table tbody")?.children.length === 0`, "deleted")
	api.call(http.MethodGet, "/api/v1/workflows", nil, &saved)
	require.Empty(t, saved.Workflows)
}

// editorProblemsJS names the workflow editor's fields and selects whose
// value is cut off (wider than the box; a select's text measured in its
// font, with its padding and arrow) or that stick out of the window, and
// the preview's texts drawn smaller than 11 px; empty when there is none.
var editorProblemsJS = settled(`
	const vw = document.documentElement.clientWidth, bad = [];
	const ctx2d = document.createElement("canvas").getContext("2d");
	const name = el => (el.className || el.id || el.tagName) + " " + JSON.stringify(el.tagName === "SELECT" ? el.selectedOptions[0].text : el.value);
	for (const el of document.querySelectorAll("#workflow-form input:not([type=checkbox]), #workflow-form select")) {
		if (!el.checkVisibility()) continue;
		const r = el.getBoundingClientRect(), st = getComputedStyle(el);
		if (r.left < -0.5 || r.right > vw + 0.5) bad.push(name(el) + " out of the window");
		if (el.tagName === "SELECT") {
			ctx2d.font = st.font;
			const need = ctx2d.measureText(el.selectedOptions[0].text).width + parseFloat(st.paddingLeft) + parseFloat(st.paddingRight) + 20;
			if (need > el.clientWidth) bad.push(name(el) + " cut off (" + Math.round(need) + " px in " + el.clientWidth + ")");
		} else if (el.scrollWidth > el.clientWidth) {
			bad.push(name(el) + " cut off (" + el.scrollWidth + " px in " + el.clientWidth + ")");
		}
	}
	const texts = [...document.querySelectorAll("#wf-pv-graph svg text")];
	if (!texts.length) bad.push("no preview drawn");
	for (const t of texts) {
		const px = parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a;
		if (px < 11) { bad.push("preview text " + JSON.stringify(t.textContent) + " at " + px.toFixed(1) + " px"); break; }
	}
	return bad.join("; ");`)

// setRow sets field f (key, kind, ref, params, slots, start, after) of the
// i-th node of the workflow editor, firing input and change as a user
// would.
func (b *browser) setRow(i int, f, value string) {
	b.t.Helper()
	js, _ := json.Marshal(value)
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.querySelectorAll("#wf-nodes .wf-node")[%d].querySelector(".wf-%s");
		el.value = %s;
		el.dispatchEvent(new Event("input", {bubbles: true}));
		el.dispatchEvent(new Event("change", {bubbles: true}));
	})()`, i, f, js)))
}
