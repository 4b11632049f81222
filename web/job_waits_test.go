package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestJobWaitsInBrowser drives the waits of a plain job against a real
// standalone admin (SQLite, demo executor) in headless Chromium: the form's
// "Waits for" takes one run per line (a bad line and the server's refusal
// of a job waiting for itself are shown under the field, by line); the
// saved job's page lists its waits; a run of it triggered by hand is held
// pending, its page saying what it waits for, until the upstream job's run
// of the same business date succeeded, and then runs to success.
func TestJobWaitsInBrowser(t *testing.T) {
	sa, api, b := consoleSession(t)
	defer b.checkConsole()
	upstream := api.createJob(map[string]any{"app": "demo", "name": "upstream", "handler": "demo.hello", "cron": "0 3 * * *"})

	b.do(chromedp.Navigate(sa.base+"/#/jobs/new"), chromedp.WaitVisible(chromedp.CSS("#job-form")))
	b.waitJS(15*time.Second, `document.querySelector("#f-app").value === "" && document.querySelector("#f-wait_for") !== null &&
		document.querySelector('[data-field="wait_timeout"]').hidden`, "an empty form; the timeout only with waits")
	b.setField("app", "demo")
	b.setField("name", "report")
	b.setField("handler", "demo.hello")
	b.setField("cron", "0 4 * * *")
	b.setField("wait_for", "upstream\na/b/c")
	b.waitJS(15*time.Second, `document.querySelector("#err-wait_for").textContent.includes("Line 2") &&
		!document.querySelector('[data-field="wait_timeout"]').hidden`, "a bad line is named")
	b.setField("wait_for", "upstream\nreport")
	b.waitJS(15*time.Second, `document.querySelector("#err-wait_for").textContent.includes("line 2: a job cannot wait for its own run")`,
		"the server's refusal, under the field by line")
	b.setField("wait_for", "upstream")
	b.setField("wait_timeout", "2h")
	b.do(chromedp.SetValue(chromedp.CSS("#f-on_timeout"), "skip"))
	b.waitJS(15*time.Second, `document.querySelector("#pv-state").dataset.state === "valid" && document.querySelector("#err-wait_for").textContent === ""`, "valid")
	b.screenshot("w1-job-form-waits")
	b.do(chromedp.Click(chromedp.CSS("#job-save")))
	b.waitJS(15*time.Second, `/^#\/jobs\/\d+$/.test(location.hash) && document.querySelector("#job-waits") !== null`, "the saved job's page")
	require.Equal(t, "upstream times out after 2h, then the run is skipped", b.text("#job-waits"))
	report, err := strconv.ParseInt(regexp.MustCompile(`\d+$`).FindString(b.evalString("location.hash")), 10, 64)
	require.NoError(t, err)

	// A run by hand waits for the upstream's run of its date (today, UTC).
	run := api.trigger(report)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", sa.base, run)))
	b.waitJS(30*time.Second, `(() => { const e = document.querySelector("#run-error");
		return e !== null && !e.hidden && e.classList.contains("callout-warn") && e.textContent.startsWith("waiting for demo/upstream of business date "); })()`,
		"the held run says what it waits for")
	b.screenshot("w2-run-held")
	reason := b.text("#run-error")
	require.Contains(t, reason, time.Now().UTC().Format(time.DateOnly))
	require.Contains(t, reason, "(wait_for; times out at ")
	var got struct {
		Run struct {
			Status string `json:"status"`
		} `json:"run"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", run), nil, &got)
	require.Equal(t, "pending", got.Run.Status)

	up := api.trigger(upstream)
	api.waitRun(up, "succeeded")
	upDone := time.Now()
	api.waitRun(run, "succeeded")
	t.Logf("the waiting run succeeded %s after its upstream (HoldRecheck 5s)", time.Since(upDone).Round(10*time.Millisecond))
	b.waitJS(15*time.Second, `document.querySelector("#run-error").hidden`, "no reason left once it ran")
	require.Empty(t, b.evalString(`document.querySelector("#run-error").textContent`), "the banner is cleared")
}
