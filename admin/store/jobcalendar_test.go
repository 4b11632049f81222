package store_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestJobCalendarColumns: a job keeps its calendar fields, a run the
// calendar's id and version and the instant a shift moved; the leader's
// version query, the jobs of a calendar, the guarded replan, and migration
// 0021 down and up again.
func TestJobCalendarColumns(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		cal, err := calendar.New(calendar.Definition{Name: "cn", Entries: []calendar.Entry{
			{Date: calendar.NewDate(2026, 2, 16), Kind: calendar.KindHoliday, Name: "Spring Festival"}}})
		require.NoError(t, err)
		row := store.Calendar{Name: "cn", Week: cal.Week().String(), Days: string(cal.ExportCSV()), Version: cal.Version(), Holidays: 1}
		calID, err := s.CreateCalendar(ctx, row)
		require.NoError(t, err)
		stored, err := s.Calendar(ctx, calID)
		require.NoError(t, err)
		built, err := stored.Build()
		require.NoError(t, err)
		require.Equal(t, cal.Version(), built.Version(), "the stored days build the same calendar")
		require.True(t, built.IsHoliday(calendar.NewDate(2026, 2, 16)))

		j := newJob("a", "daily", 1000)
		j.JobCalendar = store.JobCalendar{CalendarID: calID, CalendarRule: "shift", CalendarShift: "previous"}
		id, err := s.CreateJob(ctx, j)
		require.NoError(t, err)
		j, err = s.Job(ctx, id)
		require.NoError(t, err)
		require.Equal(t, store.JobCalendar{CalendarID: calID, CalendarRule: "shift", CalendarShift: "previous"}, j.JobCalendar)
		require.True(t, j.HasCalendar())
		jobs, err := s.JobsOfCalendar(ctx, calID)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		require.Equal(t, id, jobs[0].ID)

		r := jobrules.NewRun(j, 5000, store.TriggerCron, store.RunPending)
		r.CalendarID, r.CalendarVersion, r.ShiftedFrom = calID, cal.Version(), 4000
		run, created, err := s.InsertRun(ctx, 1, r)
		require.NoError(t, err)
		require.True(t, created)
		got, err := s.Run(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, calID, got.CalendarID)
		require.Equal(t, cal.Version(), got.CalendarVersion)
		require.Equal(t, sql.NullInt64{Int64: 4000, Valid: true}, got.ShiftedFrom)
		plain, _, err := s.InsertRun(ctx, 1, jobrules.NewRun(j, 6000, store.TriggerManual, store.RunPending))
		require.NoError(t, err)
		got, err = s.Run(ctx, plain.ID)
		require.NoError(t, err)
		require.Zero(t, got.CalendarID)
		require.False(t, got.ShiftedFrom.Valid)

		var versions map[int64]string
		require.NoError(t, s.Tx(ctx, func(tx *store.Tx) error {
			var err error
			versions, err = tx.CalendarVersions(ctx, []int64{calID, calID + 100})
			return err
		}))
		require.Equal(t, map[int64]string{calID: cal.Version()}, versions, "a calendar that does not exist is left out")

		ok, err := s.ReplanJob(ctx, id, sql.NullInt64{Int64: 999, Valid: true}, sql.NullInt64{Int64: 2000, Valid: true})
		require.NoError(t, err)
		require.False(t, ok, "the leader moved it: not replanned")
		ok, err = s.ReplanJob(ctx, id, sql.NullInt64{Int64: 1000, Valid: true}, sql.NullInt64{Int64: 2000, Valid: true})
		require.NoError(t, err)
		require.True(t, ok)

		// Migration 0021 goes down and up again.
		if !storetest.Stepped(s.Dialect()) {
			return // no step of its own on PostgreSQL
		}
		require.NoError(t, s.MigrateDown(ctx, 20))
		_, err = s.Migrate(ctx)
		require.NoError(t, err)
		j, err = s.Job(ctx, id)
		require.NoError(t, err)
		require.Equal(t, store.JobCalendar{}, j.JobCalendar, "an existing job has no calendar")
	})
}
