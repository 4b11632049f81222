package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestDeletingAJobInBrowser drives a real standalone admin in headless
// Chromium. A job with a running run: its page says "Scheduled", the API's
// state; its delete dialog says what happens to the history; deleting it
// is refused in the dialog with the API's reason while the run runs; once
// the run is cancelled it is deleted, and its run page still names the job
// and says it was deleted (no "Open job" that leads nowhere), the job's
// page says it was deleted and leads to its runs, and the runs list names
// it, marked deleted. A disabled job's page lists no firings and says why;
// its trigger dialog says it is disabled and what triggering does. A job
// whose handler no executor has shows the warning on its page.
func TestDeletingAJobInBrowser(t *testing.T) {
	sa, api, b := consoleSession(t)
	defer b.checkConsole()
	doomed := api.createJob(map[string]any{"app": "demo", "name": "doomed", "handler": "demo.sleep", "cron": "0 3 * * *", "params": "ms=600000"})
	run := api.trigger(doomed)
	api.waitRun(run, "running")

	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", sa.base, doomed)))
	b.waitJS(15*time.Second, `(() => { const p = document.querySelector("#job-state-pill"); return p !== null && p.textContent === "Scheduled"; })()`, "the job's state")
	require.Equal(t, "scheduled", api.job(doomed).State, "the console says the API's word")
	require.True(t, b.evalBool(`document.querySelector("#job-warnings").hidden`), "no warning: the demo executor has demo.sleep")

	openDelete := func() {
		b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="delete"]`)), chromedp.WaitVisible(chromedp.CSS("#delete-dialog")))
	}
	openDelete()
	require.Contains(t, b.text("#delete-history"), "Its run history stays: the Runs page still lists its runs under its name, marked as deleted.")
	b.do(chromedp.Click(chromedp.CSS(`#delete-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `(() => { const e = document.querySelector("#delete-dialog .modal-error"); return e !== null && !e.hidden &&
		e.textContent === "job demo/doomed has 1 running run(s): cancel them or let them finish, then delete the job" && document.querySelector("#delete-dialog").open; })()`,
		"the refusal in the dialog")
	b.screenshot("d1-delete-refused")
	b.do(chromedp.Click(chromedp.CSS(`#delete-dialog button[data-action="cancel"]`)))
	require.Equal(t, "doomed", api.job(doomed).Name, "the job is still there")

	api.call(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", run), map[string]string{"reason": "to delete its job"}, nil)
	api.waitRun(run, "cancelled")
	openDelete()
	b.do(chromedp.Click(chromedp.CSS(`#delete-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `location.hash === "#/jobs"`, "deleted: back to the jobs")

	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", sa.base, run)))
	b.waitJS(15*time.Second, `(() => { const o = document.querySelector("#run-open-job"); return o !== null && o.disabled && o.textContent === "Job deleted"; })()`,
		"the run page says the job was deleted")
	require.Equal(t, "demo/doomed deleted", b.text("#run-job"), "the run keeps its job's name")
	b.screenshot("d2-run-of-deleted-job")

	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", sa.base, doomed)))
	b.waitJS(15*time.Second, `document.querySelector("#job-deleted") !== null`, "the deleted job's page")
	require.Contains(t, b.text("#job-deleted"), fmt.Sprintf("Job #%d was deleted", doomed))
	require.Contains(t, b.text("#job-deleted"), "demo/doomed no longer exists. Its runs are still listed.")
	b.do(chromedp.Click(chromedp.CSS("#job-deleted-runs")))
	b.waitJS(15*time.Second, fmt.Sprintf(`(() => { const c = document.querySelector('#runs-table tr[data-key="%d"] .job-deleted'); return c !== null && c.textContent === "demodoomed deleted"; })()`, run),
		"the runs list names the deleted job")

	// A disabled job: no firings listed, and its trigger dialog says so.
	off := api.createJob(map[string]any{"app": "demo", "name": "off", "handler": "demo.hello", "cron": "*/5 * * * *", "enabled": false})
	require.Equal(t, "disabled", api.job(off).State)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", sa.base, off)))
	b.waitJS(15*time.Second, `(() => { const n = document.querySelector('#job-not-firing[data-state="disabled"]');
		return n !== null && n.textContent === "The job is disabled: none of its firings happens until it is enabled." &&
			document.querySelector("#job-next table") === null && document.querySelector("#job-state-pill").textContent === "Disabled"; })()`,
		"a disabled job lists no firings")
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="trigger"]`)), chromedp.WaitVisible(chromedp.CSS("#trigger-dialog")))
	require.Equal(t, "This job is disabled: it does not fire on its schedule, but the run you trigger here runs now.", b.text("#trigger-state"))
	b.screenshot("d3-trigger-disabled")
	b.do(chromedp.Click(chromedp.CSS(`#trigger-dialog button[data-action="cancel"]`)))

	// No executor has the handler: the warning stays on the job's page.
	lonely := api.createJob(map[string]any{"app": "demo", "name": "lonely", "handler": "demo.nope", "cron": "0 3 * * *"})
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", sa.base, lonely)))
	b.waitJS(15*time.Second, `(() => { const w = document.querySelector("#job-warnings"); return w !== null && !w.hidden && w.textContent.includes("demo.nope"); })()`,
		"the no-executor warning on the job's page")
	t.Logf("warning: %q", b.text("#job-warnings"))
}

// TestRunsListInBrowser: with the browser in New York, a run of a Berlin
// job lists its instant in New York's time under a header naming New York,
// and its firing's wall time in Berlin next to "Europe/Berlin"; runs are
// listed latest scheduled first; a run with failed slots counts them apart
// from succeeded ones ("8/8" only for all succeeded); a pending jittered
// run says when it starts. The dashboard lists no workflow-internal job
// and its Cluster card's table fits at 1440 px. The job form's placeholders
// read as examples.
func TestRunsListInBrowser(t *testing.T) {
	sa, api, b := consoleSession(t)
	defer b.checkConsole()
	berlin := api.createJob(map[string]any{"app": "demo", "name": "berlin", "handler": "demo.hello", "cron": "0 3 * * *", "time_zone": "Europe/Berlin"})
	run := api.trigger(berlin)
	api.waitRun(run, "succeeded")
	var got struct {
		Run struct {
			ScheduledAt time.Time `json:"scheduled_at"`
		} `json:"run"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", run), nil, &got)
	inZone := func(zone string) string {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		return got.Run.ScheduledAt.In(loc).Format("2006-01-02 15:04:05")
	}

	failing := api.createJob(map[string]any{"app": "demo", "name": "failing", "handler": "demo.fail", "cron": "0 3 * * *", "slots": 4, "params": "slots=1,2"})
	failed := api.trigger(failing)
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		var r struct {
			Run struct {
				Status string `json:"status"`
			} `json:"run"`
		}
		api.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", failed), nil, &r)
		return r.Run.Status == "partially_failed" || r.Run.Status == "failed", fmt.Errorf("status %s", r.Run.Status)
	}, "the failing run ends")

	// A firing a few seconds from now, jittered within 10 minutes: its run
	// pends (no executor has the handler) until after start_after.
	at := time.Now().Add(8 * time.Second).UTC()
	api.createJob(map[string]any{"app": "demo", "name": "jittered", "handler": "nobody.offers.it",
		"cron": fmt.Sprintf("%d %d %d * * *", at.Second(), at.Minute(), at.Hour()), "jitter_window": "10m"})
	var jittered int64
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var runs struct {
			Runs []struct {
				ID         int64      `json:"id"`
				JobName    string     `json:"job_name"`
				StartAfter *time.Time `json:"start_after"`
			} `json:"runs"`
		}
		api.call(http.MethodGet, "/api/v1/runs?status=pending&limit=20", nil, &runs)
		for _, r := range runs.Runs {
			if r.JobName == "jittered" && r.StartAfter != nil {
				jittered = r.ID
			}
		}
		return jittered != 0, nil
	}, "the jittered run")

	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "America/New_York"})
		return err
	}))
	b.do(chromedp.Navigate(sa.base+"/#/runs"), chromedp.Reload())
	row := func(id int64) string { return fmt.Sprintf(`#runs-table tr[data-key="%d"]`, id) }
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('%s .run-zone') !== null && document.querySelector('%s .run-start-after') !== null`, row(run), row(jittered)), "the runs listed")
	require.Equal(t, "Scheduled (America/New_York)", b.text("#runs-scheduled-head"))
	require.Equal(t, inZone("America/New_York"), b.text(row(run)+" time[data-abs]"), "the instant in the header's zone")
	require.Equal(t, " · "+inZone("Europe/Berlin")+" Europe/Berlin", b.text(row(run)+" .run-zone"), "the firing's wall time next to its zone's name")
	require.Equal(t, "1/1", b.text(row(run)+" .slotbar-text"))
	require.Equal(t, "2 ok · 2 failed / 4", b.text(row(failed)+" .slotbar-text"))
	require.Regexp(t, `^starts after \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(\+.+\)$`, b.text(row(jittered)+" .run-start-after"))
	require.True(t, b.evalBool(`(() => { const ts = [...document.querySelectorAll("#runs-table tbody tr time[data-abs]")].map(e => Date.parse(e.getAttribute("datetime")));
		return ts.length >= 3 && ts.every((v, i) => i === 0 || ts[i - 1] >= v); })()`), "latest scheduled first")
	b.screenshot("r1-runs-new-york")

	// A workflow with an inline node: its hidden job is not on the dashboard.
	wf := api.createWorkflow(map[string]any{"app": "demo", "name": "inline-only", "nodes": []map[string]any{{"key": "post", "handler": "demo.hello"}}})
	runWorkflow(t, api, wf)
	b.menu("dashboard")
	b.waitJS(30*time.Second, `[...document.querySelectorAll("#dash-jobs tbody tr")].some(tr => tr.textContent.includes("berlin")) &&
		document.querySelector('#dash-apps tr[data-app="demo"]') !== null`, "the dashboard's jobs and apps")
	require.False(t, b.evalBool(`[...document.querySelectorAll("#dash-jobs tbody tr")].some(tr => tr.textContent.includes("@"))`), "no workflow-internal job")
	require.True(t, b.evalBool(`(() => { const w = document.querySelector("#card-cluster .table-wrap"); return w.scrollWidth <= w.clientWidth; })()`),
		"the Cluster card's table is not cut at 1440 px")
	b.screenshot("r2-dashboard")

	b.do(chromedp.Navigate(sa.base+"/#/jobs/new"), chromedp.WaitVisible(chromedp.CSS("#job-form")))
	require.True(t, b.evalBool(`(() => { const a = document.querySelector("#f-app");
		return a.value === "" && a.placeholder === "e.g. billing" && getComputedStyle(a, "::placeholder").fontStyle === "italic"; })()`),
		"the app field's placeholder reads as an example")
}
