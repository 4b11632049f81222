package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/calendar"
)

// TestCalendarsInBrowser drives the Calendars pages in headless Chromium
// against a real standalone admin: the China 2026 calendar (with its
// make-up Saturdays and Sundays) is created through the dialog from the
// CSV fixture, the year view marks every day as the admin's calendar
// package does (the count of working days is computed in Go from the same
// file), a bad date is refused next to the days box with the dialog left
// open, an edit adds a holiday and changes the version, the year turns,
// and the calendar is deleted from the list.
func TestCalendarsInBrowser(t *testing.T) {
	sa, api, b := consoleSession(t)
	defer b.checkConsole()
	base := sa.base

	fixture, err := os.ReadFile(filepath.Join("..", "admin", "calendar", "testdata", "cn-2026.csv"))
	require.NoError(t, err)
	entries, err := calendar.ParseCSV(fixture)
	require.NoError(t, err)
	week, err := calendar.ParseWeek("MON-FRI")
	require.NoError(t, err)
	cal, err := calendar.New(calendar.Definition{Name: "cn", Week: week, Entries: entries})
	require.NoError(t, err)
	working := 0
	for mo := time.January; mo <= time.December; mo++ {
		working += cal.WorkdaysIn(2026, mo)
	}
	holidays, workdays := 0, 0
	for _, e := range entries {
		if e.Kind == calendar.KindHoliday {
			holidays++
		} else {
			workdays++
		}
	}

	// The list starts empty and says how to add one.
	b.menu("calendars")
	b.waitJS(15*time.Second, `location.hash === "#/calendars" && document.querySelector("#calendars-table").hidden &&
		document.querySelector(".page-calendars .empty") !== null`, "empty calendar list")

	// A bad date stays in the dialog, next to the days box.
	b.do(chromedp.Click(chromedp.CSS("#new-calendar")), chromedp.WaitVisible(chromedp.CSS("#calendar-dialog")))
	b.setValue("#cal-app", "demo")
	b.setValue("#cal-name", "cn-2026")
	b.setValue("#cal-week", "MON-FRI")
	b.setValue("#cal-days", "2026-02-30,holiday,Nope")
	b.do(chromedp.Click(chromedp.CSS(`#calendar-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#calendar-dialog [data-error-for="import"]').textContent.includes("2026-02-30") &&
		document.querySelector('#calendar-dialog [data-field="import"]').classList.contains("has-error")`, "bad date refused next to the days")
	b.screenshot("c1-calendar-bad-date")

	// In Chinese the file's line error is Chinese too (its codes translated).
	lang := func(l string) {
		b.do(chromedp.SetValue(chromedp.CSS("#lang-select"), l))
		b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#lang-select").dispatchEvent(new Event("change"))`))
		b.waitJS(5*time.Second, fmt.Sprintf(`document.documentElement.lang === %q`, l), "console in "+l)
	}
	openDialog := func() {
		b.do(chromedp.Click(chromedp.CSS("#new-calendar")), chromedp.WaitVisible(chromedp.CSS("#calendar-dialog")))
		b.setValue("#cal-app", "demo")
		b.setValue("#cal-name", "cn-2026")
		b.setValue("#cal-week", "MON-FRI")
	}
	cancelDialog := func() {
		b.do(chromedp.Click(chromedp.CSS(`#calendar-dialog button[data-action="cancel"]`)))
		b.waitJS(5*time.Second, `document.querySelector("#calendar-dialog") === null`, "the calendar dialog closed")
	}
	cancelDialog()
	lang("zh-CN")
	openDialog()
	b.setValue("#cal-days", "2026-02-30,holiday,Nope")
	b.do(chromedp.Click(chromedp.CSS(`#calendar-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#calendar-dialog [data-error-for="import"]').textContent ===
		'csv 第 1 行：日期 "2026-02-30"：日 30 不在 1-28 范围内（2026 年 2 月）'`, "the line error in Chinese")
	b.setValue("#cal-days", "2026-02-14,workday\n2026-02-14,holiday")
	b.do(chromedp.Click(chromedp.CSS(`#calendar-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `document.querySelector('#calendar-dialog [data-error-for="import"]').textContent ===
		"csv 第 2 行：2026-02-14 在这里是节假日，但在第 1 行是工作日：一个日期不能既是节假日又是工作日"`, "a date both kinds, in Chinese")
	b.screenshot("c1b-calendar-bad-line-zh")
	cancelDialog()
	lang("en")
	openDialog()

	// The real fixture is accepted and opens the year view.
	b.setValue("#cal-days", string(fixture))
	b.do(chromedp.Click(chromedp.CSS(`#calendar-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `/^#\/calendars\/\d+$/.test(location.hash) && document.querySelector("#calendar-dialog") === null &&
		document.querySelectorAll("#cal-months .cal-month").length === 12 && document.querySelector("#cal-year").textContent === "2026"`, "year view of the new calendar")
	kinds := map[string]string{
		"2026-10-01": "holiday", // National Day, a Thursday
		"2026-02-21": "holiday", // a Saturday inside the Spring Festival break
		"2026-02-14": "workday", // a make-up Saturday
		"2026-09-20": "workday", // a make-up Sunday
		"2026-03-07": "off",     // an ordinary Saturday
		"2026-03-09": "work",    // an ordinary Monday
	}
	got := map[string]string{}
	for date := range kinds {
		got[date] = b.evalString(fmt.Sprintf(`document.querySelector('#cal-months td[data-date=%q]').dataset.kind`, date))
	}
	require.Equal(t, kinds, got)
	require.Equal(t, 365, b.evalInt(`document.querySelectorAll("#cal-months td.cal-day").length`))
	require.Equal(t, fmt.Sprintf("%d working days · %d holiday(s) · %d extra workday(s)", working, holidays, workdays), b.text("#cal-year-stats"),
		"the year view counts working days as the admin's calendar package does")
	require.Equal(t, holidays+workdays, b.evalInt(`document.querySelectorAll("#cal-entries tbody tr").length`))
	require.Contains(t, b.evalString(`document.querySelector('#cal-months td[data-date="2026-10-01"]').title`), "National Day")
	b.screenshot("c2-calendar-year")

	// Edit: one more holiday; the day turns red and the version changes.
	id := b.evalString(`location.hash.split("/")[2]`)
	var before struct {
		Version string `json:"version"`
	}
	api.call(http.MethodGet, "/api/v1/calendars/"+id, nil, &before)
	b.do(chromedp.Click(chromedp.CSS("#cal-edit")), chromedp.WaitVisible(chromedp.CSS("#calendar-dialog")))
	require.Contains(t, b.evalString(`document.querySelector("#cal-days").value`), "2026-10-10,workday,National Day make-up day", "the dialog holds the days as CSV")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const el = document.querySelector("#cal-days"); el.value += "\n2026-12-24,holiday,Company day"; el.dispatchEvent(new Event("input")); })()`))
	b.do(chromedp.Click(chromedp.CSS(`#calendar-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#calendar-dialog") === null &&
		document.querySelector('#cal-months td[data-date="2026-12-24"]').dataset.kind === "holiday"`, "edited holiday shown")
	var after struct {
		Version  string `json:"version"`
		Holidays int    `json:"holidays"`
	}
	api.call(http.MethodGet, "/api/v1/calendars/"+id, nil, &after)
	require.NotEqual(t, before.Version, after.Version)
	require.Equal(t, holidays+1, after.Holidays)

	// The next year has no entries: only the base week.
	b.do(chromedp.Click(chromedp.CSS("#cal-next")))
	b.waitJS(15*time.Second, `document.querySelector("#cal-year").textContent === "2027" &&
		document.querySelector('#cal-months td[data-date="2027-10-01"]').dataset.kind === "work" &&
		document.querySelectorAll("#cal-entries tbody tr").length === 0`, "2027 drawn from the base week")

	// Delete from the list.
	b.do(chromedp.Navigate(base + "/#/calendars"))
	b.waitJS(15*time.Second, `[...document.querySelectorAll("#calendars-table tbody tr")].some(tr => tr.textContent.includes("cn-2026") && tr.textContent.includes("demo"))`, "calendar listed")
	b.screenshot("c3-calendars")
	b.do(chromedp.Click(chromedp.CSS(`#calendars-table button[data-act="delete"][data-calendar="cn-2026"]`)), chromedp.WaitVisible(chromedp.CSS("#calendar-delete-dialog")))
	b.do(chromedp.Click(chromedp.CSS(`#calendar-delete-dialog button[data-action="ok"]`)))
	b.waitJS(15*time.Second, `document.querySelector("#calendars-table").hidden`, "calendar deleted")
	var list struct {
		Calendars []json.RawMessage `json:"calendars"`
	}
	api.call(http.MethodGet, "/api/v1/calendars", nil, &list)
	require.Empty(t, list.Calendars)
}

// setValue sets an input or textarea by CSS selector and fires the input
// event, as typing would.
func (b *browser) setValue(sel, value string) {
	b.t.Helper()
	js, _ := json.Marshal(value)
	b.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		el.value = %s;
		el.dispatchEvent(new Event("input", {bubbles: true}));
	})()`, sel, js)))
}
