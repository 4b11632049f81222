package web_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// deadLetter is what the test reads of GET /api/v1/dead.
type deadLetter struct {
	ID          int64   `json:"id"`
	JobID       int64   `json:"job_id"`
	RunID       int64   `json:"run_id"`
	Slot        int     `json:"slot"`
	Token       int64   `json:"token"`
	ErrorClass  string  `json:"error_class"`
	ReplayedBy  string  `json:"replayed_by"`
	ReplayToken *int64  `json:"replay_token"`
	ReplayedAt  *string `json:"replayed_at"`
}

type deadPage struct {
	Dead       []deadLetter `json:"dead"`
	Count      *int64       `json:"count"`
	CountExact *bool        `json:"count_exact"`
}

// TestDeadLettersInBrowser makes dead letters for real on a standalone
// admin (a job whose 3 slots fail their first attempt with retry_max 0,
// one whose 2 slots fail permanently, one whose 101 slots fail every
// attempt), then on the Dead letters page: the first 100 of the 106 are
// listed newest first with the count ("100 shown of 106"), "Load more"
// brings the rest; rows link to their jobs and runs; the class filter and
// the job filter (found by name) narrow the list and stay in the URL, also
// over a reload; "select all" and Replay (confirmed) replay the job's
// three, whose rows then say by whom, and the API shows a new attempt of
// the same run for each slot (which succeeds: the run ends succeeded);
// replaying them again is refused, the dialog naming each refused letter;
// the two permanent failures replayed with params edited in the dialog
// (a malformed JSON object refused there first) succeed, and their run;
// a viewer sees the letters but no Replay button and no selection.
func TestDeadLettersInBrowser(t *testing.T) {
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	doomed := api.createJob(map[string]any{"app": "demo", "name": "doomed", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 3,
		"params": "fail_attempts=1", "retry_max": 0})
	broken := api.createJob(map[string]any{"app": "demo", "name": "broken", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 2,
		"params": "permanent=0,1"})
	wide := api.createJob(map[string]any{"app": "demo", "name": "wide", "handler": "demo.fail", "cron": "0 0 1 1 *", "slots": 101})
	run := api.trigger(doomed)
	other := api.trigger(broken)
	many := api.trigger(wide)
	api.waitRun(run, "failed")
	api.waitRun(other, "failed")
	api.waitRun(many, "failed")
	require.Less(t, api.call(http.MethodPost, "/api/v1/users", map[string]any{"username": "viewer", "password": "viewer-password-1", "role": "viewer"}, nil), 300)

	var all deadPage
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		api.call(http.MethodGet, "/api/v1/dead", nil, &all)
		return all.Count != nil && *all.Count == 106, nil
	}, "106 dead letters")
	require.True(t, *all.CountExact)
	require.Len(t, all.Dead, 100, "a page")
	ofJob := func(job int64) []deadLetter {
		var p deadPage
		api.call(http.MethodGet, "/api/v1/dead?job_id="+strconv.FormatInt(job, 10), nil, &p)
		return p.Dead
	}
	require.Len(t, ofJob(doomed), 3)
	require.Len(t, ofJob(broken), 2)
	for _, d := range ofJob(broken) {
		require.Equal(t, "permanent", d.ErrorClass)
	}

	b := newBrowser(t, testenv.Chromium(t), artifactsDir(t))
	defer b.checkConsole()
	b.do(chromedp.EmulateViewport(1440, 900), chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)
	b.menu("dead")
	rows := `document.querySelectorAll("#dead-table tbody tr")`
	b.waitJS(15*time.Second, rows+`.length === 100 && document.querySelector("#dead-count").textContent === "100 shown of 106 dead letters" && !document.querySelector("#dead-more").hidden`,
		"the first page and the count")
	b.do(chromedp.Click(chromedp.CSS("#dead-more")))
	b.waitJS(15*time.Second, rows+`.length === 106 && document.querySelector("#dead-count").textContent === "106 dead letters" && document.querySelector("#dead-more").hidden`,
		"all 106 after Load more")
	require.True(t, b.evalBool(`(() => { const ids = [...`+rows+`].map(tr => Number(tr.dataset.key)); return ids.every((id, i) => i === 0 || ids[i - 1] > id); })()`), "newest first")
	first := ofJob(doomed)[0]
	require.True(t, b.evalBool(fmt.Sprintf(`(() => { const tr = document.querySelector('#dead-table tr[data-key="%d"]');
		return tr.querySelector("a.dead-job").getAttribute("href") === "#/jobs/%d" && tr.querySelector("a.dead-run").getAttribute("href") === "#/runs/%d" &&
			tr.querySelector(".dead-error span").title.includes("demo.fail"); })()`, first.ID, first.JobID, first.RunID)), "a row links to its job and run, the error on hover")
	require.True(t, b.evalBool(`document.querySelector("#dead-replay") !== null && document.querySelector("#dead-replay").disabled`), "Replay waits for a selection")
	b.screenshot("dead-1-list")

	// The class filter, then the job filter (found by name): in the URL.
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#dead-class"); s.value = "permanent"; s.dispatchEvent(new Event("change")); })()`))
	b.waitJS(15*time.Second, rows+`.length === 2 && document.querySelector("#dead-count").textContent === "2 dead letters" && location.hash.includes("class=permanent")`,
		"the permanent ones")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector("#dead-class"); s.value = ""; s.dispatchEvent(new Event("change")); })()`))
	b.do(chromedp.SendKeys(chromedp.CSS("#dead-job-find"), "doo"))
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#dead-job option")].map(o => o.textContent).join() === "All jobs,demo/doomed"`, "the jobs found by name")
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector("#dead-job"); s.value = "%d"; s.dispatchEvent(new Event("change")); })()`, doomed)))
	b.waitJS(15*time.Second, fmt.Sprintf(rows+`.length === 3 && document.querySelector("#dead-count").textContent === "3 dead letters" && location.hash === "#/dead?job_id=%d"`, doomed),
		"the job's three letters")
	// A reload keeps the filter.
	b.do(chromedp.Reload())
	b.waitJS(15*time.Second, fmt.Sprintf(rows+`.length === 3 && document.querySelector("#dead-job").value === "%d"`, doomed), "the filter from the URL")

	// Select all, Replay, confirm.
	b.do(chromedp.Click(chromedp.CSS("#dead-select-page")))
	b.waitJS(5*time.Second, `document.querySelector("#dead-selection").textContent === "3 selected" && document.querySelectorAll(".dead-check:checked").length === 3 &&
		!document.querySelector("#dead-replay").disabled`, "three selected")
	b.do(chromedp.Click(chromedp.CSS("#dead-replay")), chromedp.WaitVisible(chromedp.CSS("#dead-replay-dialog")))
	require.Contains(t, b.text("#dead-replay-dialog"), "Replay 3 dead letter(s)?")
	b.screenshot("dead-2-confirm")
	b.do(chromedp.Click(chromedp.CSS(`#dead-replay-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `[...document.querySelectorAll(".toast")].some(t => t.textContent.includes("3 dead letter(s) replayed")) && document.querySelector("#dead-replay-dialog") === null`,
		"the replay's toast")
	b.waitJS(15*time.Second, rows+`.length === 3 && [...`+rows+`].every(tr => tr.querySelector(".dead-replayed") !== null && tr.querySelector(".dead-replayed").textContent.includes("by admin"))`,
		"every row says replayed by admin")
	require.Zero(t, b.evalInt(`document.querySelectorAll(".dead-check:checked").length`), "the selection is cleared")

	// The API: a new attempt of the same run per slot, newer than the dead
	// one, which succeeds (fail_attempts=1): the run ends succeeded.
	after := ofJob(doomed)
	require.Len(t, after, 3)
	api.waitRun(run, "succeeded")
	var detail struct {
		Run struct {
			ID int64 `json:"id"`
		} `json:"run"`
		Attempts []struct {
			Token   int64  `json:"token"`
			Slot    int    `json:"slot"`
			Attempt int    `json:"attempt"`
			Status  string `json:"status"`
		} `json:"attempts"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", run), nil, &detail)
	for _, d := range after {
		require.Equal(t, "admin", d.ReplayedBy)
		require.NotNil(t, d.ReplayToken)
		require.Equal(t, run, d.RunID, "the same run")
		found := false
		for _, a := range detail.Attempts {
			if a.Token == *d.ReplayToken {
				found = true
				require.Equal(t, d.Slot, a.Slot)
				require.Equal(t, 2, a.Attempt, "a new attempt of the slot")
				require.Greater(t, a.Token, d.Token)
				require.Equal(t, "succeeded", a.Status)
			}
		}
		require.True(t, found, "the replay's attempt %d is in run %d", *d.ReplayToken, run)
	}

	// Again: refused (replayed already), each letter named; nothing changes.
	b.do(chromedp.Click(chromedp.CSS("#dead-select-page")))
	b.waitJS(5*time.Second, `document.querySelector("#dead-selection").textContent === "3 selected"`, "three selected again")
	b.do(chromedp.Click(chromedp.CSS("#dead-replay")), chromedp.WaitVisible(chromedp.CSS("#dead-replay-dialog")))
	require.Contains(t, b.text("#dead-already"), "3 of them were replayed already")
	b.do(chromedp.Click(chromedp.CSS(`#dead-replay-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `!document.querySelector("#dead-replay-dialog .modal-error").hidden`, "the refusal in the dialog")
	refusal := b.text("#dead-replay-dialog .modal-error")
	require.Contains(t, refusal, "Nothing was replayed: 3 letter(s) refused")
	for _, d := range after {
		require.Contains(t, refusal, fmt.Sprintf("#%d demo/doomed · run %d · slot %d:", d.ID, run, d.Slot))
	}
	require.Contains(t, refusal, "replayed already by admin")
	require.Equal(t, 3, b.evalInt(`document.querySelectorAll("#dead-table tr.dead-refused").length`), "the refused rows are marked")
	b.screenshot("dead-3-refused")
	b.do(chromedp.Click(chromedp.CSS(`#dead-replay-dialog button[data-action="cancel"]`)))
	b.waitJS(5*time.Second, `document.querySelector("#dead-replay-dialog") === null`, "dialog closed")

	// Replay with edited params: the two permanent failures of "broken"
	// ran with "permanent=0,1", shown in the dialog; a broken JSON object
	// is refused in the dialog; "slots=99" (no slot fails) replaces them,
	// the replays succeed and so does the run.
	b.do(chromedp.Navigate(fmt.Sprintf("%s/#/dead?job_id=%d", sa.base, broken)))
	b.waitJS(15*time.Second, rows+`.length === 2`, "broken's two letters")
	b.do(chromedp.Click(chromedp.CSS("#dead-select-page")))
	b.waitJS(5*time.Second, `document.querySelector("#dead-selection").textContent === "2 selected"`, "two selected")
	b.do(chromedp.Click(chromedp.CSS("#dead-replay")), chromedp.WaitVisible(chromedp.CSS("#dead-params")))
	require.Equal(t, "permanent=0,1", b.evalString(`document.querySelector("#dead-params").value`), "the params they ran with")
	b.do(chromedp.SetValue(chromedp.CSS("#dead-params"), `{"slots": 99`), chromedp.Click(chromedp.CSS(`#dead-replay-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `!document.querySelector("#dead-replay-dialog .modal-error").hidden`, "the bad params in the dialog")
	require.Contains(t, b.text("#dead-replay-dialog .modal-error"), "Params start like a JSON object but are not one")
	b.do(chromedp.SetValue(chromedp.CSS("#dead-params"), "slots=99"))
	b.screenshot("dead-4-params")
	b.do(chromedp.Click(chromedp.CSS(`#dead-replay-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `[...document.querySelectorAll(".toast")].some(t => t.textContent.includes("2 dead letter(s) replayed")) && document.querySelector("#dead-replay-dialog") === null`,
		"the edited replay's toast")
	api.waitRun(other, "succeeded")
	var otherDetail struct {
		Attempts []struct {
			Attempt int    `json:"attempt"`
			Status  string `json:"status"`
		} `json:"attempts"`
	}
	api.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", other), nil, &otherDetail)
	replays := 0
	for _, a := range otherDetail.Attempts {
		if a.Attempt == 2 {
			replays++
			require.Equal(t, "succeeded", a.Status, "with permanent=0,1 it would have failed again")
		}
	}
	require.Equal(t, 2, replays, "one new attempt per replayed slot: %+v", otherDetail.Attempts)

	// Dark.
	b.do(chromedp.Evaluate[chromedp.Void](`localStorage.setItem("sj_theme", "dark")`), chromedp.Navigate(sa.base+"/#/dead"), chromedp.Reload())
	b.waitJS(15*time.Second, `document.documentElement.dataset.theme === "dark" && `+rows+`.length === 100`, "the page in dark")
	b.screenshot("dead-5-dark")
	b.do(chromedp.Evaluate[chromedp.Void](`localStorage.setItem("sj_theme", "light")`))

	// A viewer: the letters, no Replay, no selection. (The login waits for
	// an active entry in the top bar: Dead letters may be in "More".)
	b.do(chromedp.Evaluate[chromedp.Void](`history.replaceState(null, "", "#/dashboard")`), chromedp.Click(chromedp.CSS("#logout")))
	b.login("viewer", "viewer-password-1")
	b.menu("dead")
	b.waitJS(15*time.Second, rows+`.length === 100 && document.querySelector("#dead-count").textContent === "100 shown of 106 dead letters"`, "the viewer sees the letters")
	require.True(t, b.evalBool(`document.querySelector("#dead-replay") === null && document.querySelector("#dead-select-page") === null && document.querySelector(".dead-check") === null`),
		"no Replay button nor selection for a viewer")
	b.screenshot("dead-6-viewer")
}
