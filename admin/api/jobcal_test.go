package api_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// Jobs on business calendars through the API: which calendars a job may
// use (its app's and the global ones; another app's does not exist for it),
// the field errors, the preview with the firings the calendar removes and
// moves, a calendar in use that cannot be deleted, and an edit of the days
// that plans the job's next firing again.
func TestJobCalendarAPI(t *testing.T) {
	t.Parallel()
	csv, err := os.ReadFile("../calendar/testdata/cn-2026.csv")
	require.NoError(t, err)
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		// Fri 13 Feb 2026, 10:00 in Shanghai.
		e := newEnvWithClock(t, st, clock.NewManual(time.Date(2026, 2, 13, 2, 0, 0, 0, time.UTC)))
		e.user("boss", auth.RoleAdmin)
		e.user("ops", auth.RoleOperator)
		e.user("other", auth.RoleOperator)
		e.limitTo("ops", "billing")
		e.limitTo("other", "search")
		boss, ops, other := e.token("boss"), e.token("ops"), e.token("other")
		calendar := func(tok, app, name string) apitypes.Calendar {
			var c apitypes.Calendar
			require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/calendars", tok,
				apitypes.CalendarSpec{App: app, Name: name, Import: &apitypes.CalendarImport{Format: "csv", Content: string(csv)}}, &c))
			return c
		}
		global, billing, search := calendar(boss, "", "cn"), calendar(ops, "billing", "cn-billing"), calendar(other, "search", "cn-search")

		job := func(name, cron string, calID int64, rule, shift string) map[string]any {
			m := with("name", name)
			m["cron"], m["calendar_id"], m["calendar_rule"], m["calendar_shift"] = cron, calID, rule, shift
			return m
		}
		var j apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, job("daily", "0 9 * * *", global.ID, "business_days_only", ""), &j))
		require.Equal(t, global.ID, j.CalendarID)
		require.Equal(t, "business_days_only", j.CalendarRule)
		require.NotNil(t, j.NextFireAt)
		require.Equal(t, time.Date(2026, 2, 14, 1, 0, 0, 0, time.UTC), j.NextFireAt.UTC(), "Sat 14 Feb is a make-up working day")
		var bd apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, job("month-end", "0 18 BDL * *", billing.ID, "shift", ""), &bd))
		require.Equal(t, "next", bd.CalendarShift, "the default direction")
		require.Equal(t, time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC), bd.NextFireAt.UTC(), "the last working day of February 2026: Sat 28th, a make-up working day")

		for _, tc := range []struct {
			body         map[string]any
			field, words string
		}{
			{job("x", "0 9 * * *", search.ID, "business_days_only", ""), "calendar_id", "does not exist for app billing"},
			{job("x", "0 9 * * *", 99999, "business_days_only", ""), "calendar_id", "does not exist"},
			{job("x", "0 9 * * *", global.ID, "", ""), "calendar_rule", "required with a calendar"},
			{job("x", "0 9 * * *", global.ID, "skip_holidays", "next"), "calendar_shift", "only with the rule"},
			{job("x", "0 9 BD3 * *", 0, "", ""), "cron", "BD3 (a business day) is counted on a business calendar"},
			{job("x", "*/10 * * * *", global.ID, "shift", ""), "calendar_rule", "at most 24 times a day"},
		} {
			for _, path := range []string{"/api/v1/jobs", "/api/v1/jobs/validate"} {
				var bad struct{ Fields map[string]string }
				require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, tc.body, &bad), "%s %v", path, tc.body)
				require.Contains(t, bad.Fields[tc.field], tc.words, "%s: %v", path, bad.Fields)
			}
		}

		// The preview lists the removed firings with their reason.
		type firing struct {
			At          time.Time
			Local       string
			Note        string
			NoteCodes   []apitypes.Message `json:"note_codes"`
			Skipped     bool
			ShiftedFrom *time.Time `json:"shifted_from"`
		}
		var pv struct{ Next []firing }
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", ops, job("p", "0 9 * * *", global.ID, "skip_holidays", ""), &pv))
		require.Equal(t, "2026-02-14 09:00:00 CST", pv.Next[0].Local)
		require.False(t, pv.Next[0].Skipped)
		require.True(t, pv.Next[1].Skipped)
		require.Equal(t, time.Date(2026, 2, 15, 1, 0, 0, 0, time.UTC), pv.Next[1].At)
		require.Equal(t, "skipped: 2026-02-15 is a holiday (Spring Festival) in calendar cn", pv.Next[1].Note)
		require.Equal(t, "run.skipped_holiday_named", pv.Next[1].NoteCodes[0].Code)
		require.Equal(t, "Spring Festival", pv.Next[1].NoteCodes[0].Args["holiday"])
		skipped := 0
		for _, f := range pv.Next {
			if f.Skipped {
				skipped++
			}
		}
		require.Equal(t, 9, skipped, "15-23 Feb")

		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", ops, job("p", "0 9 15 2 *", global.ID, "shift", ""), &pv))
		require.Equal(t, time.Date(2026, 2, 24, 1, 0, 0, 0, time.UTC), pv.Next[0].At)
		require.NotNil(t, pv.Next[0].ShiftedFrom)
		require.Equal(t, time.Date(2026, 2, 15, 1, 0, 0, 0, time.UTC), pv.Next[0].ShiftedFrom.UTC())
		require.Equal(t, "cal.shifted_holiday_named", pv.Next[0].NoteCodes[0].Code)
		require.True(t, strings.HasPrefix(pv.Next[0].Note, "moved from 2026-02-15 09:00 CST to 2026-02-24 09:00 CST"), pv.Next[0].Note)

		// A calendar in use cannot be deleted.
		require.Equal(t, http.StatusConflict, e.call("DELETE", "/api/v1/calendars/"+itoa(billing.ID), ops, nil, nil))

		// Shift previous: Tue 3 March; a new holiday on that day moves the
		// next firing to Mon 2 March, which the edit plans at once.
		var prev apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, job("prev", "0 9 3 3 *", billing.ID, "shift", "previous"), &prev))
		require.Equal(t, time.Date(2026, 3, 3, 1, 0, 0, 0, time.UTC), prev.NextFireAt.UTC())
		edited := apitypes.CalendarSpec{App: "billing", Name: "cn-billing", Revision: billing.Revision,
			Import: &apitypes.CalendarImport{Format: "csv", Content: string(csv) + "2026-03-03,holiday,Office move\n"}}
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/calendars/"+itoa(billing.ID), ops, edited, nil))
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs/"+itoa(prev.ID), ops, nil, &prev))
		require.Equal(t, time.Date(2026, 3, 2, 1, 0, 0, 0, time.UTC), prev.NextFireAt.UTC())

		// A copy into another app may not keep the app's calendar.
		var bad struct{ Fields map[string]string }
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/jobs/"+itoa(prev.ID)+"/clone", boss, map[string]any{"app": "search", "name": "copy"}, &bad))
		require.Contains(t, bad.Fields["calendar_id"], "does not exist for app search")

		// Without a calendar again: the calendar can go.
		for _, id := range []int64{bd.ID, prev.ID} {
			var cur apitypes.Job
			require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs/"+itoa(id), ops, nil, &cur))
			cur.CalendarID, cur.CalendarRule, cur.CalendarShift, cur.Cron = 0, "", "", "0 18 28 * *"
			require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/jobs/"+itoa(id), ops, cur.JobSpec, nil))
		}
		require.Equal(t, http.StatusOK, e.call("DELETE", "/api/v1/calendars/"+itoa(billing.ID), ops, nil, nil))
	})
}
