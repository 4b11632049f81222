package web_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestJobListSearchInBrowser: the jobs page lists a page of 50 jobs from
// the server and says how many match; a search by name (a prefix, then a
// substring), the app and state filters and "More jobs" all ask the
// server, so a job beyond the first page is found by its name. The runs
// page filters by app on the server and says how many runs match.
func TestJobListSearchInBrowser(t *testing.T) {
	sa, api, b := consoleSession(t)
	defer b.checkConsole()
	// 120 jobs over two apps: batch-000 … batch-119, even ones in demo,
	// odd ones in shop; five of shop's paused.
	for i := range 120 {
		app := []string{"demo", "shop"}[i%2]
		id := api.createJob(map[string]any{"app": app, "name": fmt.Sprintf("batch-%03d", i), "handler": "demo.hello", "cron": "0 3 * * *"})
		require.Positive(t, id)
		if i%2 == 1 && i < 10 {
			require.Equal(t, http.StatusOK, api.call(http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/pause", id), nil, nil))
		}
	}
	var all struct {
		Count      int64 `json:"count"`
		CountExact bool  `json:"count_exact"`
	}
	api.call(http.MethodGet, "/api/v1/jobs?limit=1", nil, &all)
	require.True(t, all.CountExact)
	require.Greater(t, all.Count, int64(120), "the demo jobs and the 120")

	rows := `document.querySelectorAll("#jobs-table tbody tr")`
	names := `[...document.querySelectorAll("#jobs-table tbody tr .job-name")].map(e => e.textContent)`
	count := `document.querySelector("#job-count").textContent`
	b.do(chromedp.Navigate(sa.base + "/#/jobs"))
	b.waitJS(15*time.Second, fmt.Sprintf(`%s.length === 50 && %s === "50 of %d jobs" && !document.querySelector("#jobs-more").hidden`, rows, count, all.Count),
		"the first page of 50 and the count of every job")
	require.False(t, b.evalBool(fmt.Sprintf(`%s.includes("batch-119")`, names)), "batch-119 is beyond the first page")
	b.screenshot("jl1-first-page")

	// A prefix search on the server finds the jobs beyond the first page.
	b.setValue("#job-search", "batch-11")
	b.waitJS(15*time.Second, fmt.Sprintf(`%s.length === 10 && %s.includes("batch-119") && %s === "10 jobs" && document.querySelector("#jobs-more").hidden`, rows, names, count),
		"the name prefix batch-11: ten jobs, batch-119 among them")
	// A substring anywhere in the name: batch-011 and batch-110 … batch-119
	// (not a prefix of any of them).
	b.do(chromedp.SetValue(chromedp.CSS("#job-match"), "contains"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#job-match").dispatchEvent(new Event("change"))`))
	b.setValue("#job-search", "11")
	b.waitJS(15*time.Second, fmt.Sprintf(`%s.length === 11 && %s.includes("batch-011") && %s === "11 jobs"`, rows, names, count),
		"the substring 11: eleven jobs")
	b.screenshot("jl2-substring")
	b.setValue("#job-search", "")
	// The cleared search restarts the list after its debounce: wait for it,
	// or it restarts the list under the filters below (and drops a page
	// loaded meanwhile, as it should when the search changed).
	b.waitJS(15*time.Second, fmt.Sprintf(`%s.length === 50 && %s === "50 of %d jobs"`, rows, count, all.Count), "the search cleared: every job again")

	// The app filter, then the app and a state.
	b.do(chromedp.SetValue(chromedp.CSS("#job-app"), "shop"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#job-app").dispatchEvent(new Event("change"))`))
	b.waitJS(15*time.Second, fmt.Sprintf(`%s.length === 50 && %s === "50 of 60 jobs" && %s.every(n => /^batch-\d\d[13579]$/.test(n))`, rows, count, names),
		"the first 50 of shop's 60 jobs")
	// Page forward: the other ten, and no more.
	b.do(chromedp.Click(chromedp.CSS("#jobs-more")))
	b.waitJS(15*time.Second, fmt.Sprintf(`%s.length === 60 && %s === "60 jobs" && document.querySelector("#jobs-more").hidden && %s.includes("batch-119")`, rows, count, names),
		"More jobs: all 60 of shop")
	b.do(chromedp.Click(chromedp.CSS(`#job-state button[data-state="paused"]`)))
	b.waitJS(15*time.Second, fmt.Sprintf(`%s.length === 5 && %s === "5 jobs"`, rows, count), "shop's five paused jobs")
	b.screenshot("jl3-app-state")

	// Runs: filtered by app on the server, with their count.
	run := api.trigger(api.createJob(map[string]any{"app": "shop", "name": "shop-now", "handler": "demo.hello", "cron": "0 3 * * *"}))
	b.do(chromedp.Navigate(sa.base + "/#/runs?app=shop"))
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('#runs-table tr[data-key="%d"]') !== null &&
		[...document.querySelectorAll("#runs-table tbody tr .app-tag")].every(e => e.textContent === "shop") &&
		/^\d+ shown of \d+ runs$/.test(document.querySelector("#runs-count").textContent) && document.querySelector("#runs-app").value === "shop"`, run),
		"the runs of shop, counted")
}
