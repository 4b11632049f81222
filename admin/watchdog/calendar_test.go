package watchdog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/watchdog"
)

// TestGapAuditOnCalendars: jobs on the China 2026 calendar are audited by
// the rows the leader writes for them — a run or a skipped run for each
// day of a working-days-only job across the Spring Festival (12 days), the
// moved firing (keyed by its new instant) and the skipped duplicate of a
// shift job — so complete histories raise nothing, a missing holiday skip
// or a missing moved firing (found from its candidate before the window's
// start) is a gap, and an edit of the calendar inside the window restarts
// the window at the edit.
func TestGapAuditOnCalendars(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cal := storetest.CreateCalendar(t, st, "cn", storetest.ChinaCSV(t))
		built, err := cal.Build()
		require.NoError(t, err)
		created := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
		_, err = st.DB().Exec(`UPDATE business_calendar SET updated_at = ? WHERE id = ?`, created.UnixMilli(), cal.ID)
		require.NoError(t, err)
		cst := time.FixedZone("CST", 8*3600)
		at := func(day int) int64 { return time.Date(2026, 2, day, 9, 0, 0, 0, cst).UnixMilli() }
		mk := func(name, cron, rule string) int64 {
			v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: name, Handler: "h", Cron: cron,
				TimeZone: "Asia/Shanghai", CalendarID: cal.ID, CalendarRule: rule}}, created)
			require.NoError(t, err)
			v, _, err = jobdef.WithCalendar(v, built, created)
			require.NoError(t, err)
			return createJobAt(t, st, v.Job, created)
		}
		insert := func(job int64, ms int64, status string) {
			r := store.NewRun{JobID: job, ScheduledAt: ms, TriggerKind: store.TriggerCron, Status: status, SlotCount: 1, CalendarID: cal.ID, CalendarVersion: cal.Version}
			_, _, err := st.InsertRun(ctx, 1, r)
			require.NoError(t, err)
		}
		daily, holey := mk("daily", "0 9 * * *", "business_days_only"), mk("holey", "0 9 * * *", "business_days_only")
		shift, lost := mk("shift", "0 9 15,16 2 *", "shift"), mk("lost", "0 9 15,16 2 *", "shift")
		for day := 13; day <= 24; day++ {
			status := store.RunPending
			if day >= 15 && day <= 23 { // the Spring Festival break: skipped
				status = store.RunSkipped
			}
			insert(daily, at(day), status)
			if day != 18 {
				insert(holey, at(day), status)
			}
		}
		// Shift: 15 Feb moves to Tue 24 Feb; 16 Feb, moved there too, is a
		// skipped duplicate. "lost" lacks its moved firing.
		insert(shift, at(24), store.RunPending)
		insert(shift, at(16), store.RunSkipped)
		insert(lost, at(16), store.RunSkipped)

		w, err := watchdog.New(watchdog.Config{ID: "r"}, st)
		require.NoError(t, err)
		from, to := time.Date(2026, 2, 13, 0, 0, 0, 0, cst), time.Date(2026, 2, 25, 0, 0, 0, 0, cst)
		n, err := w.AuditGaps(ctx, from, to)
		require.NoError(t, err)
		require.Equal(t, 2, n, "holey and lost")
		alarms, err := st.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		byJob := map[int64]string{}
		for _, a := range alarms {
			byJob[a.JobID.Int64] = a.Message
		}
		require.Len(t, byJob, 2)
		require.Contains(t, byJob[holey], "1 of 12 firings")
		require.Contains(t, byJob[lost], "1 of 2 firings")

		// From 17 Feb, after both candidates: the moved firing is still
		// expected (found by looking back), and missing for "lost".
		n, err = w.AuditGaps(ctx, time.Date(2026, 2, 17, 0, 0, 0, 0, cst), to)
		require.NoError(t, err)
		require.Equal(t, 2, n, "holey (18 Feb) and lost; not shift")

		// A calendar edit on 20 Feb: the firings before it are not expected
		// any more (the old version decided them). The rows of the whole
		// window still count, as for a job edited inside the window, so
		// the audit claims no gap it cannot be sure of: none here.
		_, err = st.DB().Exec(`UPDATE business_calendar SET updated_at = ? WHERE id = ?`, time.Date(2026, 2, 20, 12, 0, 0, 0, cst).UnixMilli(), cal.ID)
		require.NoError(t, err)
		n, err = w.AuditGaps(ctx, from.Add(24*time.Hour), to)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

// TestIncrementalAuditOnCalendars: the incremental audit expects the same
// rows of calendar jobs as the window audit above — across the Spring
// Festival, the holiday skips of a working-days-only job and the moved
// firing and skipped duplicate of a shift job — and moves a shift job's
// cursor to its next candidate a year later.
func TestIncrementalAuditOnCalendars(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cal := storetest.CreateCalendar(t, st, "cn", storetest.ChinaCSV(t))
		built, err := cal.Build()
		require.NoError(t, err)
		created := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
		_, err = st.DB().Exec(`UPDATE business_calendar SET updated_at = ? WHERE id = ?`, created.UnixMilli(), cal.ID)
		require.NoError(t, err)
		cst := time.FixedZone("CST", 8*3600)
		from, to := time.Date(2026, 2, 13, 0, 0, 0, 0, cst), time.Date(2026, 2, 25, 0, 0, 0, 0, cst)
		at := func(day int) int64 { return time.Date(2026, 2, day, 9, 0, 0, 0, cst).UnixMilli() }
		mk := func(name, cron, rule string) int64 {
			v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: name, Handler: "h", Cron: cron,
				TimeZone: "Asia/Shanghai", CalendarID: cal.ID, CalendarRule: rule}}, created)
			require.NoError(t, err)
			v, _, err = jobdef.WithCalendar(v, built, created)
			require.NoError(t, err)
			id := createJobAt(t, st, v.Job, created)
			setCursor(t, st, "job_audit", "job_id", id, from)
			return id
		}
		insert := func(job int64, ms int64, status string) {
			r := store.NewRun{JobID: job, ScheduledAt: ms, TriggerKind: store.TriggerCron, Status: status, SlotCount: 1, CalendarID: cal.ID, CalendarVersion: cal.Version}
			_, _, err := st.InsertRun(ctx, 1, r)
			require.NoError(t, err)
		}
		daily, holey := mk("daily", "0 9 * * *", "business_days_only"), mk("holey", "0 9 * * *", "business_days_only")
		shift, lost := mk("shift", "0 9 15,16 2 *", "shift"), mk("lost", "0 9 15,16 2 *", "shift")
		for day := 13; day <= 24; day++ {
			status := store.RunPending
			if day >= 15 && day <= 23 {
				status = store.RunSkipped
			}
			insert(daily, at(day), status)
			if day != 18 {
				insert(holey, at(day), status)
			}
		}
		insert(shift, at(24), store.RunPending)
		insert(shift, at(16), store.RunSkipped)
		insert(lost, at(16), store.RunSkipped)

		clk := clock.NewManual(to.Add(30 * time.Second))
		w, err := watchdog.New(watchdog.Config{ID: "r", Clock: clk}, st)
		require.NoError(t, err)
		r, err := w.AuditJobsDue(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, 2, r.Gaps, "holey and lost")
		byJob := map[int64]string{}
		for _, a := range alarmsOfKind(t, st, store.AlarmMissedFire) {
			byJob[a.JobID.Int64] = a.Message
		}
		require.Len(t, byJob, 2)
		require.Contains(t, byJob[holey], "1 of 12 firings")
		require.Contains(t, byJob[lost], "1 of 2 firings")
		require.Equal(t, time.Date(2026, 2, 25, 9, 0, 0, 0, cst).UnixMilli(), cursorOf(t, st, daily).Int64)
		next := cursorOf(t, st, shift).Int64
		require.Greater(t, next, time.Date(2027, 1, 1, 0, 0, 0, 0, cst).UnixMilli(), "the shift job's next candidate is next February")
		r, err = w.AuditJobsDue(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, watchdog.AuditResult{Done: true}, r)
	})
}
