package web_test

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// contrastJS measures the contrast of every visible text of a page
// (testdata/contrast.js: WCAG AA, the background found through the
// ancestors).
//
//go:embed testdata/contrast.js
var contrastJS string

// TestConsoleLayoutInBrowser checks every console page the way a person
// sees it, in one browser against one standalone admin with content (a job
// with a partially failed run and its alarms, a succeeded run, a workflow
// run, a calendar, a second user, an API token):
//
//   - contrast: every visible text of every page (and of the login page, a
//     dialog, the user menu and a run's slot grid in duration heat, with a
//     legend swatch of each heat step), in the light and the dark theme, with the
//     rows, buttons, links and menu entries hovered (forced through the
//     DevTools protocol) and not, meets WCAG AA (4.5:1; 3:1 for large text);
//   - navigation: after a fresh load at every width from 800 to 1920 px in
//     steps of 80 (and right after the login), every menu entry is in the top
//     bar, unclipped and in the window, or in the "More" menu, which is in
//     the window; so are the live indicator, UTC, language, user menu and
//     logout;
//   - narrow: at 900 px no page scrolls sideways, and every link, button and
//     field of every page is in the window, or in a container that scrolls
//     it into view where a click reaches it (a drawing, a log); a table is
//     no such container: what is on its rows must be in view as they are.
func TestConsoleLayoutInBrowser(t *testing.T) {
	chromium := testenv.Chromium(t)
	sa := startStandalone(t)
	base := sa.base
	api := newAPIClient(t, base, "admin", sa.password)
	flaky := api.createJob(map[string]any{"app": "demo", "name": "flaky", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 8, "params": "slots=1,3",
		"description": "fails two slots on purpose"})
	failed := api.trigger(flaky)
	nightly := api.createJob(map[string]any{"app": "demo", "name": "nightly", "handler": "demo.sleep", "cron": "30 2 * * *", "time_zone": "Europe/Berlin", "slots": 16, "params": "ms=50"})
	done := api.trigger(nightly)
	api.createJob(map[string]any{"app": "demo", "name": "paused-one", "handler": "demo.hello", "cron": "0 3 * * *", "enabled": false})
	wf := api.createWorkflow(map[string]any{"app": "demo", "name": "eod", "cron": "0 18 * * MON-FRI", "time_zone": "Asia/Shanghai",
		"nodes": []map[string]any{{"key": "extract", "handler": "demo.hello"}, {"key": "load", "job": map[string]any{"name": "nightly"}},
			{"key": "report", "handler": "demo.hello", "start": "all_done"}},
		"edges": []map[string]any{{"from": "extract", "to": "load"}, {"from": "load", "to": "report"}}})
	require.Less(t, api.call(http.MethodPost, fmt.Sprintf("/api/v1/workflows/%d/trigger", wf), map[string]any{"business_date": "2026-12-01"}, nil), 300)
	csv, err := os.ReadFile(filepath.Join("..", "admin", "calendar", "testdata", "cn-2026.csv"))
	require.NoError(t, err)
	var cal struct {
		ID int64 `json:"id"`
	}
	require.Less(t, api.call(http.MethodPost, "/api/v1/calendars",
		map[string]any{"app": "demo", "name": "cn-2026", "week": "MON-FRI", "import": map[string]any{"format": "csv", "content": string(csv)}}, &cal), 300)
	require.Less(t, api.call(http.MethodPost, "/api/v1/users", map[string]any{"username": "viewer", "password": "viewer-password-1", "role": "viewer"}, nil), 300)
	require.Less(t, api.call(http.MethodPost, "/api/v1/tokens", map[string]any{"name": "ci", "role": "operator"}, nil), 300)
	api.waitRun(failed, "partially_failed")
	api.waitRun(done, "succeeded")
	pages := []string{"dashboard", "jobs", fmt.Sprintf("jobs/%d", flaky), "jobs/new", fmt.Sprintf("jobs/%d/edit", nightly), "runs",
		fmt.Sprintf("runs/%d", failed), fmt.Sprintf("runs/%d", done), "failures", "dead", "executors", "alarms", "workflows", fmt.Sprintf("workflows/%d", wf),
		"workflows/new", fmt.Sprintf("workflows/%d/edit", wf), "calendars", fmt.Sprintf("calendars/%d", cal.ID), "cluster", "audit", "users", "tokens", "apps", "queue"}

	b := newBrowser(t, chromium, artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	var problems []string
	count := 0
	measure := func(theme, page string, hover bool) {
		r := b.contrast()
		count += r.Count
		for _, f := range r.Failures {
			problems = append(problems, fmt.Sprintf("%s %s hover=%v: %q %s %s on %s = %.2f < %v", theme, page, hover, f.Text, f.Where, f.Fg, f.Bg, f.Ratio, f.Need))
		}
	}
	for _, theme := range []string{"dark", "light"} {
		b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("sj_theme", %q)`, theme)), chromedp.Reload())
		b.waitJS(15*time.Second, fmt.Sprintf(`document.documentElement.dataset.theme === %q && document.querySelector("#login-form") !== null`, theme), "login page "+theme)
		measure(theme, "login", false)
	}
	b.login("admin", sa.password)
	b.waitLoaded("light")
	assert.Empty(t, b.evalString(navProblemsJS), "the menu right after the login at 1280 px")

	// Contrast, light and dark, hovered and not.
	for _, theme := range []string{"light", "dark"} {
		b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("sj_theme", %q)`, theme)))
		for _, p := range pages {
			b.open(base, p, theme)
			for _, hover := range []bool{false, true} {
				if hover {
					b.do(forceHover(true))
				}
				measure(theme, p, hover)
			}
		}
		// The succeeded run's slot grid in duration heat: its cells, and the
		// legend's swatch of every step with text in the step's colours (so
		// every step is measured whatever the slots' durations).
		b.open(base, fmt.Sprintf("runs/%d", done), theme)
		b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#grid-mode [data-mode="duration"]').click()`))
		b.waitJS(5*time.Second, `document.querySelectorAll("#slot-grid .cell.heat:is(.heat-0, .heat-1, .heat-2, .heat-3, .heat-4)").length === 16 &&
			document.querySelectorAll("#heat-steps .heat-step").length === 5`, "the slot grid in duration heat, "+theme)
		measure(theme, "run duration heat", false)
		// A dialog, and the user menu open over the page.
		b.open(base, fmt.Sprintf("jobs/%d", flaky), theme)
		b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#job-actions [data-act="trigger"]').click()`), chromedp.WaitVisible(chromedp.CSS("#trigger-dialog")),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("#user-menu").open = true`), chromedp.WaitVisible(chromedp.CSS("#theme-select")))
		measure(theme, "trigger dialog and user menu", false)
	}
	assert.Zero(t, count, "texts below WCAG AA contrast (%d; examples, at most 6 a page):\n%s", count, strings.Join(problems, "\n"))
	b.do(chromedp.Evaluate[chromedp.Void](`localStorage.setItem("sj_theme", "light")`))

	// Navigation at every width, after a fresh load.
	var clipped []string
	for w := int64(800); w <= 1920; w += 80 {
		b.do(chromedp.EmulateViewport(w, 900), chromedp.Reload())
		b.waitLoaded("light")
		// The menu is fitted in an animation frame after the top bar's texts
		// arrive (watchNav): give it up to 3 s to settle, then take its state.
		// A menu that stays clipped without a click still fails.
		s := b.evalString(navProblemsJS)
		for deadline := time.Now().Add(3 * time.Second); s != "" && time.Now().Before(deadline); {
			s = b.evalString(navProblemsJS) // each evaluation waits two frames
		}
		if s != "" {
			clipped = append(clipped, fmt.Sprintf("%d px: %s", w, s))
		}
	}
	assert.Empty(t, clipped, "the menu after a fresh load")

	// Narrow: every action of every page within reach at 900 px.
	b.do(chromedp.EmulateViewport(900, 900))
	var narrow []string
	for _, p := range pages {
		b.open(base, p, "light")
		if s := b.evalString(actionProblemsJS); s != "" {
			narrow = append(narrow, p+": "+s)
		}
	}
	b.screenshot("layout-900-last")
	assert.Empty(t, narrow, "actions out of reach at 900 px")
}

// open loads page afresh in theme and waits until it is drawn.
func (b *browser) open(base, page, theme string) {
	b.t.Helper()
	b.do(chromedp.Navigate(base+"/#/"+page), chromedp.Reload())
	b.waitLoaded(theme)
}

// waitLoaded waits for the current page's first load in theme, and for its
// fonts.
func (b *browser) waitLoaded(theme string) {
	b.t.Helper()
	b.waitJS(15*time.Second, fmt.Sprintf(`document.documentElement.dataset.theme === %q && document.querySelector(".page") !== null &&
		!document.querySelector(".page").classList.contains("is-loading") && document.fonts.status === "loaded"`, theme), "page drawn in "+theme)
}

type contrastReport struct {
	Count    int `json:"count"`
	Checked  int `json:"checked"`
	Failures []struct {
		Text  string  `json:"text"`
		Where string  `json:"where"`
		Fg    string  `json:"fg"`
		Bg    string  `json:"bg"`
		Ratio float64 `json:"ratio"`
		Need  float64 `json:"need"`
	} `json:"failures"`
}

// contrast measures the page's texts (testdata/contrast.js), at most six
// failures described.
func (b *browser) contrast() contrastReport {
	b.t.Helper()
	r, err := chromedp.Run(b.ctx, chromedp.Evaluate[contrastReport]("("+contrastJS+")(6)"))
	require.NoError(b.t, err)
	require.Positive(b.t, r.Checked, "texts measured")
	return r
}

// hoverable is what the console styles on :hover.
const hoverable = "tbody tr, .list-row, .menu-item, .btn, .nav-link, .chip, .segmented button, .icon-btn, .link-btn, a, .dag-node"

// forceHover forces (or ends) the :hover state of every hoverable element
// of the page through the DevTools protocol, as if the pointer were on
// each of them.
func forceHover(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		doc, err := cdp.Call(ctx, t, dom.GetDocument, dom.GetDocumentParams{})
		if err != nil {
			return err
		}
		nodes, err := cdp.Call(ctx, t, dom.QuerySelectorAll, dom.QuerySelectorAllParams{NodeID: doc.Root.NodeID, Selector: hoverable})
		if err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, t, css.Enable, cdp.Empty{}); err != nil {
			return err
		}
		states := []string{}
		if on {
			states = []string{"hover"}
		}
		forced := 0
		for _, id := range nodes.NodeIDs {
			// A node the page redrew meanwhile is gone: its successor is
			// measured unhovered, and hovered on the next page load.
			if _, err := cdp.Call(ctx, t, css.ForcePseudoState, css.ForcePseudoStateParams{NodeID: id, ForcedPseudoClasses: states}); err == nil {
				forced++
			}
		}
		if forced == 0 && len(nodes.NodeIDs) > 0 {
			return fmt.Errorf("no :hover forced on %d elements", len(nodes.NodeIDs))
		}
		return nil
	})
}

// settled waits for the fonts and two frames (a resize observer's work),
// then runs the function body.
func settled(body string) string {
	return `(async () => { await document.fonts.ready; await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));` + body + `})()`
}

// navProblemsJS names each menu entry neither in the top bar (unclipped,
// in the window) nor in a "More" menu in the window, and each top bar
// control out of the window; empty when there is none.
var navProblemsJS = settled(`
	const vw = document.documentElement.clientWidth, bar = document.querySelector("#nav").getBoundingClientRect();
	const inWindow = r => r.width > 0 && r.height > 0 && r.left >= -0.5 && r.right <= vw + 0.5;
	const more = document.querySelector("#nav-more");
	const moreOK = !more.hidden && inWindow(more.getBoundingClientRect());
	const bad = [];
	for (const n of ["dashboard", "jobs", "workflows", "runs", "failures", "dead", "executors", "alarms", "calendars", "cluster", "audit", "users"]) {
		const a = document.querySelector('#nav a[data-nav="' + n + '"]');
		if (a) {
			const r = a.getBoundingClientRect();
			if (!inWindow(r) || r.left < bar.left - 0.5 || r.right > bar.right + 0.5) bad.push(n + " clipped (" + Math.round(r.left) + "–" + Math.round(r.right) + " in a bar of " + Math.round(bar.left) + "–" + Math.round(bar.right) + ")");
		} else if (!document.querySelector('#nav-more-list a[data-nav="' + n + '"]')) {
			bad.push(n + " in no menu");
		} else if (!moreOK) {
			bad.push(n + " in a More menu out of sight");
		}
	}
	for (const sel of ["#live", "#utc-toggle", "#lang-select", "#user-menu", "#logout"]) {
		if (!inWindow(document.querySelector(sel).getBoundingClientRect())) bad.push(sel + " out of the window");
	}
	return bad.join(", ");`)

// actionProblemsJS names the links, buttons and fields of the page that a
// click cannot reach at the window's width: outside the window, and not in
// a container (other than a table's) that scrolls them into view; and says
// so when the page itself scrolls sideways.
var actionProblemsJS = settled(`
	const vw = document.documentElement.clientWidth, bad = [];
	if (document.documentElement.scrollWidth > vw + 1) bad.push("the page is " + document.documentElement.scrollWidth + " px wide");
	const visible = el => el.checkVisibility({ visibilityProperty: true }) && el.getBoundingClientRect().width > 0;
	const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.dataset.act ? "[data-act=" + el.dataset.act + "]" : "") +
		" " + JSON.stringify((el.textContent || el.value || el.title || "").trim().slice(0, 30));
	const els = [...document.querySelectorAll("#view a[href], #view button, #view summary, #view select, #view input:not([type=hidden]), #view textarea")].filter(visible);
	for (const el of els) {
		let r = el.getBoundingClientRect();
		if (r.left >= -0.5 && r.right <= vw + 0.5) continue;
		let c = el.parentElement;
		for (; c && c !== document.body; c = c.parentElement) {
			const o = getComputedStyle(c).overflowX;
			if ((o === "auto" || o === "scroll") && c.scrollWidth > c.clientWidth) break;
		}
		let ok = false;
		if (c && c !== document.body && !c.matches(".table-wrap")) {
			el.scrollIntoView({ block: "nearest", inline: "nearest" });
			r = el.getBoundingClientRect();
			const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
			ok = r.left >= -0.5 && r.right <= vw + 0.5 && hit !== null && (hit === el || el.contains(hit));
			c.scrollLeft = 0;
		}
		if (!ok) bad.push(name(el) + " at " + Math.round(r.left) + "–" + Math.round(r.right));
	}
	window.scrollTo(0, 0);
	return bad.length ? bad.length + " out of reach: " + bad.slice(0, 8).join("; ") : "";`)
