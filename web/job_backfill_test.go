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

// TestJobBackfillInBrowser: Backfill on a job's page refuses a backwards
// range next to To, previews four dates newest first with each date's run
// instant (the job's 06:00 firing) and creates nothing; Create makes the
// four runs, trigger kind Backfill, which the demo executor runs to
// success, two at a time.
func TestJobBackfillInBrowser(t *testing.T) {
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	id := api.createJob(map[string]any{"app": "demo", "name": "bf-daily", "handler": "demo.hello", "cron": "0 6 * * *", "slots": 1})

	b := newBrowser(t, testenv.Chromium(t), artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", sa.base, id)))
	b.do(chromedp.WaitVisible(chromedp.CSS("#job-backfill")), chromedp.Click(chromedp.CSS("#job-backfill")), chromedp.WaitVisible(chromedp.CSS("#job-backfill-dialog")))
	b.setValue("#bf-from", "2026-11-04")
	b.setValue("#bf-to", "2026-11-01")
	b.do(chromedp.Click(chromedp.CSS("#bf-preview")))
	b.waitJS(15*time.Second, `document.querySelector('#job-backfill-dialog [data-error-for="to"]').textContent.includes("is before")`, "a backwards range refused next to To")
	b.setValue("#bf-from", "2026-11-01")
	b.setValue("#bf-to", "2026-11-04")
	b.setValue("#bf-parallel", "2")
	b.do(chromedp.Click(chromedp.CSS("#bf-newest")))
	b.do(chromedp.Click(chromedp.CSS("#bf-preview")))
	b.waitJS(15*time.Second, `document.querySelectorAll('#bf-plan tr[data-action="create"]').length === 4 &&
		document.querySelector("#bf-summary").textContent.includes("4 run(s) to create")`, "the dry run lists four dates to create")
	require.Equal(t, "2026-11-04", b.evalString(`document.querySelector("#bf-plan tr").dataset.date`), "newest first")
	require.Contains(t, b.text("#bf-plan tr"), "06:00", "the date's run instant")
	b.screenshot("j1-job-backfill-dry-run")
	require.Zero(t, countJobRuns(api, id), "a dry run creates nothing")

	b.do(chromedp.Click(chromedp.CSS(`#job-backfill-dialog button[data-action="ok"]`)))
	b.waitJS(60*time.Second, `document.querySelector("#job-backfill-dialog") === null &&
		[...document.querySelectorAll("#job-runs tbody tr")].filter(tr => tr.textContent.includes("Backfill") && tr.textContent.includes("Succeeded")).length === 4`,
		"four backfill runs, succeeded")
	b.screenshot("j2-job-backfill-runs")
	require.Equal(t, 4, countJobRuns(api, id))
}

// countJobRuns is the number of runs of job id.
func countJobRuns(api *apiClient, id int64) int {
	var out struct {
		Runs []struct{} `json:"runs"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/runs?job_id=%d", id), nil, &out)
	return len(out.Runs)
}
