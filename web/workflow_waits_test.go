package web_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestWorkflowWaitInBrowser: a workflow's page shows its calendar and rule;
// a node that waits for another job's run of its business date is drawn
// waiting, with the reason on the node and in
// its panel (and its waits), in English and in Chinese; once the job's run
// of the day succeeds, the node runs and the workflow run succeeds.
func TestWorkflowWaitInBrowser(t *testing.T) {
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	api.createJob(map[string]any{"app": "demo", "name": "wf-prepare", "handler": "demo.hello", "cron": "0 0 1 1 *"})
	api.createJob(map[string]any{"app": "demo", "name": "wf-settle", "handler": "demo.hello", "cron": "0 0 1 1 *"})
	upstream := api.createJob(map[string]any{"app": "demo", "name": "wf-upstream", "handler": "demo.hello", "cron": "0 0 1 1 *"})
	api.call(http.MethodPost, "/api/v1/calendars", map[string]any{"app": "demo", "name": "uk", "week": "MON-FRI"}, nil)
	var wf struct {
		ID int64 `json:"id"`
	}
	api.call(http.MethodPost, "/api/v1/workflows", map[string]any{
		"app": "demo", "name": "waits", "cron": "0 3 1 1 *", "calendar": "uk", "calendar_rule": "shift",
		"nodes": []map[string]any{
			{"key": "prepare", "job": map[string]any{"name": "wf-prepare"}},
			{"key": "settle", "job": map[string]any{"name": "wf-settle"}, "wait_for": []map[string]any{{"job": map[string]any{"name": "wf-upstream"}}},
				"wait_timeout": "1h", "on_timeout": "skip"},
		},
		"edges": []map[string]any{{"from": "prepare", "to": "settle"}},
	}, &wf)
	// The business date of a manual run of wf-upstream is the day it runs
	// (UTC): the workflow's run is of today (its default).
	api.call(http.MethodPost, fmt.Sprintf("/api/v1/workflows/%d/trigger", wf.ID), map[string]any{}, nil)
	today := time.Now().UTC().Format(time.DateOnly)

	b := newBrowser(t, testenv.Chromium(t), artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/workflows/%d", sa.base, wf.ID)))
	b.waitJS(30*time.Second, `document.querySelector("#workflow-calendar") !== null &&
		document.querySelector("#workflow-calendar").textContent === "uk · Move to a working day · The next working day"`, "the calendar and its rule shown")
	settle := `document.querySelector('#dag-svg .dag-node[data-node="settle"]')`
	b.waitJS(60*time.Second, settle+` !== null && `+settle+`.dataset.state === "waiting" &&
		`+settle+`.querySelector(".dag-note").textContent.startsWith("waiting for demo/wf-up")`, "settle drawn waiting, its reason on the node")
	require.Contains(t, b.text(`#dag-svg .dag-node[data-node="settle"] title`), "waiting for demo/wf-upstream of "+today)
	b.do(chromedp.Click(chromedp.CSS(`#dag-svg .dag-node[data-node="settle"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#workflow-node-reason") !== null`, "the waiting reason in the node's panel")
	panel := b.text("#workflow-node")
	require.Contains(t, panel, "Waiting for")
	require.Contains(t, panel, "waiting for demo/wf-upstream of "+today+" (times out at ")
	require.Contains(t, panel, "Also waits for")
	require.Contains(t, panel, "demo/wf-upstream of the same business date; after 1h: the node is skipped")
	b.screenshot("w6-workflow-waiting")

	b.do(chromedp.SetValue(chromedp.CSS("#lang-select"), "zh-CN"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#lang-select").dispatchEvent(new Event("change"))`))
	b.waitJS(15*time.Second, `document.documentElement.lang === "zh-CN" && `+settle+` !== null &&
		`+settle+`.querySelector("title").textContent.includes("等待中 · 等待 demo/wf-upstream 在 `+today+` 的运行成功")`, "the waiting node in Chinese")
	b.do(chromedp.Click(chromedp.CSS(`#dag-svg .dag-node[data-node="settle"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#workflow-node").textContent.includes("正在等待") &&
		document.querySelector("#workflow-node").textContent.includes("还需等待")`, "the node's panel in Chinese")
	b.screenshot("w7-workflow-waiting-zh")

	api.trigger(upstream)
	b.waitJS(60*time.Second, `[...document.querySelectorAll("#dag-svg .dag-node")].every(g => g.dataset.state === "succeeded")`,
		"the upstream run succeeded: settle ran")
}
