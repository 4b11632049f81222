package workflowrun_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// TestCronOnACalendar: a workflow whose schedule is on a business calendar
// (Tuesday 2026-03-03 a holiday) fires on working days; the holiday's
// firing is recorded as a skipped run with the holiday named; with the
// rule shift (next), the holiday's firing runs the next working day,
// keyed by the moved instant, with that day as business date.
func TestCronOnACalendar(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, diamond(workflow.Stop))
		cal, err := calendar.New(calendar.Definition{Name: "uk", Entries: []calendar.Entry{
			{Date: calendar.NewDate(2026, 3, 3), Kind: calendar.KindHoliday, Name: "Test Day"}}})
		require.NoError(t, err)
		_, err = st.CreateCalendar(ctx, store.Calendar{App: "fin", Name: "uk", Week: cal.Week().String(), Days: string(cal.ExportCSV()),
			Version: cal.Version(), Holidays: 1})
		require.NoError(t, err)
		mon := time.Date(2026, 3, 2, 18, 0, 0, 0, time.UTC)
		_, err = st.DB().Exec(`UPDATE workflow SET cron_expr = '0 18 * * *', calendar = 'uk', calendar_rule = 'business_days_only', next_fire_at = ? WHERE id = ?`,
			mon.UnixMilli(), f.wf.ID)
		require.NoError(t, err)
		clk := clock.NewManual(mon.Add(300 * time.Millisecond))
		e, err := workflowrun.New(workflowrun.Config{Clock: clk}, st)
		require.NoError(t, err)
		run := func(key string) store.WorkflowRun {
			t.Helper()
			runs, err := st.WorkflowRuns(ctx, f.wf.ID, 0, 20)
			require.NoError(t, err)
			for _, r := range runs {
				if r.RunKey == key {
					return r
				}
			}
			require.Failf(t, "no run", "no run keyed %s among %d", key, len(runs))
			return store.WorkflowRun{}
		}
		next := func() int64 {
			t.Helper()
			wf, err := st.Workflow(ctx, f.wf.ID)
			require.NoError(t, err)
			return wf.NextFireAt.Int64
		}

		n, err := e.Fire(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n, "Monday is a working day")
		require.Equal(t, "2026-03-02", run("2026-03-02T18:00:00.000Z").BusinessDate)
		require.Equal(t, mon.Add(24*time.Hour).UnixMilli(), next(), "the holiday's candidate is the next thing to record")

		clk.Set(mon.Add(24*time.Hour + 300*time.Millisecond))
		n, err = e.Fire(ctx, 1)
		require.NoError(t, err)
		require.Zero(t, n, "nothing runs on the holiday")
		holiday := run("2026-03-03T18:00:00.000Z")
		require.Equal(t, store.RunSkipped, holiday.Status)
		require.Equal(t, msg.RunSkippedHolidayName, holiday.ReasonMsg.Code)
		require.Contains(t, holiday.Reason, "Test Day")
		require.Contains(t, holiday.Reason, "uk")
		require.Equal(t, "2026-03-03", holiday.BusinessDate)
		require.Equal(t, mon.Add(48*time.Hour).UnixMilli(), next())
		n, err = e.Fire(ctx, 1)
		require.NoError(t, err)
		require.Zero(t, n, "fired again: nothing twice")
		require.Equal(t, 2, count(t, st, `SELECT COUNT(*) FROM workflow_run`))

		// Shift next, on Tuesdays at 17:00: the holiday's firing moves to
		// Wednesday 17:00.
		tue := time.Date(2026, 3, 3, 17, 0, 0, 0, time.UTC)
		_, err = st.DB().Exec(`UPDATE workflow SET cron_expr = '0 17 * * TUE', calendar_rule = 'shift', calendar_shift = 'next', next_fire_at = ? WHERE id = ?`,
			tue.UnixMilli(), f.wf.ID)
		require.NoError(t, err)
		clk.Set(tue.Add(300 * time.Millisecond))
		n, err = e.Fire(ctx, 1)
		require.NoError(t, err)
		require.Zero(t, n, "moved to Wednesday")
		require.Equal(t, tue.Add(24*time.Hour).UnixMilli(), next())
		clk.Set(tue.Add(24*time.Hour + 300*time.Millisecond))
		n, err = e.Fire(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		moved := run("2026-03-04T17:00:00.000Z")
		require.Equal(t, store.RunPending, moved.Status)
		require.Equal(t, "2026-03-04", moved.BusinessDate, "the business date is the moved firing's day")
		require.Equal(t, tue.Add(7*24*time.Hour).UnixMilli(), next(), "next Tuesday")

		// A calendar that is gone stops the firing.
		_, err = st.DB().Exec(`UPDATE workflow SET calendar = 'gone', next_fire_at = ? WHERE id = ?`, tue.Add(7*24*time.Hour).UnixMilli(), f.wf.ID)
		require.NoError(t, err)
		clk.Set(tue.Add(7*24*time.Hour + time.Second))
		n, err = e.Fire(ctx, 1)
		require.NoError(t, err)
		require.Zero(t, n)
		wf, err := st.Workflow(ctx, f.wf.ID)
		require.NoError(t, err)
		require.False(t, wf.NextFireAt.Valid, "no calendar: no firing")
	})
}
