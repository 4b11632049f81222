package web_test

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestZonesInBrowser drives the job form of a job with several zones
// against a real standalone admin: Tokyo as the job's zone, Seoul (the same
// instants: one firing, tagged Tokyo, "also Seoul") and London added as
// chips; the preview gives each firing its zone; a schedule too dense for
// several zones is refused next to the zones; the saved job lists its
// zones; its firing a few seconds later in London is a run whose page and
// list row say "Europe/London".
func TestZonesInBrowser(t *testing.T) {
	t.Parallel() // beside TestConsoleInBrowser's wait for its first folded minute
	sa, api, b := consoleSession(t)
	defer b.checkConsole()
	base := sa.base

	// A time 40 s from now on London's clock: the job's next firing is
	// London's (Tokyo's and Seoul's same wall time is hours away).
	london, err := time.LoadLocation("Europe/London")
	require.NoError(t, err)
	at := time.Now().Add(40 * time.Second).In(london)
	cron := fmt.Sprintf("%d %d %d * * *", at.Second(), at.Minute(), at.Hour())

	b.do(chromedp.Navigate(base+"/#/jobs/new"), chromedp.WaitVisible(chromedp.CSS("#job-form")))
	b.waitJS(15*time.Second, `document.querySelector("#f-app").value === "" && document.querySelector("#f-time_zones") !== null`, "an empty new job form")
	b.setField("app", "demo")
	b.setField("name", "three-zones")
	b.setField("handler", "demo.hello")
	b.setField("time_zone", "Asia/Tokyo")
	b.setField("cron", cron)
	for _, z := range []string{"Asia/Seoul", "Europe/London"} {
		b.setValue("#f-time_zones", z)
		b.do(chromedp.Click(chromedp.CSS("#zone-add")))
	}
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#zone-chips .zone-chip")].map(c => c.dataset.zone).join() === "Asia/Seoul,Europe/London" &&
		document.querySelector("#pv-state").dataset.state === "valid" &&
		document.querySelectorAll("#preview-table .pv-zone").length >= 4`, "two zone chips and a preview with zones")
	zones := b.evalString(`[...document.querySelectorAll("#preview-table .pv-zone")].slice(0, 2).map(z => z.textContent).join("|")`)
	require.Equal(t, "Europe/London|Asia/Tokyo · also Asia/Seoul", zones, "the first firing is London's, then Tokyo's (Seoul the same instant)")
	b.screenshot("z1-job-form-zones")

	// Twice an hour is too dense for several zones: the error is next to them.
	b.setField("cron", "*/30 * * * *")
	b.waitJS(15*time.Second, `document.querySelector("#err-time_zones").textContent.includes("at most 24 times a day") &&
		document.querySelector('[data-field="time_zones"]').classList.contains("has-error")`, "a dense schedule refused next to the zones")
	// A chip removed and added again.
	b.do(chromedp.Click(chromedp.CSS(`#zone-chips .zone-chip[data-zone="Asia/Seoul"]`)))
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#zone-chips .zone-chip")].map(c => c.dataset.zone).join() === "Europe/London"`, "Seoul removed")
	b.setValue("#f-time_zones", "Asia/Seoul")
	b.do(chromedp.Click(chromedp.CSS("#zone-add")))
	b.setField("cron", cron)
	b.waitJS(15*time.Second, `document.querySelector("#pv-state").dataset.state === "valid" && document.querySelector("#err-time_zones").textContent === ""`, "valid again")

	b.do(chromedp.Click(chromedp.CSS("#job-save")))
	b.waitJS(15*time.Second, `/^#\/jobs\/\d+$/.test(location.hash) && document.querySelector("#job-zones") !== null`, "the saved job's page")
	require.Equal(t, "Asia/Tokyo · Europe/London · Asia/Seoul", b.text("#job-zones"))
	id, err := strconv.ParseInt(regexp.MustCompile(`\d+$`).FindString(b.evalString("location.hash")), 10, 64)
	require.NoError(t, err)

	// The London firing: a cron run whose zone is Europe/London.
	var run int64
	testenv.WaitFor(t, 90*time.Second, func() (bool, error) {
		var runs struct {
			Runs []struct {
				ID       int64  `json:"id"`
				Trigger  string `json:"trigger"`
				TimeZone string `json:"time_zone"`
			} `json:"runs"`
		}
		api.call("GET", fmt.Sprintf("/api/v1/runs?job_id=%d&limit=5", id), nil, &runs)
		for _, r := range runs.Runs {
			if r.Trigger == "cron" {
				require.Equal(t, "Europe/London", r.TimeZone)
				run = r.ID
			}
		}
		return run != 0, nil
	}, "the London firing's run")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", base, run)))
	b.waitJS(15*time.Second, `document.querySelector("#run-zone") !== null && document.querySelector("#run-zone").textContent.includes("Europe/London")`, "the run page says its zone")
	require.Contains(t, b.text("#run-zone"), at.Format("2006-01-02 15:04:05"), "the scheduled time on London's clock")
	b.screenshot("z2-run-zone")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs?job_id=%d", base, id)))
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#runs-table .run-zone")].some(z => z.textContent.includes("Europe/London"))`, "the runs list says the zone")
}
