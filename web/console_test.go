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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const adminPkg = "github.com/shardjob/shardjob/admin/cmd/shardjob-admin"

var passwordRE = regexp.MustCompile(`with password (\S+)`)

// TestConsoleInBrowser drives the console in headless Chromium against a
// real standalone admin (SQLite, demo executor): login, dashboard, a job
// created through the form with live cron validation, a manual trigger
// watched to the end on the run page, the failures page's retry, a viewer
// who sees no edit buttons and whom the API refuses, and the language
// switch. Screenshots of every main page go to SHARDJOB_ARTIFACTS (or the
// test's temporary directory).
func TestConsoleInBrowser(t *testing.T) {
	chromium := testenv.Chromium(t)
	bin := testenv.BuildBinary(t, adminPkg)
	dataDir := filepath.Join(t.TempDir(), "data")
	port := testenv.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	admin := testenv.StartProcess(t, bin, []string{"standalone", "--data-dir", dataDir, "--http-addr", "127.0.0.1:" + strconv.Itoa(port)}, nil)
	_, err := admin.WaitForLine(timeout(t, 60*time.Second), "standalone mode ready")
	require.NoError(t, err)
	m := passwordRE.FindStringSubmatch(admin.Stdout())
	require.NotNil(t, m, "the first start prints the admin password: %s", admin.Output())
	password := m[1]
	api := newAPIClient(t, base, "admin", password)

	b := newBrowser(t, chromium, artifactsDir(t))
	defer b.checkConsole()

	// Log in.
	b.do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.screenshot("00-login")
	b.login("admin", password)
	require.Contains(t, b.text("#who"), "admin")

	// Dashboard: the demo job fires every 5 s, so the runs chart gets bars
	// and the demo executor counts as online.
	b.waitJS(30*time.Second, `document.querySelectorAll("#chart-runs svg .bar rect").length > 0 &&
		document.querySelector("#stat-executors .stat-value").textContent.trim().startsWith("1") &&
		document.querySelectorAll("#chart-rate svg circle, #chart-rate svg path.line").length > 0`, "dashboard charts drawn")

	// Jobs list.
	b.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="jobs"]`)))
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#jobs-table tbody tr")].some(tr => tr.textContent.includes("hello-every-5s"))`, "demo job listed")
	b.screenshot("02-jobs")

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
	b.do(chromedp.Click(chromedp.CSS(`#slot-grid .cell[data-slot="7"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#slot-panel h4") && document.querySelector("#slot-panel h4").textContent.includes("7")`, "slot detail pinned")
	b.screenshot("06-run-detail")
	b.do(chromedp.Click(chromedp.CSS(`#grid-mode button[data-mode="duration"]`)))
	b.waitJS(5*time.Second, `document.querySelectorAll("#slot-grid .cell.heat").length === 32`, "duration heat")
	b.screenshot("07-run-detail-heat")
	b.do(chromedp.Click(chromedp.CSS(`#grid-mode button[data-mode="status"]`)))

	// The job page lists the run and draws the durations of its runs.
	b.do(chromedp.Click(chromedp.CSS(`#run-actions a[href^="#/jobs/"]`)))
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('#job-runs tbody tr[data-key="%d"]') !== null &&
		document.querySelectorAll("#chart-durations svg rect.dbar").length > 0`, runID), "job page with its run")
	b.screenshot("08-job-detail")

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
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="pause"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#job-actions [data-act="resume"]') !== null && document.querySelector(".page-title .pill-warn") !== null`, "job paused")
	b.do(chromedp.Click(chromedp.CSS(`#job-actions [data-act="resume"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#job-actions [data-act="pause"]') !== null && document.querySelector(".page-title .pill-ok") !== null`, "job resumed")

	// Executors.
	b.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="executors"]`)))
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#executors-table tbody tr")].some(tr => tr.textContent.includes("standalone-demo-executor"))`, "demo executor listed")
	b.screenshot("09-executors")

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
	b.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="failures"]`)))
	retrySel := fmt.Sprintf(`#failures-table button[data-act="retry"][data-run="%d"]`, failedRun)
	b.do(chromedp.WaitVisible(chromedp.CSS(retrySel)))
	b.screenshot("11-failures")
	b.do(chromedp.Click(chromedp.CSS(retrySel)))
	b.waitJS(15*time.Second, `[...document.querySelectorAll(".toast")].some(e => /Retrying 2 slots/.test(e.textContent))`, "retry acknowledged")

	// Runs, alarms and cluster render.
	b.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="runs"]`)))
	b.waitJS(15*time.Second, `document.querySelectorAll("#runs-table tbody tr").length > 3`, "runs listed")
	b.screenshot("12-runs")
	b.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="cluster"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#leader-holder") && document.querySelector("#leader-holder").textContent === "standalone" &&
		document.querySelectorAll("#members-table tbody tr").length === 1`, "cluster page")
	b.screenshot("13-cluster")
	b.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="alarms"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#alarms-table") !== null && !document.querySelector(".page").classList.contains("is-loading")`, "alarms page")

	// The dashboard again, over the last 15 minutes, now with a failure.
	b.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="dashboard"]`)), chromedp.Click(chromedp.CSS(`#dash-window button[data-win="15m"]`)))
	b.waitJS(15*time.Second, `document.querySelectorAll("#chart-runs svg .bar rect.c-fail").length > 0 &&
		document.querySelector("#stat-failed .stat-value").textContent !== "0"`, "dashboard shows the failed run")
	b.screenshot("01-dashboard")

	// Simplified Chinese, kept across a reload.
	b.do(chromedp.SetValue(chromedp.CSS("#lang-select"), "zh-CN"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#lang-select").dispatchEvent(new Event("change"))`))
	b.do(chromedp.Navigate(base + "/#/jobs"))
	b.waitJS(15*time.Second, `document.querySelector('#nav a[data-nav="jobs"]').textContent === "作业" &&
		document.querySelectorAll("#jobs-table tbody tr").length >= 3 && document.documentElement.lang === "zh-CN"`, "console in Chinese after reload")
	require.Contains(t, b.text("#new-job"), "新建作业")
	b.screenshot("14-jobs-zh")
	b.do(chromedp.SetValue(chromedp.CSS("#lang-select"), "en"))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#lang-select").dispatchEvent(new Event("change"))`))
	b.waitJS(5*time.Second, `document.querySelector('#nav a[data-nav="jobs"]').textContent === "Jobs"`, "back to English")

	// Delete the flaky job from the list, with confirmation.
	b.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="jobs"]`)))
	row := fmt.Sprintf(`#jobs-table tr[data-key="%d"]`, flaky)
	// Open the row menu and choose Delete in one step: on a loaded machine a
	// live refresh may land between two separate clicks.
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('%s details.menu') !== null`, row), "the job's row")
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const m = document.querySelector('%s details.menu'); m.open = true;
		m.querySelector('[data-act="delete"]').click(); })()`, row)), chromedp.WaitVisible(chromedp.CSS("#delete-dialog")))
	require.Contains(t, b.text("#delete-dialog"), "demo/flaky")
	b.do(chromedp.Click(chromedp.CSS(`#delete-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, fmt.Sprintf(`document.querySelector('%s') === null && document.querySelector("#delete-dialog") === null`, row), "job deleted")

	// A viewer sees no edit, trigger or retry button, and the API refuses
	// the actions anyway. There is no users API yet: the user is inserted
	// into the standalone database while the admin runs (SQLite WAL).
	createUser(t, filepath.Join(dataDir, "shardjob.db"), "viewer", "viewer-password-1", auth.RoleViewer)
	b.do(chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("viewer", "viewer-password-1")
	require.Contains(t, b.text("#who"), "viewer")
	b.do(chromedp.Navigate(base + "/#/jobs"))
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#jobs-table tbody tr")].some(tr => tr.textContent.includes("browser-test"))`, "viewer sees jobs")
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

// createUser inserts a console user into the standalone SQLite database.
func createUser(t *testing.T, dbPath, name, password, role string) {
	t.Helper()
	ctx := timeout(t, 30*time.Second)
	st, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: dbPath})
	require.NoError(t, err)
	defer st.Close()
	hash, err := auth.HashPassword(password)
	require.NoError(t, err)
	_, err = st.CreateUser(ctx, name, hash, role)
	require.NoError(t, err)
}

// --- API client for setup ----------------------------------------------------

type apiClient struct {
	t     *testing.T
	base  string
	token string
}

func newAPIClient(t *testing.T, base, user, password string) *apiClient {
	c := &apiClient{t: t, base: base}
	var out struct {
		Token string `json:"token"`
	}
	c.call(http.MethodPost, "/api/v1/login", map[string]string{"username": user, "password": password}, &out)
	c.token = out.Token
	return c
}

func (c *apiClient) call(method, path string, body, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(c.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	require.Less(c.t, res.StatusCode, 300, "%s %s: %s", method, path, data)
	if out != nil {
		require.NoError(c.t, json.Unmarshal(data, out), string(data))
	}
	return res.StatusCode
}

func (c *apiClient) createJob(spec map[string]any) int64 {
	var j struct {
		ID int64 `json:"id"`
	}
	c.call(http.MethodPost, "/api/v1/jobs", spec, &j)
	return j.ID
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
