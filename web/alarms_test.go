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

// TestAlarmGroupsInBrowser is the report that one failed run filled the
// Alarms page with a row per slot, each to resolve by hand: on a real
// standalone admin, a run of 64 slots that all fail is one row with the
// count 65 (64 slot_dead, one run_failed) whose count opens its 65 alarms;
// "Open only" shows no info alarm (the leader change resolved itself); a
// checked group is acknowledged with one click; "select all matching the
// filter" and Resolve resolve every open alarm in one request.
func TestAlarmGroupsInBrowser(t *testing.T) {
	t.Parallel() // beside TestConsoleInBrowser's wait for its first folded minute
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	wide := api.createJob(map[string]any{"app": "demo", "name": "wide", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 64})
	narrow := api.createJob(map[string]any{"app": "demo", "name": "narrow", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 2})
	api.waitRun(api.trigger(wide), "failed")
	api.waitRun(api.trigger(narrow), "failed")

	b := newBrowser(t, testenv.Chromium(t), artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)
	b.menu("alarms")
	row := func(job int64) string {
		return fmt.Sprintf(`document.querySelector('#alarms-table tr:has(.alarm-job[title="id %d"])')`, job)
	}
	b.waitJS(30*time.Second, fmt.Sprintf(`(() => { const tr = %s; return tr !== null && tr.querySelector(".alarm-count").textContent === "65"; })()`, row(wide)),
		"the wide run is one row counting 65 alarms")
	require.Equal(t, 1, b.evalInt(fmt.Sprintf(`document.querySelectorAll('#alarms-table .alarm-job[title="id %d"]').length`, wide)), "one row, not 65")
	kinds := b.evalString(row(wide) + `.textContent`)
	require.Contains(t, kinds, "slot_dead ×64")
	require.Contains(t, kinds, "run_failed ×1")
	b.screenshot("a1-alarm-groups")

	// The count opens the group's alarms.
	b.do(chromedp.Evaluate[chromedp.Void](row(wide) + `.querySelector(".alarm-count button").click()`))
	b.waitJS(15*time.Second, `document.querySelectorAll("#alarm-members tbody tr").length === 65 &&
		document.querySelector("#alarm-group-count").textContent.includes("65 of 65")`, "the drill-down lists the 65 alarms")
	b.screenshot("a2-alarm-group-members")
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#alarm-group-close").click()`))
	b.waitJS(5*time.Second, `document.querySelector("#alarm-group-detail").hidden`, "drill-down closed")

	// Open only: no info alarm is open on a fresh admin.
	b.do(chromedp.Click(chromedp.CSS("#alarm-open")))
	b.waitJS(15*time.Second, `document.querySelectorAll("#alarms-table tbody tr").length >= 2 &&
		![...document.querySelectorAll("#alarms-table tbody tr")].some(tr => tr.textContent.includes("leader_change"))`, "no open leader_change")

	// A checked group, acknowledged in one click.
	b.do(chromedp.Evaluate[chromedp.Void](row(narrow) + `.querySelector(".alarm-check").click()`))
	b.waitJS(5*time.Second, `document.querySelector("#alarm-selection").textContent.includes("1 group(s) selected (3 alarms)")`, "selection counted")
	b.do(chromedp.Click(chromedp.CSS("#alarm-bulk-ack")))
	b.waitJS(15*time.Second, row(narrow)+` !== null && `+row(narrow)+`.querySelector(".alarm-state").textContent.includes("Acknowledged")`, "the group acknowledged")

	// Every open alarm, in one request.
	var before struct {
		MatchingAlarms int `json:"matching_alarms"`
	}
	api.call(http.MethodGet, "/api/v1/alarms?open=1", nil, &before)
	require.GreaterOrEqual(t, before.MatchingAlarms, 68)
	b.do(chromedp.Click(chromedp.CSS("#alarm-select-matching")))
	b.waitJS(5*time.Second, fmt.Sprintf(`document.querySelector("#alarm-selection").textContent.includes("All %d alarms matching the filter are selected")`, before.MatchingAlarms),
		"all matching selected")
	b.screenshot("a3-alarms-select-matching")
	b.do(chromedp.Click(chromedp.CSS("#alarm-bulk-resolve")))
	b.waitJS(15*time.Second, fmt.Sprintf(`[...document.querySelectorAll(".toast")].some(t => t.textContent.includes("%d alarm(s) resolved"))`, before.MatchingAlarms),
		"one request resolved them all")
	b.waitJS(15*time.Second, `document.querySelector("#alarms-table").hidden`, "Open only: nothing left")
	var after struct {
		Groups         []struct{} `json:"groups"`
		MatchingAlarms int        `json:"matching_alarms"`
	}
	api.call(http.MethodGet, "/api/v1/alarms?open=1", nil, &after)
	require.Empty(t, after.Groups)
	require.Zero(t, after.MatchingAlarms)
	var audit struct {
		Entries []struct {
			Action string `json:"action"`
		} `json:"entries"`
	}
	api.call(http.MethodGet, "/api/v1/audit?limit=50", nil, &audit)
	n := 0
	for _, e := range audit.Entries {
		if e.Action == "alarm.bulk_resolve" {
			n++
		}
	}
	require.Equal(t, 1, n, "one request, audited once")
}
