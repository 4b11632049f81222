package web_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestScreenshots saves a full-page screenshot of every console page at
// 1440 and 1024 px, in the light and the dark theme, for a person to review
// (`make screenshots` sets SHARDJOB_SCREENSHOTS to ./screenshots). It runs a
// standalone admin with the demo executor and a few runs, so the pages have
// content. Without SHARDJOB_SCREENSHOTS it is skipped: the console test
// checks the pages; this only draws them.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("SHARDJOB_SCREENSHOTS")
	if dir == "" {
		t.Skip("SHARDJOB_SCREENSHOTS not set: make screenshots sets it")
	}
	chromium := testenv.Chromium(t)
	sa := startStandalone(t)
	base, password := sa.base, sa.password
	api := newAPIClient(t, base, "admin", password)
	flaky := api.createJob(map[string]any{"app": "demo", "name": "flaky", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 8, "params": "slots=1,3"})
	failed := api.trigger(flaky)
	api.waitRun(failed, "partially_failed")
	sleepy := api.createJob(map[string]any{"app": "demo", "name": "nightly", "handler": "demo.sleep", "cron": "30 2 * * *", "time_zone": "Europe/Berlin", "slots": 32, "params": "ms=200"})
	done := api.trigger(sleepy)
	api.waitRun(done, "succeeded")

	require.NoError(t, os.MkdirAll(dir, 0o755))
	b := newBrowser(t, chromium, dir)
	b.do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", password)
	pages := []string{"dashboard", "jobs", fmt.Sprintf("jobs/%d", sleepy), "jobs/new", fmt.Sprintf("jobs/%d/edit", sleepy), "runs",
		fmt.Sprintf("runs/%d", failed), fmt.Sprintf("runs/%d", done), "failures", "dead", "executors", "alarms", "calendars", "cluster", "audit", "users", "tokens"}
	n := 0
	for _, theme := range []string{"light", "dark"} {
		b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("sj_theme", %q)`, theme)))
		for _, width := range []int64{1440, 1024} {
			b.do(chromedp.EmulateViewport(width, 900))
			for i, p := range pages {
				b.do(chromedp.Navigate(base+"/#/"+p), chromedp.Reload())
				b.waitJS(15*time.Second, fmt.Sprintf(`document.documentElement.dataset.theme === %q && document.querySelector(".page") !== null &&
					!document.querySelector(".page").classList.contains("is-loading")`, theme), "page "+p+" drawn")
				b.screenshot(fmt.Sprintf("%s-%d-%02d-%s", theme, width, i, strings.ReplaceAll(p, "/", "-")))
				n++
			}
		}
	}
	t.Logf("%d screenshots in %s", n, dir)
	require.Equal(t, http.StatusOK, api.call(http.MethodGet, "/api/v1/me", nil, nil))
}
