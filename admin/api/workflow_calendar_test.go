package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestWorkflowOnACalendar: a workflow's cron on its calendar takes a job's
// calendar rule and shift (business_days_only by default), may count
// business days (BD3), and its next firing is on the calendar: the
// holiday's candidate first, which the leader records as skipped. A rule
// without a calendar, a business day without one, and a bad shift are
// 400s naming the field.
func TestWorkflowOnACalendar(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		// Monday 2026-03-02 20:00 UTC; Tuesday 2026-03-03 is a holiday.
		e := newEnvWithClock(t, st, clock.NewManual(time.Date(2026, 3, 2, 20, 0, 0, 0, time.UTC)))
		ops, report := e.billingOperator()
		cal, err := calendar.New(calendar.Definition{Name: "uk", Entries: []calendar.Entry{
			{Date: calendar.NewDate(2026, 3, 3), Kind: calendar.KindHoliday, Name: "Test Day"}}})
		require.NoError(t, err)
		_, err = st.CreateCalendar(context.Background(), store.Calendar{App: "billing", Name: "uk", Week: cal.Week().String(),
			Days: string(cal.ExportCSV()), Version: cal.Version(), Holidays: 1})
		require.NoError(t, err)
		spec := func(f func(s *apitypes.WorkflowSpec)) apitypes.WorkflowSpec {
			s := settlementSpec(report)
			s.Nodes[1].Job = &apitypes.WorkflowJobRef{Name: "load-trades"}
			s.TimeZone, s.Cron = "UTC", "0 18 * * *"
			f(&s)
			return s
		}
		for _, c := range []struct {
			name, field, says string
			edit              func(s *apitypes.WorkflowSpec)
		}{
			{"a rule without a calendar", "calendar_rule", "", func(s *apitypes.WorkflowSpec) { s.CalendarRule = "skip_holidays" }},
			{"a business day without a calendar", "cron", "BD3", func(s *apitypes.WorkflowSpec) { s.Cron = "0 18 BD3 * *" }},
			{"a shift without the rule shift", "calendar_shift", "", func(s *apitypes.WorkflowSpec) {
				s.Calendar, s.CalendarRule, s.CalendarShift = "uk", "skip_holidays", "next"
			}},
			{"a bad rule", "calendar_rule", "", func(s *apitypes.WorkflowSpec) { s.Calendar, s.CalendarRule = "uk", "sometimes" }},
		} {
			var out errorAnswer
			require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/workflows", ops, spec(c.edit), &out), c.name)
			require.Contains(t, out.Fields, c.field, "%s: %+v", c.name, out)
			require.Contains(t, out.Fields[c.field], c.says, c.name)
		}

		var saved apitypes.Workflow
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows", ops, spec(func(s *apitypes.WorkflowSpec) { s.Calendar = "uk" }), &saved))
		require.Equal(t, "business_days_only", saved.CalendarRule, "the default rule with a calendar")
		require.Equal(t, time.Date(2026, 3, 3, 18, 0, 0, 0, time.UTC), saved.NextFireAt.UTC(), "the holiday's candidate, to be recorded as skipped")

		var shifted apitypes.Workflow
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows", ops, spec(func(s *apitypes.WorkflowSpec) {
			s.Name, s.Calendar, s.CalendarRule, s.Cron = "bd3", "uk", "shift", "0 18 BD3 * *"
		}), &shifted))
		require.Equal(t, "next", shifted.CalendarShift, "the default shift")
		// The third working day of March 2026: Mon 2, (Tue 3 a holiday), Wed 4, Thu 5.
		require.Equal(t, time.Date(2026, 3, 5, 18, 0, 0, 0, time.UTC), shifted.NextFireAt.UTC())
	})
}
