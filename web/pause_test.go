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

// TestPauseUntilAndJitterInBrowser drives a real standalone admin in
// headless Chromium. The Pause button opens a dialog: "until a date and
// time" without a time, and with a past time (the API's 400 on until), both
// stay in the dialog with the error under the field; a future time in the
// viewer's zone pauses the job until that instant (the API answers it as
// the browser reads the time) and the job page says when it resumes; the
// plain choice pauses without an end. A job with a jitter window shows it
// on its page, its form's preview lists each firing's start, and a run of
// it shows its start_after with the offset.
func TestPauseUntilAndJitterInBrowser(t *testing.T) {
	chromium := testenv.Chromium(t)
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	jobID := api.createJob(map[string]any{"app": "demo", "name": "pausable", "handler": "demo.hello", "cron": "0 3 * * *", "jitter_window": "10m"})

	b := newBrowser(t, chromium, artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", sa.base, jobID)))
	b.waitJS(15*time.Second, `(() => { const j = document.querySelector("#job-jitter-window"); return j !== null && j.textContent === "10m"; })()`, "the job page shows the jitter window")

	openPause := func() {
		b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="pause"]`)), chromedp.WaitVisible(chromedp.CSS("#pause-dialog")))
	}
	submit := func() { b.do(chromedp.Click(chromedp.CSS(`#pause-dialog button[data-action="ok"]`))) }
	openPause()
	b.do(chromedp.Click(chromedp.CSS("#pause-timed")))
	b.waitJS(5*time.Second, `!document.querySelector("#pause-until").disabled`, "the time field is enabled with its choice")
	submit()
	b.waitJS(5*time.Second, `document.querySelector("#pause-until-error").textContent === "Choose when the job resumes." && document.querySelector("#pause-dialog").open`, "no time: asked for one")
	b.setValue("#pause-until", "2020-01-01T00:00")
	submit()
	b.waitJS(15*time.Second, `document.querySelector("#pause-until-error").textContent !== "Choose when the job resumes." &&
		document.querySelector("#pause-until-error").textContent !== "" && document.querySelector("#pause-dialog").open`, "a past time: the API's error under the field")
	t.Logf("a past time: %q", b.evalString(`document.querySelector("#pause-until-error").textContent`))
	var state struct {
		Paused bool `json:"paused"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/jobs/%d", jobID), nil, &state)
	require.False(t, state.Paused, "a refused pause changes nothing")

	b.setValue("#pause-until", "2030-06-01T12:30")
	b.screenshot("p1-pause-until-dialog")
	submit()
	b.waitJS(15*time.Second, `(() => { const p = document.querySelector("#job-paused-until");
		return p !== null && p.textContent.includes("Resumes by itself at") && p.textContent.includes("2030-06-01 12:30:00") &&
			document.querySelector('#job-actions [data-act="resume"]') !== null; })()`, "the job page says when the pause ends, in the viewer's zone")
	b.screenshot("p2-paused-until")
	want := b.evalString(`new Date(2030, 5, 1, 12, 30).toISOString()`)
	var job struct {
		Paused      bool       `json:"paused"`
		PausedUntil *time.Time `json:"paused_until"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/jobs/%d", jobID), nil, &job)
	require.True(t, job.Paused)
	require.NotNil(t, job.PausedUntil)
	wantT, err := time.Parse(time.RFC3339, want)
	require.NoError(t, err)
	require.True(t, wantT.Equal(*job.PausedUntil), "paused until %s, the browser's 2030-06-01 12:30 is %s", job.PausedUntil, want)

	// Resume, then pause without an end.
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="resume"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#job-actions [data-act="pause"]') !== null && document.querySelector("#job-paused-until") === null`, "resumed")
	openPause()
	submit()
	b.waitJS(15*time.Second, `document.querySelector('#job-actions [data-act="resume"]') !== null && document.querySelector("#job-paused-until") === null`, "paused without an end")
	job.PausedUntil = nil
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/jobs/%d", jobID), nil, &job)
	require.True(t, job.Paused)
	require.Nil(t, job.PausedUntil)

	// The form's preview lists when each firing starts.
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d/edit", sa.base, jobID)))
	b.waitJS(15*time.Second, `document.querySelector("#pv-state") !== null && document.querySelector("#pv-state").dataset.state === "valid" &&
		document.querySelectorAll("#preview-table .pv-start-after").length === 10 &&
		[...document.querySelectorAll("#preview-table .pv-start-after")].every(e => e.textContent.startsWith("starts after "))`, "the preview lists each firing's start")
	b.screenshot("p3-jitter-preview")

	// A run of a jittered job (firing every second, a 900ms window; no
	// executor offers its handler, so it waits): its page shows start_after.
	spread := api.createJob(map[string]any{"app": "demo", "name": "spread", "handler": "nobody.offers.it", "cron": "* * * * * *", "jitter_window": "900ms"})
	var runs struct {
		Runs []struct {
			ID         int64      `json:"id"`
			StartAfter *time.Time `json:"start_after"`
		} `json:"runs"`
	}
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		api.call(http.MethodGet, fmt.Sprintf("/api/v1/runs?job_id=%d&limit=5", spread), nil, &runs)
		return len(runs.Runs) > 0 && runs.Runs[0].StartAfter != nil, nil
	}, "a run of the jittered job")
	api.call(http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/disable", spread), nil, nil)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", sa.base, runs.Runs[0].ID)))
	b.waitJS(15*time.Second, `(() => { const s = document.querySelector("#run-start-after"); return s !== null && s.textContent.includes("jitter +"); })()`, "the run page shows start_after")
	b.screenshot("p4-run-start-after")
}
