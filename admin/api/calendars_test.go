package api_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
)

// TestCalendarsAPI: an operator imports the real China 2026 calendar from
// its .ics for their app, reads it back, edits it with the revision read,
// exports it as CSV that imports to the same version; viewers read; others'
// apps do not exist for limited users; global calendars are the admins'.
func TestCalendarsAPI(t *testing.T) {
	t.Parallel()
	ics, err := os.ReadFile("../calendar/testdata/cn-2026.ics")
	require.NoError(t, err)
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("boss", auth.RoleAdmin)
		e.user("ops", auth.RoleOperator)
		e.user("eve", auth.RoleViewer)
		e.user("other", auth.RoleOperator)
		e.limitTo("ops", "billing")
		e.limitTo("eve", "billing")
		e.limitTo("other", "search")
		boss, ops, eve, other := e.token("boss"), e.token("ops"), e.token("eve"), e.token("other")

		spec := apitypes.CalendarSpec{App: "billing", Name: "cn-2026", Description: "Mainland China",
			Import: &apitypes.CalendarImport{Format: "ics", Content: string(ics)}}
		var cal apitypes.Calendar
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/calendars", ops, spec, &cal))
		require.Equal(t, "MON,TUE,WED,THU,FRI", cal.Week, "the base week, Monday to Friday by default")
		require.Equal(t, 33, cal.Holidays)
		require.Equal(t, 6, cal.Workdays)
		require.Len(t, cal.Days, 39)
		require.Contains(t, cal.Days, apitypes.CalendarDay{Date: "2026-02-14", Kind: "workday", Name: cal.Days[indexOf(cal.Days, "2026-02-14")].Name})
		require.Equal(t, int64(1), cal.Revision)
		require.Len(t, cal.Version, 32)
		id := itoa(cal.ID)
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/calendars", ops, spec, nil), "the name is taken in the app")

		// Read: the list (without days), one calendar; limited users of
		// another app do not see it, not even by id.
		var list struct{ Calendars []apitypes.Calendar }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/calendars", eve, nil, &list))
		require.Len(t, list.Calendars, 1)
		require.Empty(t, list.Calendars[0].Days)
		require.Equal(t, 33, list.Calendars[0].Holidays)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/calendars", other, nil, &list))
		require.Empty(t, list.Calendars)
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/calendars/"+id, other, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("DELETE", "/api/v1/calendars/"+id, other, nil, nil))
		require.Equal(t, http.StatusForbidden, e.call("PUT", "/api/v1/calendars/"+id, eve, spec, nil), "viewers read only")

		// Export as CSV; importing it gives the same content (version).
		res := e.do("GET", "/api/v1/calendars/"+id+"/export", eve, "", nil)
		csv := res.Body
		require.Equal(t, http.StatusOK, res.Status)
		require.Contains(t, res.Header.Get("Content-Type"), "text/csv")
		require.Contains(t, string(csv), "2026-02-14,workday")
		var again apitypes.Calendar
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/calendars", ops,
			apitypes.CalendarSpec{App: "billing", Name: "cn-2026-copy", Import: &apitypes.CalendarImport{Format: "csv", Content: string(csv)}}, &again))
		require.Equal(t, cal.Version, again.Version, "the export imports to the same days")

		// Edit with the revision read: one more holiday; a stale revision
		// is refused.
		days := append(append([]apitypes.CalendarDay{}, cal.Days...), apitypes.CalendarDay{Date: "2026-12-31", Kind: "holiday", Name: "year end"})
		edit := apitypes.CalendarSpec{App: "billing", Name: "cn-2026", Days: days, Revision: 1}
		var edited apitypes.Calendar
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/calendars/"+id, ops, edit, &edited))
		require.Equal(t, int64(2), edited.Revision)
		require.Equal(t, 34, edited.Holidays)
		require.NotEqual(t, cal.Version, edited.Version)
		require.Equal(t, "ops", edited.UpdatedBy)
		require.Equal(t, http.StatusConflict, e.call("PUT", "/api/v1/calendars/"+id, ops, edit, nil), "revision 1 is stale")

		// Global calendars: admins only; everyone reads them.
		global := apitypes.CalendarSpec{Name: "weekends", Week: "MON-FRI", Days: []apitypes.CalendarDay{{Date: "2026-01-01", Kind: "holiday"}}}
		var out struct {
			Error  string
			Fields map[string]string
		}
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/calendars", ops, global, &out))
		require.Contains(t, out.Fields["app"], "ask an admin")
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/calendars", boss, global, nil))
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/calendars", other, nil, &list))
		require.Len(t, list.Calendars, 1, "the global calendar is seen by every app")

		// Delete, audited.
		require.Equal(t, http.StatusOK, e.call("DELETE", "/api/v1/calendars/"+itoa(again.ID), ops, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/calendars/"+itoa(again.ID), ops, nil, nil))
		require.Equal(t, []string{"calendar.create", "calendar.update"}, e.auditActions("calendar/"+id))
	})
}

func indexOf(days []apitypes.CalendarDay, date string) int {
	for i, d := range days {
		if d.Date == date {
			return i
		}
	}
	return -1
}

// TestCalendarsRefuseBadInput: every mistake is a 400 naming the field,
// and nothing is stored.
func TestCalendarsRefuseBadInput(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		ops := e.token("ops")
		ics := func(lines ...string) *apitypes.CalendarImport {
			return &apitypes.CalendarImport{Format: "ics", Content: "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VCALENDAR\r\n"}
		}
		cases := []struct {
			name  string
			spec  apitypes.CalendarSpec
			field string
			says  string
		}{
			{"no name", apitypes.CalendarSpec{App: "a"}, "name", "required"},
			{"bad name", apitypes.CalendarSpec{App: "a", Name: "a b"}, "name", "only letters"},
			{"bad app", apitypes.CalendarSpec{App: "a b", Name: "x"}, "app", ""},
			{"bad week", apitypes.CalendarSpec{App: "a", Name: "x", Week: "MON-FUN"}, "week", "MON-FRI"},
			{"bad date", apitypes.CalendarSpec{App: "a", Name: "x", Days: []apitypes.CalendarDay{{Date: "2026-02-30", Kind: "holiday"}}}, "days[0].date", "2026-02-30"},
			{"bad kind", apitypes.CalendarSpec{App: "a", Name: "x", Days: []apitypes.CalendarDay{{Date: "2026-02-03", Kind: "party"}}}, "days", "party"},
			{"holiday and workday", apitypes.CalendarSpec{App: "a", Name: "x", Days: []apitypes.CalendarDay{
				{Date: "2026-02-14", Kind: "holiday", Name: "Valentine"}, {Date: "2026-02-14", Kind: "workday"}}}, "days", "both a holiday"},
			{"days and import", apitypes.CalendarSpec{App: "a", Name: "x", Days: []apitypes.CalendarDay{{Date: "2026-02-03", Kind: "holiday"}},
				Import: &apitypes.CalendarImport{Format: "csv", Content: "2026-02-04,holiday"}}, "import", "not both"},
			{"unknown format", apitypes.CalendarSpec{App: "a", Name: "x", Import: &apitypes.CalendarImport{Format: "xlsx"}}, "import", "ics or csv"},
			{"recurrence rule", apitypes.CalendarSpec{App: "a", Name: "x", Import: ics("BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260101",
				"RRULE:FREQ=YEARLY", "SUMMARY:New Year", "END:VEVENT")}, "import", "RRULE"},
			{"csv line", apitypes.CalendarSpec{App: "a", Name: "x", Import: &apitypes.CalendarImport{Format: "csv", Content: "2026-01-01,holiday\n2026-13-01,holiday\n"}}, "import", "line 2"},
		}
		for _, c := range cases {
			var out struct {
				Error  string
				Fields map[string]string
			}
			require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/calendars", ops, c.spec, &out), c.name)
			require.Contains(t, out.Fields, c.field, "%s: %+v", c.name, out)
			require.Contains(t, out.Fields[c.field], c.says, c.name)
		}
		var list struct{ Calendars []apitypes.Calendar }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/calendars", ops, nil, &list))
		require.Empty(t, list.Calendars, "nothing stored")
	})
}
