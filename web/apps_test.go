package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestAppsInBrowser: the Apps page lists the demo app (its jobs and its
// executor); an admin creates app billing in the dialog, where a refused
// owner shows next to its field, then describes it; a viewer limited to
// billing sees billing only, and neither the New nor the Describe button.
func TestAppsInBrowser(t *testing.T) {
	sa, api, b := consoleSession(t)
	defer b.checkConsole()
	b.menu("apps")
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#apps-table tbody tr")].some(tr =>
		tr.querySelector('[data-app="demo"]') && tr.children[2].textContent === "1/1" && Number(tr.children[1].textContent) > 0)`,
		"the demo app with its jobs and its online executor")

	b.do(chromedp.Click(chromedp.CSS("#new-app")), chromedp.WaitVisible(chromedp.CSS("#app-dialog")))
	b.do(chromedp.SendKeys(chromedp.CSS("#app-name"), "billing"), chromedp.SendKeys(chromedp.CSS("#app-description"), "invoices and settlement"),
		chromedp.SendKeys(chromedp.CSS("#app-owners"), "bill, "+strings.Repeat("x", 129)))
	b.do(chromedp.Click(chromedp.CSS(`#app-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#app-dialog [data-field="owners"]').classList.contains("has-error") &&
		document.querySelector('#app-dialog [data-field="owners"] .field-error').textContent.includes("is not an owner")`, "the owner refused next to its field")
	b.screenshot("a1-app-dialog-error")
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#app-owners").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#app-owners"), "bill finance-oncall@example.com"))
	b.do(chromedp.Click(chromedp.CSS(`#app-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#app-dialog") === null &&
		[...document.querySelectorAll("#apps-table tbody tr")].some(tr => tr.querySelector('[data-app="billing"]') &&
			tr.textContent.includes("invoices and settlement") && tr.querySelectorAll(".chips .app-tag").length === 2)`, "billing created with its owners")

	b.do(chromedp.Click(chromedp.CSS(`button[data-act="edit"][data-app="billing"]`)), chromedp.WaitVisible(chromedp.CSS("#app-dialog")))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#app-description").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#app-description"), "invoices, settlement and dunning"),
		chromedp.SendKeys(chromedp.CSS("#app-max-slots-per-run"), "2000"))
	b.do(chromedp.Click(chromedp.CSS(`#app-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#app-dialog [data-field="max_slots_per_run"]').classList.contains("has-error")`, "a quota out of range refused next to its field")
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#app-max-slots-per-run").value = ""`), chromedp.SendKeys(chromedp.CSS("#app-max-slots-per-run"), "8"))
	b.do(chromedp.Click(chromedp.CSS(`#app-dialog button[type="submit"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#app-dialog") === null &&
		[...document.querySelectorAll("#apps-table tbody tr")].some(tr => tr.textContent.includes("invoices, settlement and dunning") &&
			tr.querySelector(".app-quotas") && tr.querySelector(".app-quotas").textContent === "slots per run ≤ 8")`, "billing described, its quota shown")
	b.screenshot("a2-apps")
	var app struct {
		Version        int64  `json:"version"`
		UpdatedBy      string `json:"updated_by"`
		MaxSlotsPerRun *int64 `json:"max_slots_per_run"`
		MaxJobs        *int64 `json:"max_jobs"`
	}
	api.call(http.MethodGet, "/api/v1/apps/billing", nil, &app)
	require.Equal(t, int64(2), app.Version)
	require.Equal(t, "admin", app.UpdatedBy)
	require.Equal(t, int64(8), *app.MaxSlotsPerRun)
	require.Nil(t, app.MaxJobs, "an empty quota field is no limit")

	require.Less(t, api.call(http.MethodPost, "/api/v1/users", map[string]any{"username": "vic", "password": "billing-viewer-7q", "role": "viewer", "apps": []string{"billing"}}, nil), 300)
	b.do(chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("vic", "billing-viewer-7q")
	b.menu("apps")
	b.waitJS(15*time.Second, `document.querySelectorAll("#apps-table tbody tr").length === 1 &&
		document.querySelector('#apps-table [data-app="billing"]') !== null`, "vic sees billing only")
	require.False(t, b.evalBool(`document.querySelector("#new-app, button[data-act='edit']") !== null`), "no New or Describe button for a viewer")
	_ = sa
}
