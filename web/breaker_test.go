package web_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestBreakerInBrowser (issue 37): on a standalone admin a job with a
// circuit breaker (threshold 1, cool-down 1h) fails once for real (the
// demo executor's demo.fail), so its breaker opens; a run triggered then
// waits for it. The jobs list says "Breaker open" under the job's state,
// the reason on hover; the job's page shows the breaker open with why and
// when it probes, and the operator's Close button closes it: the page
// says Closed, the held run starts and succeeds (it was triggered with
// params on which demo.fail succeeds), the breaker_open alarm is
// resolved. A viewer sees the open breaker but no Close button.
func TestBreakerInBrowser(t *testing.T) {
	t.Parallel()
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	job := api.createJob(map[string]any{"app": "demo", "name": "settle", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 1,
		"retry_max": 0, "breaker_threshold": 1, "breaker_cooldown": "1h"})
	first := api.trigger(job)
	api.waitRun(first, "failed")
	breaker := func() *apitypes.Breaker {
		var j apitypes.Job
		api.call(http.MethodGet, fmt.Sprintf("/api/v1/jobs/%d", job), nil, &j)
		return j.Breaker
	}
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		b := breaker()
		return b != nil && b.State == apitypes.BreakerOpen, nil
	}, "the breaker did not open")
	var trig struct {
		Run apitypes.Run `json:"run"`
	}
	api.call(http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", job), map[string]any{"params": "slots=99"}, &trig)
	held := trig.Run.ID
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		var out struct{ Run apitypes.Run }
		api.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", held), nil, &out)
		return out.Run.Status == "pending" && out.Run.ErrorCode == "run.waiting", nil
	}, "the run triggered while the breaker is open does not wait for it")
	require.Less(t, api.call(http.MethodPost, "/api/v1/users", map[string]any{"username": "viewer", "password": "viewer-password-1", "role": "viewer"}, nil), 300)

	b := newBrowser(t, testenv.Chromium(t), artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.EmulateViewport(1440, 900), chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)

	// The jobs list: "Breaker open" under the state, the reason on hover.
	b.do(chromedp.Navigate(sa.base + "/#/jobs"))
	pill := fmt.Sprintf(`document.querySelector('#jobs-table tr[data-key="%d"] .job-breaker-pill')`, job)
	b.waitJS(15*time.Second, pill+` !== null && `+pill+`.textContent === "Breaker open"`, "the breaker pill in the jobs list")
	tip := b.evalString(pill + `.title`)
	require.Contains(t, tip, "Circuit breaker open since")
	require.Contains(t, tip, "1 consecutive failures of its slots")
	require.Contains(t, tip, "demo.fail")
	b.screenshot("breaker-1-list")

	// The job's page: open, why, when it probes; Close.
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", sa.base, job)))
	b.waitJS(15*time.Second, `document.querySelector("#job-breaker-state") !== null && document.querySelector("#job-breaker-state").textContent === "Open"`, "the open breaker on the job's page")
	require.Contains(t, b.text("#job-breaker-why"), "consecutive failures of its slots")
	require.Contains(t, b.text("#job-breaker-probe"), "one probe at")
	require.Contains(t, b.text("#job-breaker"), "opens after 1 consecutive failures, cool-down 1h")
	b.screenshot("breaker-2-open")
	b.do(chromedp.Click(chromedp.CSS("#job-breaker-close")))
	b.waitJS(15*time.Second, `[...document.querySelectorAll(".toast")].some(t => t.textContent.includes("Circuit breaker closed")) &&
		document.querySelector("#job-breaker-state").textContent === "Closed" && document.querySelector("#job-breaker-close") === null`, "the breaker closed")
	b.screenshot("breaker-3-closed")
	api.waitRun(held, "succeeded")
	require.Nil(t, breaker(), "closed with no failure counted: no breaker row")

	// The job's alarms of the hour are one group, newest first: the
	// breaker_closed (info, by admin) after the breaker_open it resolved.
	var alarms struct {
		Groups []apitypes.AlarmGroupView `json:"groups"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/alarms?kind=breaker_open&job_id=%d", job), nil, &alarms)
	require.Len(t, alarms.Groups, 1)
	var members apitypes.AlarmGroupAlarms
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/alarm-groups/%d/alarms", alarms.Groups[0].ID), nil, &members)
	kinds := map[string]apitypes.AlarmView{}
	for _, a := range members.Alarms {
		if _, seen := kinds[a.Kind]; !seen {
			kinds[a.Kind] = a
		}
	}
	opened, closed := kinds["breaker_open"], kinds["breaker_closed"]
	require.NotNil(t, opened.ResolvedAt, "the breaker_open alarm is resolved")
	require.Equal(t, "admin", opened.ResolvedBy)
	require.Equal(t, "info", closed.Severity, "a breaker_closed alarm: %+v", members.Alarms)
	require.Contains(t, closed.Message, "circuit breaker closed: closed by admin")

	// Open again (the next failure): a viewer sees it, without Close.
	api.waitRun(api.trigger(job), "failed")
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		b := breaker()
		return b != nil && b.State == apitypes.BreakerOpen, nil
	}, "the breaker did not open again")
	b.do(chromedp.Evaluate[chromedp.Void](`history.replaceState(null, "", "#/dashboard")`), chromedp.Click(chromedp.CSS("#logout")))
	b.login("viewer", "viewer-password-1")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", sa.base, job)))
	b.waitJS(15*time.Second, `document.querySelector("#job-breaker-state") !== null && document.querySelector("#job-breaker-state").textContent === "Open"`, "the viewer sees it open")
	require.True(t, b.evalBool(`document.querySelector("#job-breaker-close") === null`), "no Close button for a viewer")
}
