package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const adminPkg = "github.com/shardjob/shardjob/admin/cmd/shardjob-admin"

var passwordRE = regexp.MustCompile(`with password (\S+)`)

// TestConsoleInBrowser drives the console in headless Chromium against a
// real standalone admin (SQLite, demo executor): login, dashboard, a job
// created through the form with live cron validation, a manual trigger
// watched to the end on the run page, the failures page's retry, the
// language switch, a user created on the Users page (limited to one app),
// an API token whose secret is shown once and then revoked, the audit log
// of those changes, the dashboard's utilization chart drawn from the
// leader's samples, and a viewer who sees no edit buttons, no Users entry,
// and whom the API refuses. Screenshots of every main page go to
// SHARDJOB_ARTIFACTS (or the test's temporary directory).
func TestConsoleInBrowser(t *testing.T) {
	// Parallel: the long browser tests run two at a time, after the others
	// (web tests that run one at a time spend most of TestConsoleInBrowser
	// waiting for the dashboard's first folded minute).
	t.Parallel()
	chromium := testenv.Chromium(t)
	// Utilization samples every second, so that the dashboard's chart has
	// real points within the test.
	sa := startStandalone(t, "--sample-interval", "1s")
	base, password, dataDir := sa.base, sa.password, sa.dataDir
	api := newAPIClient(t, base, "admin", password)

	b := newBrowser(t, chromium, artifactsDir(t))
	defer b.checkConsole()

	// Log in.
	b.do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.screenshot("00-login")
	b.login("admin", password)
	require.Contains(t, b.text("#who"), "admin")
	require.NoFileExists(t, filepath.Join(dataDir, "admin.password"), "standalone keeps the first password only until the first login")

	// Dashboard: the demo job fires every 5 s, so the runs chart gets bars
	// (from the leader's per-minute rollup: once the first minute with runs
	// has ended and been folded, up to 75 s) and the demo executor counts
	// as online.
	b.waitJS(150*time.Second, `document.querySelectorAll("#chart-runs svg .bar rect").length > 0 &&
		document.querySelector("#stat-executors .stat-value").textContent.trim().startsWith("1") &&
		document.querySelectorAll("#chart-rate svg circle, #chart-rate svg path.line").length > 0`, "dashboard charts drawn")

	// Jobs list.
	b.menu("jobs")
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#jobs-table tbody tr")].some(tr => tr.textContent.includes("hello-every-5s"))`, "demo job listed")
	b.screenshot("02-jobs")
	// The demo job's page (UTC): one time column, and after each firing
	// the first row of the next firings is the "Next fire" above it.
	b.do(chromedp.Navigate(base + "/#/jobs/1"))
	sameNext := `(() => { const n = document.querySelector("#job-next-fire"), r = document.querySelector("#job-next tbody tr[data-at]");
		return n !== null && r !== null && Date.parse(n.dataset.at) === Date.parse(r.dataset.at); })()`
	b.waitJS(15*time.Second, `document.querySelectorAll("#job-next thead th").length === 2 && `+sameNext, "a UTC job's next firings in one column, the first one its next fire")
	first := b.evalString(`document.querySelector("#job-next-fire").dataset.at`)
	b.waitJS(30*time.Second, fmt.Sprintf(`document.querySelector("#job-next-fire").dataset.at !== %q && %s`, first, sameNext), "after a firing, the preview moved with the next fire")
	b.menu("jobs")
	b.do(chromedp.WaitVisible(chromedp.CSS("#jobs-table")))

	// The live refresh keeps an open row menu open.
	b.do(chromedp.Click(chromedp.CSS(`#jobs-table tr[data-key="1"] details.menu summary`)))
	before := b.text("#live-text")
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector("#live-text").textContent !== %q`, before), "a live refresh")
	require.True(t, b.evalBool(`document.querySelector('#jobs-table tr[data-key="1"] details.menu[open]') !== null`), "the menu survived the refresh")
	b.screenshot("02-jobs-menu")
	b.do(chromedp.Click(chromedp.CSS("#job-search")))
	require.False(t, b.evalBool(`document.querySelector("details.menu[open]") !== null`), "an outside click closes the menu")

	// New job: an invalid cron shows the error next to the cron field.
	b.do(chromedp.Click(chromedp.CSS("#new-job")), chromedp.WaitVisible(chromedp.CSS("#job-form")))
	b.setField("app", "demo")
	b.setField("name", "browser-test")
	b.setField("handler", "demo.sleep")
	b.setField("slots", "32")
	b.setField("time_zone", "Europe/Berlin")
	b.setField("description", "Created by the browser test")
	b.setField("finish_deadline", "1h")
	b.do(chromedp.SendKeys(chromedp.CSS("#f-cron"), "61 * * * *"))
	b.waitJS(15*time.Second, `document.querySelector("#err-cron").textContent.includes("61") &&
		document.querySelector("#pv-state").dataset.state === "invalid"`, "cron field error shown")
	require.Contains(t, b.text("#err-cron"), "minute")
	require.True(t, b.evalBool(`document.querySelector('[data-field="cron"]').classList.contains("has-error")`), "the cron field is marked")
	b.screenshot("03-job-form-invalid-cron")

	// A valid cron shows the next firings in the job's zone and in UTC,
	// with the DST note of the spring-forward gap.
	b.setField("cron", "")
	b.do(chromedp.SendKeys(chromedp.CSS("#f-cron"), "30 2 28 * *"))
	b.waitJS(15*time.Second, `document.querySelectorAll("#preview-table tbody tr:not(.note-row)").length === 10 &&
		document.querySelector("#err-cron").textContent === "" && document.querySelector("#pv-state").dataset.state === "valid"`, "next firings previewed")
	preview := b.text("#preview-table")
	require.Contains(t, preview, "02:30:00 CET")
	require.Contains(t, preview, "01:30:00", "UTC column")
	require.Contains(t, preview, "DST gap", "the spring-forward firing carries its note")
	b.screenshot("04-job-form")
	// Choices come from the executors: the demo app, its handlers; a handler
	// no executor offers is a warning under the field (saving stays possible).
	require.True(t, b.evalBool(`document.querySelector('#app-list option[value="demo"]') !== null &&
		document.querySelector('#handler-list option[value="demo.sleep"]') !== null &&
		document.querySelector('#handler-list option[value="demo.hello"]') !== null`), "apps and the app's handlers offered")
	require.False(t, b.evalBool(`!document.querySelector("#handler-warning").hidden`), "no warning for a handler the demo executor has")
	b.setField("handler", "demo.nope")
	b.waitJS(15*time.Second, `!document.querySelector("#handler-warning").hidden &&
		document.querySelector("#handler-warning").textContent.includes("has shown handler demo.nope")`, "warning for a handler no executor offers")
	b.screenshot("04b-job-form-handler-warning")
	b.setField("handler", "demo.sleep")
	b.waitJS(15*time.Second, `document.querySelector("#handler-warning").hidden`, "the warning goes with a known handler")
	// A child job picked by name puts its id in the field and shows its name.
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const p = document.querySelector("#f-child-pick"); p.value = "demo/hello-every-5s";
		p.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	b.waitJS(5*time.Second, `document.querySelector("#f-child_job_ids").value === "1" && document.querySelector("#child-names").textContent.includes("demo/hello-every-5s")`, "child job picked by name")
	b.setField("child_job_ids", "")

	// Create it, then trigger it with params from the job page.
	b.do(chromedp.Click(chromedp.CSS("#job-save")))
	b.waitJS(15*time.Second, `/^#\/jobs\/\d+$/.test(location.hash) && document.querySelector("#job-actions [data-act=trigger]") !== null`, "job page after create")
	jobID := b.evalInt(`Number(location.hash.split("/")[2])`)
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="trigger"]`)), chromedp.WaitVisible(chromedp.CSS("#trigger-dialog")))
	b.do(chromedp.SetValue(chromedp.CSS("#trigger-params"), "ms=250"))
	b.screenshot("05-trigger-dialog")
	b.do(chromedp.Click(chromedp.CSS(`#trigger-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `/^#\/runs\/\d+$/.test(location.hash) && document.querySelectorAll("#slot-grid .cell").length === 32`, "run page with 32 slots")
	runID := b.evalInt(`Number(location.hash.split("/")[2])`)

	// Watch the run reach succeeded with every cell of the grid succeeded.
	b.waitJS(60*time.Second, `document.querySelector("#run-status").dataset.status === "succeeded" &&
		[...document.querySelectorAll("#slot-grid .cell")].every(c => c.classList.contains("s-succeeded"))`, "run succeeded, grid filled")
	require.True(t, strings.HasPrefix(b.text("#run-progress .big-num"), "100%"), "progress at 100%")
	require.True(t, b.evalBool(`document.querySelector("#run-first-slot time") !== null`), "the run page says when its first slot started")
	require.True(t, b.evalBool(`document.querySelector("#run-finish-deadline time") !== null &&
		document.querySelector("#run-finish-deadline").dataset.state === "met"`), "the run page shows its finish deadline, met")
	b.do(chromedp.Click(chromedp.CSS(`#slot-grid .cell[data-slot="7"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#slot-panel h4") && document.querySelector("#slot-panel h4").textContent.includes("7")`, "slot detail pinned")
	// The panel compares the slot with the run's median and leads to its logs.
	require.Regexp(t, `^\(\d+\.\d× the median .+\)$`, strings.TrimSpace(b.text("#slot-vs-median")))
	b.do(chromedp.Click(chromedp.CSS("#slot-logs")))
	b.waitJS(5*time.Second, `document.querySelector("#logs-slot").value === "7"`, "the slot's logs")
	b.screenshot("06-run-detail")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#logs-slot"); s.value = ""; s.dispatchEvent(new Event("change")); window.scrollTo(0, 0); })()`))
	b.do(chromedp.Click(chromedp.CSS(`#grid-mode button[data-mode="duration"]`)))
	b.waitJS(5*time.Second, `document.querySelectorAll("#slot-grid .cell.heat").length === 32`, "duration heat")
	b.screenshot("07-run-detail-heat")
	b.do(chromedp.Click(chromedp.CSS(`#grid-mode button[data-mode="status"]`)))

	// The job page lists the run and draws the durations of its runs.
	b.do(chromedp.Click(chromedp.CSS(`#run-actions a[href^="#/jobs/"]`)))
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('#job-runs tbody tr[data-key="%d"]') !== null &&
		document.querySelectorAll("#chart-durations svg rect.dbar").length > 0`, runID), "job page with its run")
	b.screenshot("08-job-detail")
	b.waitJS(15*time.Second, `document.querySelectorAll("#job-next thead th").length === 3 &&
		document.querySelector("#job-next thead th").textContent === "Europe/Berlin"`, "next firings in the job's zone and in UTC")
	// It sets no records policy: the handler decides.
	for _, sel := range []string{"#job-dedup-scope", "#job-uncertain-policy", "#job-record-max-attempts"} {
		require.Equal(t, "Handler decides", b.text(sel), sel)
	}

	// Edit: the form loads the job, app and name are fixed, saving sends the
	// version read (optimistic lock).
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="edit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#f-name") !== null && document.querySelector("#f-name").value === "browser-test" &&
		document.querySelector("#f-name").readOnly && document.querySelector("#pv-state").dataset.state === "valid"`, "edit form loaded")
	b.setField("description", "Edited in the browser")
	b.do(chromedp.Click(chromedp.CSS("#job-save")))
	b.waitJS(15*time.Second, fmt.Sprintf(`location.hash === "#/jobs/%d" && document.querySelector(".page-sub") !== null &&
		document.querySelector(".page-sub").textContent === "Edited in the browser" && document.querySelector(".page").textContent.includes("v2 ·")`, jobID), "job saved as v2")

	// Pause and resume from the job page.
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="pause"]`)), chromedp.WaitVisible(chromedp.CSS("#pause-dialog")))
	b.do(chromedp.Click(chromedp.CSS(`#pause-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#job-actions [data-act="resume"]') !== null && document.querySelector(".page-title .pill-warn") !== null`, "job paused")
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="resume"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#job-actions [data-act="pause"]') !== null && document.querySelector(".page-title .pill-ok") !== null`, "job resumed")

	// Alarm routes: none yet; this admin has no alarm channels, so saving a
	// route shows the API's field error in the dialog.
	b.waitJS(15*time.Second, `document.querySelector("#alarm-routes") !== null && document.querySelector("#alarm-routes").textContent.includes("default channels")`, "alarm routes card")
	// (a JS click: the card sits at the bottom, where the sticky header may cover a coordinate click)
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#alarm-routes-edit").click()`))
	b.waitJS(15*time.Second, `document.querySelector("#alarm-routes-text") !== null`, "alarm routes dialog open")
	b.do(chromedp.SetValue(chromedp.CSS("#alarm-routes-text"), "ops-hook"))
	b.do(chromedp.Click(chromedp.CSS(`#alarm-routes-dialog .btn-primary`)))
	b.waitJS(15*time.Second, `document.querySelector("#alarm-routes-error") !== null && document.querySelector("#alarm-routes-error").textContent.includes("no alarm channels are configured")`, "route refused with the field error")
	b.screenshot("08c-alarm-routes-error")
	b.do(chromedp.Click(chromedp.CSS(`#alarm-routes-dialog .btn-secondary`)))
	b.waitJS(15*time.Second, `document.querySelector("#alarm-routes-dialog") === null`, "alarm routes dialog closed")

	// Clone it: the copy opens, disabled.
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="clone"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#clone-dialog #clone-name") !== null`, "clone dialog open")
	b.do(chromedp.Click(chromedp.CSS(`#clone-dialog .btn-primary`)))
	b.waitJS(15*time.Second, fmt.Sprintf(`location.hash.startsWith("#/jobs/") && location.hash !== "#/jobs/%d" && document.querySelector(".page-title") !== null &&
		document.querySelector(".page-title").textContent.includes("-copy")`, jobID), "the copy opened")
	b.screenshot("08b-job-cloned")

	// Records policy (sdk/records): an invalid dedup scope gets the API's
	// field error next to its field, live and on save, and no job is
	// created; a valid policy is saved, shown on the job page and loaded by
	// the edit form. Its handler is one the demo executor does not have:
	// the job is saved all the same, with a warning that its runs would wait.
	b.do(chromedp.Navigate(base+"/#/jobs/new"), chromedp.WaitVisible(chromedp.CSS("#job-form")))
	b.waitJS(15*time.Second, `document.querySelector("#records-group #f-dedup_scope") !== null && document.querySelector("#f-app").value === ""`, "an empty new job form")
	b.setField("app", "demo")
	b.setField("name", "records-policy")
	b.setField("handler", "settle.v1")
	b.setField("time_zone", "Asia/Shanghai")
	b.setField("cron", "0 0 1 1 *")
	b.setField("uncertain_policy", "skip")
	b.setField("record_max_attempts", "5")
	b.setField("dedup_scope", "a b")
	b.waitJS(15*time.Second, `document.querySelector("#err-dedup_scope").textContent.includes("letters, digits") &&
		document.querySelector('[data-field="dedup_scope"]').classList.contains("has-error") &&
		document.querySelector("#pv-state").dataset.state === "partial" && document.querySelectorAll("#preview-table tbody tr").length > 0`,
		"live dedup scope error, the schedule still previewed")
	b.setField("dedup_scope", "run:1")
	b.waitJS(15*time.Second, `document.querySelector("#err-dedup_scope").textContent.includes('starts with "run:"')`, "live run: prefix error")
	// (JS clicks: the records group is at the bottom of the form, under the sticky header when scrolled)
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#job-save").click()`))
	b.waitJS(15*time.Second, `!document.querySelector("#form-error").hidden && document.querySelector("#form-error").textContent.includes("Not saved.") &&
		document.querySelector("#err-dedup_scope").textContent.includes('starts with "run:"') &&
		document.querySelector('[data-field="dedup_scope"]').classList.contains("has-error") &&
		document.activeElement === document.querySelector("#f-dedup_scope") && location.hash === "#/jobs/new"`, "save refused with the dedup scope error")
	require.Empty(t, b.text("#err-uncertain_policy")+b.text("#err-record_max_attempts"), "only the scope is in error")
	b.screenshot("08c-job-form-records-error")
	for _, j := range api.jobs() {
		require.NotEqual(t, "records-policy", j.Name, "a refused job is not created")
	}
	b.setField("dedup_scope", "settle:{date}")
	b.waitJS(15*time.Second, `document.querySelector("#err-dedup_scope").textContent === "" && document.querySelector("#pv-state").dataset.state === "valid"`, "the scope accepted")
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#job-save").click()`))
	b.waitJS(15*time.Second, `/^#\/jobs\/\d+$/.test(location.hash) && document.querySelector("#job-record-max-attempts") !== null`, "job page after create")
	b.waitJS(15*time.Second, `[...document.querySelectorAll(".toast-warn")].some(e => e.textContent.includes("has shown handler settle.v1 yet"))`, "the warning about the handler")
	recordsJob := int64(b.evalInt(`Number(location.hash.split("/")[2])`))
	saved := api.job(recordsJob)
	require.Equal(t, "records-policy", saved.Name)
	require.Equal(t, "settle:{date}", saved.DedupScope)
	require.Equal(t, "skip", saved.UncertainPolicy)
	require.Equal(t, 5, saved.RecordMaxAttempts)
	require.Equal(t, "settle:{date} shared by the runs with the same name", b.text("#job-dedup-scope"))
	require.Equal(t, "Skip (at most once, alarmed)", b.text("#job-uncertain-policy"))
	require.Equal(t, "5", b.text("#job-record-max-attempts"))
	b.screenshot("08d-job-detail-records")
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="edit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#f-name") !== null && document.querySelector("#f-name").value === "records-policy" &&
		document.querySelector("#f-dedup_scope").value === "settle:{date}" && document.querySelector("#f-uncertain_policy").value === "skip" &&
		document.querySelector("#f-record_max_attempts").value === "5"`, "edit form loads the records policy")

	// Executors.
	b.menu("executors")
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#executors-table tbody tr")].some(tr => tr.textContent.includes("standalone-demo-executor"))`, "demo executor listed")
	b.screenshot("09-executors")
	// Drain the demo executor, then undrain it (operator action, audited).
	b.do(chromedp.Click(chromedp.CSS(`#executors-table button[data-act="drain"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#drain-dialog") !== null`, "drain dialog open")
	b.do(chromedp.Click(chromedp.CSS(`#drain-dialog .btn-danger`)))
	b.waitJS(15*time.Second, `document.querySelector('#executors-table button[data-act="undrain"]') !== null`, "executor drained")
	b.screenshot("09b-executor-drained")
	b.do(chromedp.Click(chromedp.CSS(`#executors-table button[data-act="undrain"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#executors-table button[data-act="drain"]') !== null`, "executor undrained")
	// "Show gone executors" asks the admin for the gone ones too (all=1),
	// which the list leaves out by default.
	b.do(chromedp.Click(chromedp.CSS(`#exec-gone`)))
	b.waitJS(15*time.Second, `performance.getEntriesByType("resource").some(e => e.name.includes("/api/v1/executors?all=1")) &&
		[...document.querySelectorAll("#executors-table tbody tr")].some(tr => tr.textContent.includes("standalone-demo-executor"))`, "the toggle lists gone executors too")
	b.do(chromedp.Click(chromedp.CSS(`#exec-gone`)))

	// Failures: a run with failed slots, retried with one click.
	flaky := api.createJob(map[string]any{"app": "demo", "name": "flaky", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 8, "params": "slots=1,3"})
	failedRun := api.trigger(flaky)
	api.waitRun(failedRun, "partially_failed")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", base, failedRun)))
	b.waitJS(15*time.Second, `document.querySelectorAll("#slot-grid .cell.s-failed").length === 2 &&
		document.querySelectorAll("#slot-grid .cell.s-succeeded").length === 6 && document.querySelector("#run-retry") !== null`, "failed slots in the grid")
	require.Contains(t, b.text("#run-retry"), "2")
	b.do(chromedp.Click(chromedp.CSS(`#slot-grid .cell[data-slot="3"]`)), chromedp.WaitVisible(chromedp.CSS("#slot-error")))
	require.Contains(t, b.text("#slot-error"), "slot 3 fails on purpose")
	require.Contains(t, b.text("#run-failures"), "slot 1 fails on purpose")
	b.screenshot("10-run-failed")
	b.menu("failures")
	retrySel := fmt.Sprintf(`#failures-table button[data-act="retry"][data-run="%d"]`, failedRun)
	b.do(chromedp.WaitVisible(chromedp.CSS(retrySel)))
	b.screenshot("11-failures")
	b.do(chromedp.Click(chromedp.CSS(retrySel)))
	b.waitJS(15*time.Second, `[...document.querySelectorAll(".toast")].some(e => /Retrying 2 slots/.test(e.textContent))`, "retry acknowledged")

	// Logs: what demo.hello logs per slot appears in the run's logs panel, as text (a slot parameter holding
	// markup stays text), and the slot filter narrows it.
	hello := api.createJob(map[string]any{"app": "demo", "name": "hello-logs", "handler": "demo.hello", "cron": "0 0 1 1 *", "slots": 4,
		"slot_params": "1=<img src=x id=injected>"})
	helloRun := api.trigger(hello)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", base, helloRun)))
	b.waitJS(30*time.Second, `[...document.querySelectorAll("#run-logs .log-line")].filter(l => l.textContent.includes("hello from slot")).length === 4`, "every slot's log lines in the logs panel")
	require.False(t, b.evalBool(`document.querySelector("#injected") !== null`), "log text is never parsed as HTML")
	require.Contains(t, b.text("#run-logs"), "slot_param=<img src=x id=injected>")
	// Lines in the order they were written, each labelled with its slot;
	// following is off once the run has ended.
	b.waitJS(30*time.Second, `document.querySelector("#run-status").dataset.status === "succeeded" &&
		document.querySelector("#logs-follow").disabled && !document.querySelector("#logs-follow").checked`, "follow off for the ended run")
	require.True(t, b.evalBool(`(() => { const at = [...document.querySelectorAll("#run-logs .log-line")].map(l => Number(l.dataset.at));
		return at.length >= 4 && at.every((v, i) => i === 0 || at[i - 1] <= v); })()`), "log lines in time order")
	require.True(t, b.evalBool(`[...document.querySelectorAll("#run-logs .log-slot")].every(e => /^Slot \d+$/.test(e.textContent))`), "lines say 'Slot N'")
	b.screenshot("10b-run-logs")
	b.do(chromedp.SetValue(chromedp.CSS("#logs-slot"), "2"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#logs-slot").dispatchEvent(new Event("change"))`))
	b.waitJS(15*time.Second, `document.querySelectorAll("#run-logs .log-line").length === 1 &&
		[...document.querySelectorAll("#run-logs .log-line")].every(l => l.dataset.slot === "2")`, "the logs of slot 2 only")

	// Runs, alarms and cluster render.
	b.menu("runs")
	b.waitJS(15*time.Second, `document.querySelectorAll("#runs-table tbody tr").length > 3`, "runs listed")
	b.do(chromedp.SendKeys(chromedp.CSS("#runs-search"), "flaky"))
	b.waitJS(5*time.Second, `(() => { const rows = [...document.querySelectorAll("#runs-table tbody tr")];
		return rows.length >= 1 && rows.every(tr => tr.textContent.includes("flaky")); })()`, "search narrows the runs")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#runs-search"); s.value = ""; s.dispatchEvent(new Event("input"));
		const to = document.querySelector("#runs-to"); to.value = "2001-01-01T00:00:00"; to.dispatchEvent(new Event("change")); })()`))
	b.waitJS(15*time.Second, `document.querySelectorAll("#runs-table tbody tr").length === 0 && location.hash.includes("to=2001-01-01")`, "the time range filters on the server, kept in the address")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const to = document.querySelector("#runs-to"); to.value = ""; to.dispatchEvent(new Event("change")); })()`))
	b.waitJS(15*time.Second, `document.querySelectorAll("#runs-table tbody tr").length > 3`, "runs listed again")
	b.screenshot("12-runs")
	// A run no executor can take says why, as a warning on its page and
	// under its job in the jobs list.
	stuck := api.createJob(map[string]any{"app": "demo", "name": "stuck", "handler": "demo.nope", "cron": "0 0 1 1 *"})
	stuckRun := api.trigger(stuck)
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", base, stuckRun)))
	b.waitJS(30*time.Second, `(() => { const e = document.querySelector("#run-error");
		return e && !e.hidden && e.classList.contains("callout-warn") && e.textContent.includes("has handler demo.nope"); })()`, "the stuck run says why it waits")
	b.screenshot("12b-run-waiting")
	b.do(chromedp.Navigate(base + "/#/jobs"))
	b.waitJS(15*time.Second, fmt.Sprintf(`(() => { const tr = document.querySelector('#jobs-table tr[data-key="%d"]');
		return tr && tr.querySelector(".run-reason.text-warn") && tr.querySelector(".run-reason").textContent.includes("demo.nope"); })()`, stuck), "the jobs list shows why its last run waits")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", base, stuck)))
	b.waitJS(15*time.Second, `document.querySelector("#job-actions") !== null`, "the stuck job's page")
	api.call("DELETE", fmt.Sprintf("/api/v1/jobs/%d", stuck), nil, nil) // its run is cancelled: later counts are not disturbed
	b.menu("cluster")
	b.waitJS(15*time.Second, `document.querySelector("#leader-holder") && document.querySelector("#leader-holder").textContent === "standalone" &&
		document.querySelectorAll("#members-table tbody tr").length === 1`, "cluster page")
	// The one replica of standalone mode owns every scheduling partition:
	// 256 cells of its colour, its count in the replicas table and the
	// legend, each cell's owner, epoch and firing lag in its title; the
	// largest lag above the map.
	b.waitJS(15*time.Second, `(() => { const cells = [...document.querySelectorAll("#partition-map .pcell")];
		const row = document.querySelector("#members-table tbody tr");
		return cells.length === 256 && cells.every(c => c.classList.contains("c-app0") && /^partition \d+ · standalone · epoch \d+ · firing lag \S/.test(c.title)) &&
			row.lastElementChild.textContent === "256" && document.querySelector("#partition-legend").textContent === "standalone 256" &&
			document.querySelector("#partition-lag").textContent.startsWith("Largest firing lag of a partition: "); })()`,
		"the partition map: 256 partitions owned by the standalone replica, with their firing lag")
	b.screenshot("13-cluster")
	b.menu("alarms")
	b.waitJS(15*time.Second, `document.querySelector("#alarms-table") !== null && !document.querySelector(".page").classList.contains("is-loading")`, "alarms page")
	b.waitJS(15*time.Second, fmt.Sprintf(`[...document.querySelectorAll("#alarms-table .alarm-job")].some(a => a.textContent === "demo/flaky" && a.title === "id %d")`, flaky),
		"an alarm names its job (the id on hover)")
	// Acknowledge, then resolve, the flaky job's run_failed alarm; "Open only" then hides it.
	alarmID := b.evalInt(`Number(document.querySelector('#alarms-table tr:has(.alarm-job[title="id ` + strconv.FormatInt(flaky, 10) + `"])').dataset.key)`)
	ackSel := fmt.Sprintf(`#alarms-table tr[data-key="%d"]`, alarmID)
	b.do(chromedp.Click(chromedp.CSS(ackSel + ` button[data-act="ack"]`)))
	b.waitJS(15*time.Second, `(() => { const tr = document.querySelector('`+ackSel+`');
		return tr && tr.querySelector(".alarm-state").textContent.includes("Acknowledged") && tr.querySelector('button[data-act="ack"]') === null; })()`, "alarm acknowledged")
	b.do(chromedp.Click(chromedp.CSS(ackSel + ` button[data-act="resolve"]`)))
	b.waitJS(15*time.Second, `document.querySelector('`+ackSel+`').querySelector(".alarm-state").textContent.includes("Resolved")`, "alarm resolved")
	b.screenshot("13b-alarms")
	b.do(chromedp.Click(chromedp.CSS("#alarm-open")))
	b.waitJS(5*time.Second, `document.querySelector('`+ackSel+`') === null`, "Open only hides the resolved alarm")
	b.do(chromedp.Click(chromedp.CSS("#alarm-open")))

	// The dashboard again, over the last hour, now with a failure (counted
	// once the minute it ended in is folded).
	b.menu("dashboard")
	b.do(chromedp.Click(chromedp.CSS(`#dash-window button[data-win="6h"]`)))
	b.do(chromedp.Click(chromedp.CSS(`#dash-window button[data-win="1h"]`)))
	b.waitJS(150*time.Second, `document.querySelectorAll("#chart-runs svg .bar rect.c-fail").length > 0 &&
		document.querySelector("#stat-failed .stat-value").textContent !== "0"`, "dashboard shows the failed run")
	dashboardFromEndpoint(t, b, api)
	b.waitJS(15*time.Second, `(() => { const tr = document.querySelector('#dash-apps tr[data-app="demo"]');
		return tr && tr.querySelector(".util .rate-text") && /%$/.test(tr.querySelector(".util .rate-text").textContent); })()`, "utilization per app")
	// Utilization over time: the leader's samples of the demo app, one
	// line over the last hour (15 s buckets), busy/capacity/queued on hover.
	b.waitJS(15*time.Second, `document.querySelector('#util-window button[data-win="6h"]').classList.contains("active") &&
		document.querySelector("#chart-util").dataset.apps === "1"`, "utilization chart over 6 hours by default")
	b.do(chromedp.Click(chromedp.CSS(`#util-window button[data-win="1h"]`)))
	b.waitJS(30*time.Second, `Number(document.querySelector("#chart-util").dataset.points) >= 2 &&
		document.querySelectorAll("#chart-util svg path.line.c-app0").length === 1 &&
		document.querySelector("#util-legend").textContent.includes("demo")`, "utilization line of the demo app")
	b.waitJS(15*time.Second, `(() => {
		const hit = document.querySelector("#chart-util svg rect.hit"), box = hit.getBoundingClientRect(), tip = document.querySelector("#tip");
		for (let f = 1; f >= 0; f -= 0.01) {
			hit.dispatchEvent(new MouseEvent("mousemove", { clientX: box.left + f * box.width, clientY: box.top + box.height / 2, bubbles: true }));
			if (!tip.hidden && tip.textContent.includes("demo") && /\d+ \/ [\d.,]+ busy \([\d.,]+%\) · \d+ queued/.test(tip.textContent)) return true;
		}
		return false; })()`, "hovering the chart shows busy, capacity and queued")
	b.screenshot("01-dashboard")

	// A job on a business calendar: the form offers the calendars the app
	// may use (a global one here), the preview shows the firings a holiday
	// removes and where shift moves them, and a skipped run's page says why.
	day := func(n int) string { return time.Now().UTC().AddDate(0, 0, n).Format("2006-01-02") }
	var cal struct {
		ID int64 `json:"id"`
	}
	api.call("POST", "/api/v1/calendars", map[string]any{"name": "browser-cal", "import": map[string]any{"format": "csv",
		"content": "date,kind,name\n" + day(0) + ",holiday,Test holiday\n" + day(1) + ",holiday,Test holiday\n" + day(2) + ",holiday,Test holiday\n"}}, &cal)
	b.do(chromedp.Navigate(base+"/#/jobs/new"), chromedp.WaitVisible(chromedp.CSS("#job-form")))
	b.setField("app", "demo")
	b.setField("name", "calendar-job")
	b.setField("handler", "demo.hello")
	b.setField("time_zone", "UTC")
	b.setField("cron", "0 12 * * *")
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('#f-calendar_id option[value="%d"]') !== null &&
		document.querySelector('[data-field="calendar_rule"]').hidden`, cal.ID), "the calendar offered; no rule without a calendar")
	pick := func(field, value string) {
		b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector("#f-%s"); s.value = %q;
			s.dispatchEvent(new Event("change", { bubbles: true })); })()`, field, value)))
	}
	pick("calendar_id", strconv.FormatInt(cal.ID, 10))
	b.waitJS(15*time.Second, `document.querySelector("#f-calendar_rule").value === "business_days_only" &&
		!document.querySelector('[data-field="calendar_rule"]').hidden && document.querySelector('[data-field="calendar_shift"]').hidden`, "a calendar brings its rule")
	pick("calendar_rule", "skip_holidays")
	b.waitJS(15*time.Second, `document.querySelector("#pv-state").dataset.state === "valid" &&
		document.querySelectorAll('#preview-table tr[data-skipped="1"]').length >= 2 &&
		document.querySelector("#preview-table").textContent.includes("is a holiday (Test holiday) in calendar browser-cal")`, "the preview shows the removed firings with their reason")
	pick("calendar_rule", "shift")
	// A job of one day of the month, a holiday: shift moves it (a daily
	// job's moved firings would be duplicates of the working day's own).
	b.setField("cron", "0 12 "+strconv.Itoa(time.Now().UTC().AddDate(0, 0, 1).Day())+" * *")
	b.waitJS(15*time.Second, `!document.querySelector('[data-field="calendar_shift"]').hidden &&
		document.querySelector("#preview-table").textContent.includes("moved from")`, "shift: the preview shows where a firing moves")
	b.screenshot("15-job-form-calendar")
	b.do(chromedp.Click(chromedp.CSS("#job-cancel"))) // not saved: no draft left for the next new job
	b.waitJS(15*time.Second, `location.hash === "#/jobs"`, "back to the jobs")
	// Every 10 s on working days only, today being a holiday: skipped runs
	// with the calendar's reason.
	calJob := api.createJob(map[string]any{"app": "demo", "name": "calendar-skips", "handler": "demo.hello", "cron": "*/10 * * * * *",
		"calendar_id": cal.ID, "calendar_rule": "business_days_only"})
	var skippedRun int64
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		var runs struct {
			Runs []struct {
				ID         int64  `json:"id"`
				Status     string `json:"status"`
				CalendarID int64  `json:"calendar_id"`
			} `json:"runs"`
		}
		api.call("GET", fmt.Sprintf("/api/v1/runs?job_id=%d&limit=5", calJob), nil, &runs)
		for _, r := range runs.Runs {
			if r.Status == "skipped" && r.CalendarID == cal.ID {
				skippedRun = r.ID
			}
		}
		return skippedRun != 0, nil
	}, "a skipped run of the calendar job")
	require.NotZero(t, skippedRun, "a firing on the holiday is recorded as skipped")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", base, skippedRun)))
	b.waitJS(15*time.Second, `(() => { const e = document.querySelector("#run-error");
		return e && !e.hidden && e.classList.contains("callout-info") && e.textContent.includes("is a holiday (Test holiday) in calendar browser-cal") &&
			document.querySelector("#run-calendar") !== null; })()`, "the skipped run says which holiday removed it")
	b.screenshot("15b-run-skipped-holiday")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", base, calJob)))
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('#job-calendar a[href="#/calendars/%d"]') !== null &&
		document.querySelectorAll('#job-next tr[data-skipped="1"]').length > 0`, cal.ID), "the job page's next firings show the skips, the calendar linked")
	api.call("DELETE", fmt.Sprintf("/api/v1/jobs/%d", calJob), nil, nil)
	api.call("DELETE", fmt.Sprintf("/api/v1/calendars/%d", cal.ID), nil, nil)

	// A job past its end_at is completed: the job page says so with the
	// reason and shows the window; the edit form has the window's fields,
	// and the preview keeps to the window (none left: an empty preview).
	doneJob := api.createJob(map[string]any{"app": "demo", "name": "window-done", "handler": "demo.hello", "cron": "0 3 * * *",
		"start_at": "2020-01-01T00:00:00Z", "end_at": "2020-12-31T00:00:00Z", "max_runs": 3})
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", base, doneJob)))
	b.waitJS(15*time.Second, `(() => { const c = document.querySelector("#job-completed"), w = document.querySelector("#job-window");
		return c !== null && c.textContent.includes("past its end_at (2020-12-31T00:00:00Z)") && w !== null &&
			w.textContent.includes("at most 3 successful runs") && document.querySelector("#job-not-firing") !== null &&
			document.querySelector("#view h1, .page-title").textContent.includes("Completed"); })()`,
		"the job page shows the completed state, its reason and the window")
	b.screenshot("15c-job-completed")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d/edit", base, doneJob)))
	b.waitJS(15*time.Second, `document.querySelector("#f-end_at") !== null && document.querySelector("#f-end_at").value === "2020-12-31T00:00:00Z" &&
		document.querySelector("#f-max_runs").value === "3"`, "the edit form shows start_at, end_at and max_runs")
	b.setField("end_at", "2020-01-01T00:00:00Z")
	b.waitJS(15*time.Second, `(() => { const e = document.querySelector("#err-end_at");
		return e !== null && e.textContent.includes("must be after start_at"); })()`, "end_at before start_at: the field error under end_at")
	b.do(chromedp.Click(chromedp.CSS("#job-cancel")))
	b.waitJS(15*time.Second, fmt.Sprintf(`location.hash === "#/jobs/%d"`, doneJob), "back to the job")
	api.call("DELETE", fmt.Sprintf("/api/v1/jobs/%d", doneJob), nil, nil)

	// Simplified Chinese, kept across a reload.
	b.do(chromedp.SetValue(chromedp.CSS("#lang-select"), "zh-CN"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#lang-select").dispatchEvent(new Event("change"))`))
	b.do(chromedp.Navigate(base + "/#/jobs"))
	b.waitJS(15*time.Second, `document.querySelector('#nav a[data-nav="jobs"]').textContent === "作业" &&
		document.querySelectorAll("#jobs-table tbody tr").length >= 3 && document.documentElement.lang === "zh-CN"`, "console in Chinese after reload")
	require.Contains(t, b.text("#new-job"), "新建作业")
	b.screenshot("14-jobs-zh")
	// The admin's messages in Chinese: a failed run, a run that waits and
	// the alarms show no English text of the admin (its codes translated);
	// a handler's own error stays as the handler wrote it.
	noEnglish := func(what string) {
		t.Helper()
		found := b.evalString(fmt.Sprintf(`(() => { const text = document.querySelector("#view").innerText;
			return %s.filter(f => text.includes(f)).join(" | "); })()`, jsStrings(englishFragments())))
		require.Empty(t, found, "English server text on the %s page in zh-CN", what)
	}
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", base, failedRun)))
	b.waitJS(60*time.Second, `(() => { const e = document.querySelector("#run-error");
		return e && !e.hidden && e.textContent.includes("8 个分片中 2 个失败"); })()`, "the failed run's reason in Chinese")
	require.Contains(t, b.text("#run-failures"), "slot 1 fails on purpose", "the handler's error as written")
	noEnglish("failed run")
	b.screenshot("14b-run-failed-zh")
	stuckZh := api.createJob(map[string]any{"app": "demo", "name": "stuck-zh", "handler": "demo.nope", "cron": "0 0 1 1 *"})
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", base, api.trigger(stuckZh))))
	b.waitJS(30*time.Second, `(() => { const e = document.querySelector("#run-error");
		return e && !e.hidden && e.textContent.includes("等待中：应用 demo 没有在线执行器提供处理器 demo.nope"); })()`, "the waiting run's reason in Chinese")
	noEnglish("waiting run")
	b.screenshot("14c-run-waiting-zh")
	b.do(chromedp.Navigate(base + "/#/alarms"))
	b.waitJS(30*time.Second, `(() => { const t = document.querySelector("#alarms-table") ? document.querySelector("#alarms-table").innerText : "";
		return t.includes("部分失败") && t.includes("无法开始") && t.includes("成为调度主节点"); })()`, "alarms in Chinese")
	noEnglish("alarms")
	b.screenshot("14d-alarms-zh")
	// The job form's warning, a message of the admin too.
	b.do(chromedp.Navigate(base+"/#/jobs/new"), chromedp.WaitVisible(chromedp.CSS("#job-form")))
	b.setField("app", "demo")
	b.setField("name", "zh-warning")
	b.setField("handler", "demo.nope")
	b.setField("cron", "0 0 1 1 *")
	b.waitJS(15*time.Second, `!document.querySelector("#handler-warning").hidden &&
		document.querySelector("#handler-warning").textContent.includes("应用 demo 还没有执行器提供处理器 demo.nope")`, "the handler warning in Chinese")
	// The preview's daylight-saving note too.
	b.setField("time_zone", "Europe/Berlin")
	b.setField("cron", "30 2 28 * *")
	b.waitJS(15*time.Second, `document.querySelector("#preview-table") !== null &&
		document.querySelector("#preview-table").textContent.includes("夏令时跳变：02:30 不存在")`, "the DST note in Chinese")
	require.NotContains(t, b.text("#preview-table"), "does not exist", "no English note")
	b.screenshot("14e-job-form-warning-zh")
	// Field errors are the admin's messages too: an hour 25 and 2000 slots,
	// while typing (the preview) and when saving, in Chinese only.
	b.setField("cron", "0 25 * * *")
	b.setField("slots", "2000")
	b.waitJS(15*time.Second, `document.querySelector("#err-cron").textContent === "Cron 第 2 个字段（小时）：25 不在 0-23 范围内" &&
		document.querySelector("#err-slots").textContent === "2000 不在 1-1024 范围内"`, "the field errors in Chinese")
	require.Equal(t, "Cron 第 2 个字段（小时）：25 不在 0-23 范围内", b.text("#preview-error"), "the preview's error too")
	b.do(chromedp.Click(chromedp.CSS("#job-save")))
	b.waitJS(15*time.Second, `!document.querySelector("#form-error").hidden`, "saving is refused")
	require.Equal(t, "未保存。", strings.TrimSpace(b.text("#form-error")), "the banner: the fields say what is wrong")
	require.Equal(t, "2000 不在 1-1024 范围内", b.text("#err-slots"))
	noEnglish("job form with field errors")
	// The short words of the admin's English that noEnglish does not look for.
	found := b.evalString(`(() => { const text = document.querySelector("#job-form").innerText;
		return ["outside", "cron field", "(hour)", "invalid job", "is not"].filter(f => text.includes(f)).join(" | "); })()`)
	require.Empty(t, found, "English field errors in the zh-CN job form")
	b.screenshot("14f-job-form-errors-zh")
	// A built-in handler's params: the handler's problem in Chinese too.
	b.setField("handler", "http")
	b.setField("params", `{"url": "ftp://example.com/"}`)
	b.do(chromedp.Click(chromedp.CSS("#job-save")))
	b.waitJS(15*time.Second, `document.querySelector("#err-params").textContent === 'http 处理器参数：url："ftp://example.com/"：只允许 http 和 https 的 URL'`,
		"the built-in handler's params error in Chinese")
	require.NotContains(t, b.text("#job-form"), "only http and https", "no English params error")
	// A dialog's field error: the token's name is too long.
	b.do(chromedp.Navigate(base+"/#/tokens"), chromedp.WaitVisible(chromedp.CSS("#new-token")))
	b.do(chromedp.Click(chromedp.CSS("#new-token")), chromedp.WaitVisible(chromedp.CSS("#token-dialog")))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#token-name").value = "x".repeat(65)`))
	b.do(chromedp.Click(chromedp.CSS(`#token-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#err-token-name").textContent === "必填；1-64 个可打印字符，首尾不能有空格" &&
		document.querySelector('#token-dialog [data-field="name"]').classList.contains("has-error")`, "the token's name error in Chinese")
	require.NotContains(t, b.text("#token-dialog"), "printable characters", "no English in the dialog")
	b.screenshot("14g-token-dialog-error-zh")
	b.do(chromedp.Click(chromedp.CSS(`#token-dialog button[data-action="cancel"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#token-dialog") === null`, "the token dialog closed")
	api.call("DELETE", fmt.Sprintf("/api/v1/jobs/%d", stuckZh), nil, nil)
	b.do(chromedp.SetValue(chromedp.CSS("#lang-select"), "en"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#lang-select").dispatchEvent(new Event("change"))`))
	b.waitJS(5*time.Second, `document.querySelector('#nav a[data-nav="jobs"]').textContent === "Jobs"`, "back to English")

	// Delete the flaky job from the list, with confirmation.
	b.menu("jobs")
	row := fmt.Sprintf(`#jobs-table tr[data-key="%d"]`, flaky)
	// Open the row menu and choose Delete in one step: on a loaded machine a
	// live refresh may land between two separate clicks.
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('%s details.menu') !== null`, row), "the job's row")
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const m = document.querySelector('%s details.menu'); m.open = true;
		m.querySelector('[data-act="delete"]').click(); })()`, row)), chromedp.WaitVisible(chromedp.CSS("#delete-dialog")))
	require.Contains(t, b.text("#delete-dialog"), "demo/flaky")
	b.do(chromedp.Click(chromedp.CSS(`#delete-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('%s') === null && document.querySelector("#delete-dialog") === null`, row), "job deleted")

	// Users: the admin creates a viewer limited to app demo; the API's
	// field error (a short password) appears next to the password field.
	api.createJob(map[string]any{"app": "other", "name": "other-app-job", "handler": "demo.hello", "cron": "0 0 1 1 *"})
	b.menu("users")
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#users-table tbody tr")].some(tr => tr.textContent.includes("admin"))`, "users listed")
	b.do(chromedp.Click(chromedp.CSS("#new-user")), chromedp.WaitVisible(chromedp.CSS("#user-dialog")))
	b.do(chromedp.SendKeys(chromedp.CSS("#user-name"), "viewer"), chromedp.SendKeys(chromedp.CSS("#user-password"), "short"),
		chromedp.SetValue(chromedp.CSS("#user-role"), "viewer"), chromedp.SendKeys(chromedp.CSS("#user-apps"), "demo"))
	b.do(chromedp.Click(chromedp.CSS(`#user-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#err-user-password").textContent.includes("use at least 12") &&
		document.querySelector('#user-dialog [data-field="password"]').classList.contains("has-error")`, "password field error in the dialog")
	b.screenshot("16-user-dialog-error")
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#user-password").value = ""`), chromedp.SendKeys(chromedp.CSS("#user-password"), "viewer-password-1"))
	b.do(chromedp.Click(chromedp.CSS(`#user-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#user-dialog") === null &&
		[...document.querySelectorAll("#users-table tbody tr")].some(tr => tr.textContent.includes("viewer") && tr.querySelector(".app-tag") && tr.querySelector(".app-tag").textContent === "demo")`,
		"viewer created, limited to demo")
	b.screenshot("16-users")

	// API tokens: the secret is shown once, with a copy button; the list
	// and a reload never show it again; revoking it ends it.
	b.menu("tokens")
	b.do(chromedp.WaitVisible(chromedp.CSS("#new-token")))
	b.do(chromedp.Click(chromedp.CSS("#new-token")), chromedp.WaitVisible(chromedp.CSS("#token-dialog")))
	require.Equal(t, "operator", b.evalString(`document.querySelector("#token-role").value`), "a new token is capped at operator by default")
	require.Equal(t, "90", b.evalString(`document.querySelector("#token-days").value`), "and expires in 90 days by default")
	b.do(chromedp.SendKeys(chromedp.CSS("#token-name"), "browser-ci"))
	b.do(chromedp.Click(chromedp.CSS(`#token-dialog button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#token-secret-dialog")))
	secret := b.evalString(`document.querySelector("#token-secret").value`)
	require.Regexp(t, `^sjt_[a-z2-7]{52}$`, secret)
	require.Contains(t, b.text("#token-once"), "You will not see this secret again")
	b.do(chromedp.Click(chromedp.CSS("#token-copy")))
	b.waitJS(5*time.Second, `document.querySelector("#token-copied").textContent !== ""`, "copy acknowledged")
	b.screenshot("17-token-secret")
	code, role := bearerMe(t, base, secret)
	require.Equal(t, http.StatusOK, code, "the new token works")
	require.Equal(t, auth.RoleOperator, role, "with its role cap")
	tokenAPI := &apiClient{t: t, api: &cli.Client{Base: base, Token: secret}}
	var paused struct{}
	require.Equal(t, http.StatusOK, tokenAPI.call("POST", "/api/v1/jobs/1/pause", nil, &paused), "an audited change made with the token")
	require.Equal(t, http.StatusOK, tokenAPI.call("POST", "/api/v1/jobs/1/resume", nil, &paused))
	b.do(chromedp.Click(chromedp.CSS(`#token-secret-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#token-secret-dialog") === null &&
		[...document.querySelectorAll("#tokens-table tbody tr")].some(tr => tr.textContent.includes("browser-ci") && tr.textContent.includes("Active"))`, "token listed")
	secretShown := fmt.Sprintf(`document.documentElement.outerHTML.includes(%q) || [...document.querySelectorAll("input")].some(i => i.value === %q)`, secret, secret)
	require.False(t, b.evalBool(secretShown), "the secret is gone with its dialog")
	b.do(chromedp.Navigate(base + "/#/tokens"))
	b.do(chromedp.Reload())
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#tokens-table tbody tr")].some(tr => tr.textContent.includes("browser-ci"))`, "token listed after a reload")
	require.False(t, b.evalBool(secretShown), "a reload does not show the secret again")
	require.Contains(t, b.text("#tokens-table"), secret[:12]+"…", "only the prefix is listed")
	b.screenshot("18-tokens")
	b.do(chromedp.Click(chromedp.CSS(`#tokens-table button[data-act="revoke"][data-token="browser-ci"]`)), chromedp.WaitVisible(chromedp.CSS("#token-revoke-dialog")))
	b.do(chromedp.Click(chromedp.CSS(`#token-revoke-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#token-revoke-dialog") === null &&
		[...document.querySelectorAll("#tokens-table tbody tr")].some(tr => tr.textContent.includes("browser-ci") && tr.textContent.includes("Revoked")) &&
		document.querySelector('#tokens-table button[data-act="revoke"][data-token="browser-ci"]') === null`, "token revoked")
	code, _ = bearerMe(t, base, secret)
	require.Equal(t, http.StatusUnauthorized, code, "a revoked token is refused")

	// Audit log: those changes, newest first, with their detail.
	b.menu("audit")
	b.waitJS(15*time.Second, `(() => {
		const rows = [...document.querySelectorAll("#audit-table tbody tr")].map(tr => tr.textContent);
		const at = a => rows.findIndex(r => r.includes(a));
		return rows.some(r => r.includes("user.create") && r.includes("user/viewer") && r.includes("admin")) &&
			rows.some(r => r.includes("token.create") && r.includes("admin")) &&
			at("token.revoke") >= 0 && at("token.revoke") < at("token.create") && at("token.create") < at("user.create");
	})()`, "audit lists the user and token changes, newest first")
	b.waitJS(5*time.Second, `[...document.querySelectorAll("#audit-table tbody tr")].some(tr =>
		tr.textContent.includes("executor.drain") && tr.querySelector(".audit-app").textContent === "demo")`, "an executor's entry shows its app")
	require.False(t, b.evalBool(`document.querySelector("#audit-scope") !== null`), "no scope note for an admin: they read every entry")
	b.do(chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("#audit-table tbody tr")].find(tr => tr.textContent.includes("token.revoke")).querySelector("details summary").click()`))
	b.waitJS(5*time.Second, `(() => { const d = [...document.querySelectorAll("#audit-table details[open] pre.json-pre")];
		return d.some(p => p.textContent.includes('"name": "browser-ci"') && p.textContent.includes("\n")); })()`, "the detail pretty-printed")
	b.do(chromedp.SendKeys(chromedp.CSS("#audit-filter"), "token."))
	b.waitJS(5*time.Second, `(() => { const rows = [...document.querySelectorAll("#audit-table tbody tr")];
		return rows.length === 2 && rows.every(tr => tr.textContent.includes("token.")); })()`, "filtered to the token actions")
	b.screenshot("19-audit")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const f = document.querySelector("#audit-filter"); f.value = ""; f.dispatchEvent(new Event("input")); })()`))
	b.waitJS(5*time.Second, `[...document.querySelectorAll("#audit-table tbody tr")].some(tr => tr.textContent.includes("job.pause") &&
		tr.querySelector(".audit-token") && tr.querySelector(".audit-token").textContent.includes("browser-ci"))`, "the change made with the token names it")
	// The server filters: action prefix, then a time range that ends before everything.
	b.do(chromedp.Evaluate[chromedp.Void](`[["#audit-action", "job.p"], ["#audit-object", "job/1"]].forEach(([s, v]) => {
		const f = document.querySelector(s); f.value = v; f.dispatchEvent(new Event("change")); })`))
	b.waitJS(15*time.Second, `(() => { const rows = [...document.querySelectorAll("#audit-table tbody tr")];
		return rows.length === 1 && rows[0].textContent.includes("job.pause") && rows[0].textContent.includes("demo/hello-every-5s") && rows[0].querySelector('a[title="job/1"]') !== null && document.querySelector("#audit-more").hidden; })()`, "the server's action and object filters")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const f = document.querySelector("#audit-to"); f.value = "2001-01-01T00:00:00"; f.dispatchEvent(new Event("change")); })()`))
	b.waitJS(15*time.Second, `document.querySelectorAll("#audit-table tbody tr").length === 0 && document.querySelector("#audit-table").hidden`, "the server's time filter")
	b.screenshot("19b-audit-filtered")
	b.do(chromedp.Evaluate[chromedp.Void](`["#audit-action", "#audit-object", "#audit-to"].forEach(s => { const f = document.querySelector(s); f.value = ""; f.dispatchEvent(new Event("change")); })`))

	// Paused until an instant: the job page says when it resumes by itself
	// (after the audit steps, which count the job.pause entries).
	pausedJob := api.createJob(map[string]any{"app": "demo", "name": "paused-until", "handler": "demo.hello", "cron": "0 3 * * *"})
	require.Equal(t, http.StatusOK, api.call("POST", fmt.Sprintf("/api/v1/jobs/%d/pause", pausedJob),
		map[string]any{"until": time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)}, nil))
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", base, pausedJob)))
	b.waitJS(15*time.Second, `(() => { const p = document.querySelector("#job-paused-until");
		return p !== null && p.textContent.includes("Resumes by itself at"); })()`, "the job page says when a pause until ends")
	b.screenshot("15d-job-paused-until")
	api.call("DELETE", fmt.Sprintf("/api/v1/jobs/%d", pausedJob), nil, nil)

	// Narrow windows: every page stays one click away (entries that do not
	// fit go into "More"; below 1100 px the menu has a row of its own), the
	// live indicator, UTC toggle, language, user menu and logout stay in
	// view, and nothing scrolls out of sight (TestConsoleLayoutInBrowser
	// checks every width from 800 px).
	for _, width := range []int64{1024, 1200, 1366, 1440} {
		b.do(chromedp.EmulateViewport(width, 768))
		b.waitJS(5*time.Second, `(() => { const nav = document.querySelector("#nav");
			return nav.scrollWidth <= nav.clientWidth + 1; })()`, fmt.Sprintf("the menu fits at %d px", width))
		inView := `(sel => { const r = document.querySelector(sel).getBoundingClientRect();
			return r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= window.innerWidth; })`
		for _, sel := range []string{"#live", "#utc-toggle", "#lang-select", "#user-menu", "#logout"} {
			require.True(t, b.evalBool(inView+"("+strconv.Quote(sel)+")"), "%s in view at %d px", sel, width)
		}
		reachable := b.evalString(`["dashboard", "jobs", "workflows", "runs", "failures", "executors", "alarms", "dead", "calendars", "cluster", "audit", "users", "tokens"].filter(n =>
			!document.querySelector('#nav a[data-nav="' + n + '"], #nav-more-list a[data-nav="' + n + '"], #user-menu a[data-nav="' + n + '"]')).join(",")`)
		require.Empty(t, reachable, "pages with no menu entry at %d px", width)
		b.screenshot(fmt.Sprintf("21-narrow-%d", width))
		if width == 1200 {
			require.True(t, b.evalBool(`!document.querySelector("#nav-more").hidden && document.querySelectorAll("#nav-more-list a").length > 0`), "a More menu at 1200 px")
			b.do(chromedp.Click(chromedp.CSS("#nav-more-toggle")), chromedp.WaitVisible(chromedp.CSS(`#nav-more-list a[data-nav="users"]`)))
			b.screenshot("21-narrow-1200-more")
			b.do(chromedp.Click(chromedp.CSS(`#nav-more-list a[data-nav="users"]`)))
			b.waitJS(15*time.Second, `location.hash === "#/users" && document.querySelector("#users-table") !== null && !document.querySelector("#nav-more").open &&
				document.querySelector("#nav-more-toggle").classList.contains("active")`, "Users opened from More, which shows it is there")
		}
	}
	// At 1440 px the pages used every day are in the bar itself; the
	// admin's pages (audit, users) may wait in "More".
	b.do(chromedp.EmulateViewport(1440, 900))
	b.waitJS(5*time.Second, `["dashboard", "jobs", "workflows", "runs", "failures", "executors", "alarms"].every(n => document.querySelector('#nav a[data-nav="' + n + '"]') !== null)`,
		"the everyday pages in the top bar at 1440 px")

	// Dark mode: chosen in the user menu, or following the system ("System",
	// the default).
	b.do(chromedp.Click(chromedp.CSS("#user-menu > summary")), chromedp.WaitVisible(chromedp.CSS("#theme-select")))
	require.Equal(t, "auto", b.evalString(`document.querySelector("#theme-select").value`), "the theme follows the system by default")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#theme-select"); s.value = "dark"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`))
	b.waitJS(5*time.Second, `document.documentElement.dataset.theme === "dark" && getComputedStyle(document.body).backgroundColor === "rgb(11, 18, 32)"`, "dark theme chosen")
	b.do(chromedp.Navigate(base+"/#/dashboard"), chromedp.Reload())
	b.waitJS(15*time.Second, `document.documentElement.dataset.theme === "dark" && document.querySelector("#chart-runs svg") !== null`, "the choice survives a reload")
	b.screenshot("22-dark-dashboard")
	b.do(chromedp.Evaluate[chromedp.Void](`localStorage.setItem("sj_theme", "auto")`),
		prefersScheme("dark"), chromedp.Reload())
	b.waitJS(15*time.Second, `document.documentElement.dataset.theme === "dark"`, "System follows a dark system setting")
	b.do(prefersScheme("light"))
	b.waitJS(5*time.Second, `document.documentElement.dataset.theme === "light"`, "and its change, live")

	// The job page pages its recent runs, ten at a time (the demo job fires every 5 s).
	b.do(chromedp.Navigate(base + "/#/jobs/1"))
	b.waitJS(60*time.Second, `document.querySelector("#job-runs-page") !== null && !document.querySelector("#job-runs-page").closest(".pager").hidden &&
		document.querySelectorAll("#job-runs tbody tr").length === 10 && document.querySelector("#job-runs-prev").disabled`, "ten runs and a pager")
	newest := b.evalInt(`Math.min(...[...document.querySelectorAll("#job-runs tbody tr")].map(tr => Number(tr.dataset.key)))`)
	b.do(chromedp.Click(chromedp.CSS("#job-runs-next")))
	b.waitJS(15*time.Second, fmt.Sprintf(`(() => { const ids = [...document.querySelectorAll("#job-runs tbody tr")].map(tr => Number(tr.dataset.key));
		return ids.length > 0 && ids.every(i => i < %d) && !document.querySelector("#job-runs-prev").disabled &&
			document.querySelector("#job-runs-page").textContent.startsWith("11–"); })()`, newest), "the next page holds older runs")

	// A viewer sees no edit, trigger or retry button, no Users or Audit
	// entry, and the API refuses the actions anyway.
	b.menu("jobs")
	b.do(chromedp.WaitVisible(chromedp.CSS("#jobs-table")))
	b.do(chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("viewer", "viewer-password-1")
	require.Contains(t, b.text("#who"), "viewer")
	require.False(t, b.evalBool(`document.querySelector('#nav a[data-nav="users"], #nav a[data-nav="audit"], #nav-more-list a[data-nav="users"], #nav-more-list a[data-nav="audit"]') !== null`), "no Users or Audit entry for a viewer")
	require.True(t, b.evalBool(`document.querySelector('#user-menu a[data-nav="tokens"]') !== null`), "a viewer manages their own API tokens")
	b.do(chromedp.Navigate(base + "/#/jobs"))
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#jobs-table tbody tr")].some(tr => tr.textContent.includes("browser-test"))`, "viewer sees jobs")
	require.NotContains(t, b.text("#jobs-table"), "other-app-job", "a viewer limited to demo does not see other apps' jobs")
	require.False(t, b.evalBool(`document.querySelector("#new-job") !== null`), "no New job button for a viewer")
	require.Zero(t, b.evalInt(`document.querySelectorAll("[data-act]").length`), "no row actions for a viewer")
	b.screenshot("15-jobs-viewer")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/jobs/%d", base, jobID)))
	b.waitJS(15*time.Second, `document.querySelector("#job-runs tbody tr") !== null`, "viewer sees the job page")
	require.Zero(t, b.evalInt(`document.querySelectorAll("#job-actions button, #job-actions a").length`), "no job actions for a viewer")
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/runs/%d", base, runID)))
	b.waitJS(15*time.Second, `document.querySelectorAll("#slot-grid .cell.s-succeeded").length === 32`, "viewer sees the run page")
	require.False(t, b.evalBool(`document.querySelector("#run-retry, #run-cancel") !== null`), "no retry or cancel for a viewer")
	b.do(chromedp.Navigate(base + "/#/jobs/new"))
	b.do(chromedp.WaitVisible(chromedp.CSS("#form-forbidden")))
	status := b.evalInt(fmt.Sprintf(`(async () => {
		const csrf = decodeURIComponent((document.cookie.match(/(?:^|;\s*)sj_csrf=([^;]*)/) || [])[1] || "");
		const res = await fetch("/api/v1/jobs/%d/trigger", {method: "POST", headers: {"X-CSRF-Token": csrf}});
		return res.status;
	})()`, jobID))
	require.Equal(t, http.StatusForbidden, status, "the API refuses a viewer's trigger")
	status = b.evalInt(fmt.Sprintf(`(async () => {
		const csrf = decodeURIComponent((document.cookie.match(/(?:^|;\s*)sj_csrf=([^;]*)/) || [])[1] || "");
		const res = await fetch("/api/v1/runs/%d/retry", {method: "POST", headers: {"X-CSRF-Token": csrf}});
		return res.status;
	})()`, runID))
	require.Equal(t, http.StatusForbidden, status, "the API refuses a viewer's retry")
	b.do(chromedp.Navigate(base + "/#/users"))
	b.do(chromedp.WaitVisible(chromedp.CSS("#users-forbidden")))
	status = b.evalInt(`(async () => {
		const csrf = decodeURIComponent((document.cookie.match(/(?:^|;\s*)sj_csrf=([^;]*)/) || [])[1] || "");
		const res = await fetch("/api/v1/users/1", {method: "PUT", headers: {"X-CSRF-Token": csrf, "Content-Type": "application/json"}, body: JSON.stringify({role: "viewer"})});
		return res.status;
	})()`)
	require.Equal(t, http.StatusForbidden, status, "the API refuses a viewer's user change")

	// Every user changes their own password from the top bar: two
	// different new passwords and a wrong current one are field errors in
	// the dialog; a change ends the session, and only the new password
	// signs in again.
	b.do(chromedp.Click(chromedp.CSS("#user-menu > summary")), chromedp.WaitVisible(chromedp.CSS("#change-password")))
	b.do(chromedp.Click(chromedp.CSS("#change-password")), chromedp.WaitVisible(chromedp.CSS("#password-dialog")))
	b.do(chromedp.SendKeys(chromedp.CSS("#pw-old"), "viewer-password-1"), chromedp.SendKeys(chromedp.CSS("#pw-new"), "viewer-password-2"),
		chromedp.SendKeys(chromedp.CSS("#pw-again"), "viewer-password-3"))
	b.do(chromedp.Click(chromedp.CSS(`#password-dialog button[type="submit"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#err-user-again").textContent.includes("differ") &&
		document.querySelector('#password-dialog [data-field="again"]').classList.contains("has-error")`, "mismatch shown on the second field")
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#pw-old").value = ""; document.querySelector("#pw-again").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#pw-old"), "not-my-password"), chromedp.SendKeys(chromedp.CSS("#pw-again"), "viewer-password-2"))
	b.do(chromedp.Click(chromedp.CSS(`#password-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#err-user-old").textContent.includes("wrong password") &&
		document.querySelector("#err-user-again").textContent === ""`, "wrong current password shown on its field")
	b.screenshot("20-password-dialog-error")
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#pw-old").value = ""`), chromedp.SendKeys(chromedp.CSS("#pw-old"), "viewer-password-1"))
	b.do(chromedp.Click(chromedp.CSS(`#password-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#password-dialog") === null && !document.querySelector("#login-view").hidden &&
		document.querySelector("#login-error").textContent.includes("Password changed")`, "signed out with a note after the change")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), "viewer"), chromedp.SendKeys(chromedp.CSS("#login-pass"), "viewer-password-1"),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(15*time.Second, `document.querySelector("#login-error").textContent.includes("Wrong user name or password")`, "the old password is refused")
	// (back to a page a viewer has in the menu, which login waits for)
	b.do(chromedp.Evaluate[chromedp.Void](`history.replaceState(null, "", "#/dashboard"); document.querySelector("#login-user").value = ""; document.querySelector("#login-pass").value = ""`))
	b.login("viewer", "viewer-password-2")
	require.Contains(t, b.text("#who"), "viewer")
}

// prefersScheme makes the page's system colour scheme dark or light.
func prefersScheme(v string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
		return err
	})
}

// --- browser ---------------------------------------------------------------

type browser struct {
	t         *testing.T
	ctx       context.Context
	artifacts string

	mu       sync.Mutex
	messages []chromedp.ConsoleMessage
}

func newBrowser(t *testing.T, chromium, artifacts string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
		chromedp.Env("TZ=UTC", "LANG=en_US.UTF-8"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc() // stops the browser this test started, and waits for it
	})
	b := &browser{t: t, ctx: ctx, artifacts: artifacts}
	require.NoError(t, chromedp.Do(ctx), "start Chromium")
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.messages = append(b.messages, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// checkConsole fails the test on an uncaught exception or a CSP violation,
// and logs the other errors (the 401 of the first /me, the viewer's 403).
func (b *browser) checkConsole() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.messages {
		switch {
		case m.IsException():
			b.t.Errorf("uncaught exception in the console: %s (%s:%d)", m.Text, m.URL, m.Line+1)
		case strings.Contains(m.Text, "Content Security Policy") || strings.Contains(m.Text, "Refused to"):
			b.t.Errorf("CSP violation: %s", m.Text)
		case m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning:
			b.t.Logf("browser console %s: %s", m.Type, m.Text)
		}
	}
}

func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fail("browser step failed: %v", err)
	}
}

// waitJS polls a JavaScript condition until it is true or d passes.
func (b *browser) waitJS(d time.Duration, cond, what string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, d+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(d)))
	if err != nil {
		b.fail("waiting for %s: %v", what, err)
	}
}

func (b *browser) fail(format string, args ...any) {
	b.t.Helper()
	loc, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.href`))
	path := b.shot("FAILED")
	b.t.Fatalf(format+"\n(page %s, screenshot %s)", append(args, loc, path)...)
}

func (b *browser) evalBool(expr string) bool {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise))
	require.NoError(b.t, err, expr)
	return v
}

func (b *browser) evalString(expr string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	require.NoError(b.t, err, expr)
	return v
}

func (b *browser) evalInt(expr string) int {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](expr, chromedp.EvalAwaitPromise))
	require.NoError(b.t, err, expr)
	return v
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		b.fail("text of %s: %v", sel, err)
	}
	return v
}

// setField sets a job form field and fires the input event the form
// listens to, as typing would.
func (b *browser) setField(name, value string) {
	b.t.Helper()
	js, _ := json.Marshal(value)
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.getElementById("f-%s");
		el.value = %s;
		el.dispatchEvent(new Event("input", {bubbles: true}));
	})()`, name, js)))
}

func (b *browser) login(user, password string) {
	b.t.Helper()
	b.do(
		chromedp.WaitVisible(chromedp.CSS("#login-form")),
		chromedp.SendKeys(chromedp.CSS("#login-user"), user),
		chromedp.SendKeys(chromedp.CSS("#login-pass"), password),
		chromedp.Click(chromedp.CSS("#login-submit")),
		chromedp.WaitVisible(chromedp.CSS("#nav a.active")),
	)
}

// screenshot writes a full-page PNG and logs its path.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	// Let the live refresh settle: no page in its first load.
	b.waitJS(10*time.Second, `!document.querySelector(".page.is-loading")`, "page loaded before "+name)
	if p := b.shot(name); p != "" {
		b.t.Logf("screenshot %s", p)
	}
}

func (b *browser) shot(name string) string {
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	path := filepath.Join(b.artifacts, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	return path
}

// artifactsDir is $SHARDJOB_ARTIFACTS/web-console when set (kept after the
// test), else a directory in the test's temporary directory.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "screenshots")
	if root := os.Getenv("SHARDJOB_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, "web-console")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	t.Logf("screenshots go to %s", dir)
	return dir
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// bearerMe calls GET /api/v1/me with a bearer token and returns the status
// and the role the token acts with.
func bearerMe(t *testing.T, base, token string) (int, string) {
	t.Helper()
	var me struct {
		Role string `json:"role"`
	}
	res, err := (&cli.Client{Base: base, Token: token}).Send(context.Background(), http.MethodGet, "/api/v1/me", nil, nil)
	require.NoError(t, err)
	_ = json.Unmarshal(res.Body, &me)
	return res.Status, me.Role
}

// --- API client for setup ----------------------------------------------------

type apiClient struct {
	t   *testing.T
	api *cli.Client
}

// dashboardFromEndpoint checks that the dashboard's figures over 1 hour
// are GET /api/v1/dashboard's for the window the page names (its range
// note carries the answer's end), that the page asked the endpoint for
// them, and that it no longer pages through the runs of the window.
func dashboardFromEndpoint(t *testing.T, b *browser, api *apiClient) {
	t.Helper()
	require.True(t, b.evalBool(`performance.getEntriesByType("resource").some(e => e.name.includes("/api/v1/dashboard?window=1h"))`),
		"the dashboard asks GET /api/v1/dashboard")
	require.False(t, b.evalBool(`performance.getEntriesByType("resource").some(e => /\/api\/v1\/runs\?.*limit=1000/.test(e.name))`),
		"nor pages through 10,000 runs")
	deadline := time.Now().Add(60 * time.Second)
	for {
		var d struct {
			To     time.Time `json:"to"`
			Totals struct {
				Started int64 `json:"started"`
				Failed  int64 `json:"failed"`
			} `json:"totals"`
		}
		require.Equal(t, http.StatusOK, api.call(http.MethodGet, "/api/v1/dashboard?window=1h", nil, &d))
		// The page refreshes every 5 s: wait until it shows this window
		// (or a later one, if a minute was folded meanwhile: ask again).
		to := d.To.UnixMilli()
		b.waitJS(30*time.Second, fmt.Sprintf(`Date.parse(document.querySelector("#dash-range").dataset.to || 0) >= %d`, to), "the dashboard shows the endpoint's window")
		pageTo := b.evalString(`document.querySelector("#dash-range").dataset.to`)
		started := b.evalString(`document.querySelector("#stat-runs .stat-value").textContent`)
		failed := b.evalString(`document.querySelector("#stat-failed .stat-value").textContent`)
		range_ := b.evalString(`document.querySelector("#dash-range").textContent`)
		if pt, err := time.Parse(time.RFC3339, pageTo); err == nil && pt.Equal(d.To) {
			require.Equal(t, fmt.Sprint(d.Totals.Started), strings.ReplaceAll(started, ",", ""), "runs started: the endpoint's")
			require.Equal(t, fmt.Sprint(d.Totals.Failed), strings.ReplaceAll(failed, ",", ""), "failed runs: the endpoint's")
			require.Contains(t, range_, "complete up to", "the page says up to when the figures are complete")
			return
		}
		require.True(t, time.Now().Before(deadline), "the page shows the window ending %q, the endpoint %s", pageTo, d.To)
	}
}

func newAPIClient(t *testing.T, base, user, password string) *apiClient {
	c := &apiClient{t: t, api: &cli.Client{Base: base}}
	require.NoError(t, c.api.Login(context.Background(), user, password))
	return c
}

// call sends a JSON request and decodes the answer into out; an answer
// other than 2xx fails the test.
func (c *apiClient) call(method, path string, body, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(c.t, err)
		rd = bytes.NewReader(b)
	}
	res, err := c.api.Send(context.Background(), method, path, rd, http.Header{"Content-Type": {"application/json"}})
	require.NoError(c.t, err)
	require.Less(c.t, res.Status, 300, "%s %s: %s", method, path, res.Body)
	if out != nil {
		require.NoError(c.t, json.Unmarshal(res.Body, out), string(res.Body))
	}
	return res.Status
}

func (c *apiClient) createJob(spec map[string]any) int64 {
	var j struct {
		ID int64 `json:"id"`
	}
	c.call(http.MethodPost, "/api/v1/jobs", spec, &j)
	return j.ID
}

type jobView struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	State             string `json:"state"`
	DedupScope        string `json:"dedup_scope"`
	UncertainPolicy   string `json:"uncertain_policy"`
	RecordMaxAttempts int    `json:"record_max_attempts"`
}

func (c *apiClient) job(id int64) jobView {
	var j jobView
	c.call(http.MethodGet, fmt.Sprintf("/api/v1/jobs/%d", id), nil, &j)
	return j
}

func (c *apiClient) jobs() []jobView {
	var out struct {
		Jobs []jobView `json:"jobs"`
	}
	c.call(http.MethodGet, "/api/v1/jobs?limit=500", nil, &out)
	return out.Jobs
}

func (c *apiClient) trigger(job int64) int64 {
	var out struct {
		Run struct {
			ID int64 `json:"id"`
		} `json:"run"`
	}
	c.call(http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", job), map[string]any{}, &out)
	return out.Run.ID
}

func (c *apiClient) waitRun(run int64, status string) {
	c.t.Helper()
	testenv.WaitFor(c.t, 30*time.Second, func() (bool, error) {
		var out struct {
			Run struct {
				Status string `json:"status"`
			} `json:"run"`
		}
		c.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", run), nil, &out)
		return out.Run.Status == status, nil
	}, fmt.Sprintf("run %d did not become %s", run, status))
}

// englishFragments are the fixed pieces of the admin's English message
// templates (admin/msg) long enough to be unmistakable: none may show on a
// page in another language.
func englishFragments() []string {
	var out []string
	for _, tmpl := range msg.Catalog {
		for _, part := range regexp.MustCompile(`\{\w+\}`).Split(tmpl, -1) {
			if p := strings.TrimSpace(part); len(p) >= 12 {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// jsStrings is ss as a JavaScript array literal.
func jsStrings(ss []string) string {
	b, _ := json.Marshal(ss)
	return string(b)
}
