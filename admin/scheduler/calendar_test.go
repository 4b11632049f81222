package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

func storeCalendar(t *testing.T, st *store.Store, name string, csv []byte) store.Calendar {
	return storetest.CreateCalendar(t, st, name, csv)
}

func chinaCSV(t *testing.T) []byte { return storetest.ChinaCSV(t) }

// sh is a local time in Shanghai, as UTC.
func sh(month time.Month, day, hour int) time.Time {
	return time.Date(2026, month, day, hour, 0, 0, 0, time.FixedZone("CST", 8*3600)).UTC()
}

// byKey maps a job's runs by scheduled time.
func byKey(runs []store.Run) map[time.Time]store.Run {
	out := map[time.Time]store.Run{}
	for _, r := range runs {
		out[time.UnixMilli(r.ScheduledAt).UTC()] = r
	}
	return out
}

// A daily job on working days only, across the Spring Festival of 2026 in
// Shanghai: Sat 14 Feb is a make-up working day and fires; 15-23 Feb are
// holidays, each recorded as a skipped run at its own time, on its day,
// with the reason as a code; every run keeps the calendar's id and version.
func TestCalendarBusinessDaysOnly(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cal := storeCalendar(t, st, "cn", chinaCSV(t))
		start := sh(time.February, 13, 8)
		c := clock.NewManual(start)
		s := leading(t, st, c, &fakePusher{}, 3)
		j := createCalendarJob(t, st, apitypes.JobDef{App: "a", Name: "daily", Handler: "h", Cron: "0 9 * * *", TimeZone: "Asia/Shanghai",
			CalendarID: cal.ID, CalendarRule: "business_days_only"}, cal, start)
		require.Equal(t, sh(time.February, 13, 9).UnixMilli(), j.NextFireAt.Int64)

		for day := 13; day <= 24; day++ {
			c.Set(sh(time.February, day, 9).Add(300 * time.Millisecond))
			require.NoError(t, s.FireAll(ctx, 3))
			runs := byKey(runsOf(t, st, j.ID))
			r, ok := runs[sh(time.February, day, 9)]
			require.True(t, ok, "day %d: the firing or its skip is recorded on its day", day)
			_, tomorrow := runs[sh(time.February, day+1, 9)]
			require.False(t, tomorrow, "day %d: nothing is recorded ahead of its time", day)
			require.Equal(t, cal.ID, r.CalendarID)
			require.Equal(t, cal.Version, r.CalendarVersion)
			switch {
			case day == 13 || day == 14 || day == 24:
				require.Equal(t, store.RunPending, r.Status, "day %d", day)
				require.False(t, r.ShiftedFrom.Valid)
			default:
				require.Equal(t, store.RunSkipped, r.Status, "day %d", day)
				require.Equal(t, msg.RunSkippedHolidayName, r.ErrorMsg.Code, "day %d", day)
				require.Equal(t, "2026-02-"+itoa(day), r.ErrorMsg.Args["date"])
				require.Equal(t, "skipped: 2026-02-"+itoa(day)+" is a holiday (Spring Festival) in calendar cn", r.Error)
			}
		}
		require.Len(t, runsOf(t, st, j.ID), 12)
		require.Equal(t, int64(3), s.Stats().Fired)
		require.Equal(t, int64(9), s.Stats().Skipped)
		require.Zero(t, s.Stats().DuplicateFirings)
	})
}

// Shift next: 15 and 16 Feb (holidays) both move to Tue 24 Feb 09:00, the
// next working day: one run keyed by the moved instant, with the cron's
// instant of the earlier one in shifted_from; the other is recorded as a
// skipped duplicate. A second leader that finds the firing due again (a
// failover before the first one's next_fire_at was seen) creates nothing.
func TestCalendarShiftFiresOnceAcrossLeaders(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cal := storeCalendar(t, st, "cn", chinaCSV(t))
		start := sh(time.February, 13, 8)
		c := clock.NewManual(start)
		s := leading(t, st, c, &fakePusher{}, 3)
		j := createCalendarJob(t, st, apitypes.JobDef{App: "a", Name: "shift", Handler: "h", Cron: "0 9 15,16 2 *", TimeZone: "Asia/Shanghai",
			CalendarID: cal.ID, CalendarRule: "shift"}, cal, start)
		require.Equal(t, sh(time.February, 16, 9).UnixMilli(), j.NextFireAt.Int64, "the duplicate is the first thing to record")

		for _, day := range []int{16, 20, 24} {
			c.Set(sh(time.February, day, 9).Add(300 * time.Millisecond))
			require.NoError(t, s.FireAll(ctx, 3))
		}
		runs := runsOf(t, st, j.ID)
		require.Len(t, runs, 2)
		got := byKey(runs)
		fired := got[sh(time.February, 24, 9)]
		require.Equal(t, store.RunPending, fired.Status)
		require.Equal(t, sh(time.February, 15, 9).UnixMilli(), fired.ShiftedFrom.Int64)
		dup := got[sh(time.February, 16, 9)]
		require.Equal(t, store.RunSkipped, dup.Status)
		require.Equal(t, msg.RunSkippedShiftDup, dup.ErrorMsg.Code)
		require.Equal(t, "2026-02-24 09:00:00 CST", dup.ErrorMsg.Args["at"])

		// Failover: a new leader (epoch 4) sees the firing due again.
		_, err := st.DB().Exec(`UPDATE job SET next_fire_at = ? WHERE id = ?`, sh(time.February, 24, 9).UnixMilli(), j.ID)
		require.NoError(t, err)
		claim(t, st, 4)
		s2, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, BatchSize: 50}, st, &fakePusher{})
		require.NoError(t, err)
		require.NoError(t, s2.FireAll(ctx, 4))
		require.Len(t, runsOf(t, st, j.ID), 2, "the run key makes the second firing a no-op")
		require.Equal(t, int64(1), s2.Stats().DuplicateFirings)
		j, err = st.Job(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, time.Date(2027, 2, 15, 1, 0, 0, 0, time.UTC).UnixMilli(), j.NextFireAt.Int64, "next year's 15 Feb (a Monday)")
	})
}

// An edit of the calendar (a new holiday) changes the firings not created
// yet; the runs that exist keep the version they were created with.
func TestCalendarEditChangesOnlyLaterFirings(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cal := storeCalendar(t, st, "cn", chinaCSV(t))
		start := sh(time.March, 2, 8) // Monday
		c := clock.NewManual(start)
		s := leading(t, st, c, &fakePusher{}, 3)
		j := createCalendarJob(t, st, apitypes.JobDef{App: "a", Name: "daily", Handler: "h", Cron: "0 9 * * *", TimeZone: "Asia/Shanghai",
			CalendarID: cal.ID, CalendarRule: "business_days_only"}, cal, start)
		c.Set(sh(time.March, 2, 9).Add(time.Second))
		require.NoError(t, s.FireAll(ctx, 3))

		// Wednesday 4 March becomes a holiday.
		edited := append(chinaCSV(t), []byte("2026-03-04,holiday,Office move\n")...)
		entries, err := calendar.ParseCSV(edited)
		require.NoError(t, err)
		nc, err := calendar.New(calendar.Definition{Name: "cn", Entries: entries})
		require.NoError(t, err)
		require.NoError(t, st.UpdateCalendar(ctx, store.Calendar{ID: cal.ID, Week: cal.Week, Days: string(nc.ExportCSV()), Version: nc.Version(), Revision: cal.Revision}))

		for _, day := range []int{3, 4, 5} {
			c.Set(sh(time.March, day, 9).Add(time.Second))
			require.NoError(t, s.FireAll(ctx, 3))
		}
		got := byKey(runsOf(t, st, j.ID))
		require.Len(t, got, 4)
		require.Equal(t, cal.Version, got[sh(time.March, 2, 9)].CalendarVersion, "created before the edit")
		for _, day := range []int{3, 4, 5} {
			require.Equal(t, nc.Version(), got[sh(time.March, day, 9)].CalendarVersion, "day %d", day)
		}
		require.Equal(t, store.RunPending, got[sh(time.March, 3, 9)].Status)
		require.Equal(t, store.RunSkipped, got[sh(time.March, 4, 9)].Status)
		require.Equal(t, "Office move", got[sh(time.March, 4, 9)].ErrorMsg.Args["holiday"])
		require.Equal(t, store.RunPending, got[sh(time.March, 5, 9)].Status)
		require.Equal(t, store.RunPending, got[sh(time.March, 2, 9)].Status)
	})
}

// createCalendarJob stores a job on calendar cal with its next firing as the
// API sets it.
func createCalendarJob(t *testing.T, st *store.Store, def apitypes.JobDef, cal store.Calendar, now time.Time) store.Job {
	t.Helper()
	v, err := jobdef.Validate(apitypes.JobSpec{JobDef: def}, now)
	require.NoError(t, err)
	built, err := cal.Build()
	require.NoError(t, err)
	v, _, err = jobdef.WithCalendar(v, built, now)
	require.NoError(t, err)
	id, err := st.CreateJob(context.Background(), v.Job)
	require.NoError(t, err)
	_, err = st.DB().Exec(`UPDATE job SET created_at = ? WHERE id = ?`, now.UnixMilli(), id)
	require.NoError(t, err)
	j, err := st.Job(context.Background(), id)
	require.NoError(t, err)
	return j
}

func itoa(n int) string {
	if n < 10 {
		return "0" + string(rune('0'+n))
	}
	return string(rune('0'+n/10)) + string(rune('0'+n%10))
}

// A leader that was down across the holidays: the holidays are recorded as
// calendar skips (not misfires); the late working-day firings follow the
// misfire policy (run_once with an on-time firing due: the on-time one is
// the run, the late ones are misfire skips).
func TestCalendarBacklogAfterOutage(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cal := storeCalendar(t, st, "cn", chinaCSV(t))
		start := sh(time.February, 12, 10)
		c := clock.NewManual(start)
		s := leading(t, st, c, &fakePusher{}, 3)
		j := createCalendarJob(t, st, apitypes.JobDef{App: "a", Name: "daily", Handler: "h", Cron: "0 9 * * *", TimeZone: "Asia/Shanghai",
			CalendarID: cal.ID, CalendarRule: "business_days_only"}, cal, start)
		c.Set(sh(time.February, 24, 9).Add(10 * time.Second))
		require.NoError(t, s.FireAll(ctx, 3))
		got := byKey(runsOf(t, st, j.ID))
		require.Len(t, got, 12, "13 Feb to 24 Feb, one row each")
		require.Equal(t, msg.RunSkippedMisfire, got[sh(time.February, 13, 9)].ErrorMsg.Code)
		require.Equal(t, msg.RunSkippedMisfire, got[sh(time.February, 14, 9)].ErrorMsg.Code, "run_once with an on-time firing: that one is the run")
		require.Equal(t, store.RunPending, got[sh(time.February, 24, 9)].Status, "on time")
		for day := 15; day <= 23; day++ {
			require.Equal(t, msg.RunSkippedHolidayName, got[sh(time.February, day, 9)].ErrorMsg.Code, "day %d", day)
		}
		j, err := st.Job(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, sh(time.February, 25, 9).UnixMilli(), j.NextFireAt.Int64)
	})
}
