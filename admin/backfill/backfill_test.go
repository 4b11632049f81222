package backfill_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/backfill"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
)

// TestDates: the range in order, oldest or newest first, and each field
// error by its name.
func TestDates(t *testing.T) {
	dates, fields := backfill.Dates(backfill.Request{From: "2026-02-27", To: "2026-03-02", Parallel: 1})
	require.Nil(t, fields)
	require.Equal(t, []string{"2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"}, dates)
	dates, fields = backfill.Dates(backfill.Request{From: "2026-02-27", To: "2026-03-02", Parallel: 20, NewestFirst: true})
	require.Nil(t, fields)
	require.Equal(t, []string{"2026-03-02", "2026-03-01", "2026-02-28", "2026-02-27"}, dates)
	dates, _ = backfill.Dates(backfill.Request{From: "2025-01-01", To: "2025-12-31", Parallel: 1})
	require.Len(t, dates, 365)
	dates, _ = backfill.Dates(backfill.Request{From: "2024-01-01", To: "2024-12-31", Parallel: 1})
	require.Len(t, dates, backfill.MaxDates, "a leap year is the most")

	for _, c := range []struct {
		req   backfill.Request
		codes map[string]msg.Code
	}{
		{backfill.Request{From: "2026-3-1", To: "2026-03-32", Parallel: 1}, map[string]msg.Code{"from": msg.BackfillDate, "to": msg.BackfillDate}},
		{backfill.Request{From: "2026-03-02", To: "2026-03-01", Parallel: 1}, map[string]msg.Code{"to": msg.BackfillBackwards}},
		{backfill.Request{From: "2024-01-01", To: "2025-01-01", Parallel: 1}, map[string]msg.Code{"to": msg.BackfillTooLong}},
		{backfill.Request{From: "2026-03-01", To: "2026-03-01", Parallel: 0}, map[string]msg.Code{"parallel": msg.ValueBetween}},
		{backfill.Request{From: "2026-03-01", To: "2026-03-01", Parallel: 21}, map[string]msg.Code{"parallel": msg.ValueBetween}},
	} {
		dates, fields := backfill.Dates(c.req)
		require.Nil(t, dates, "%+v", c.req)
		got := map[string]msg.Code{}
		for k, m := range fields {
			got[k] = m.Code
		}
		require.Equal(t, c.codes, got, "%+v", c.req)
	}
}

// next is the schedule of a cron in zone, as a job's is read.
func next(t *testing.T, expr, zone string) backfill.Next {
	t.Helper()
	s, err := schedule.ParseZones(schedule.Spec{Expr: expr, Zone: zone, JobKey: "app/job"}, nil)
	require.NoError(t, err)
	return s.Next
}

// TestScheduledAtAcrossDST: a daily 09:00 job in New York has its date's
// run at 09:00 local on each side of both DST changes of 2026 (so at 14:00,
// then 13:00 UTC in March and the reverse in November); a weekday job has
// none on Saturday and Sunday, which get midnight; so does a job without a
// schedule on any day, and a one-time job on other days than its own.
func TestScheduledAtAcrossDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	daily := next(t, "0 9 * * *", "America/New_York")
	for date, utc := range map[string]string{
		"2026-03-07": "2026-03-07T14:00:00Z", "2026-03-08": "2026-03-08T13:00:00Z", "2026-03-09": "2026-03-09T13:00:00Z",
		"2026-10-31": "2026-10-31T13:00:00Z", "2026-11-01": "2026-11-01T14:00:00Z", "2026-11-02": "2026-11-02T14:00:00Z",
	} {
		at, err := backfill.ScheduledAt(date, ny, daily)
		require.NoError(t, err)
		require.Equal(t, utc, at.UTC().Format(time.RFC3339), date)
		require.Equal(t, "09:00", at.In(ny).Format("15:04"), date)
	}
	// The first firing of the day, not a later one, and not the previous
	// day's last.
	twice := next(t, "30 0,23 * * *", "America/New_York")
	at, err := backfill.ScheduledAt("2026-03-08", ny, twice)
	require.NoError(t, err)
	require.Equal(t, "2026-03-08 00:30 EST", at.In(ny).Format("2006-01-02 15:04 MST"))
	// At midnight exactly: that firing.
	midnight := next(t, "0 0 * * *", "America/New_York")
	at, err = backfill.ScheduledAt("2026-11-01", ny, midnight)
	require.NoError(t, err)
	require.Equal(t, "2026-11-01 00:00 EDT", at.In(ny).Format("2006-01-02 15:04 MST"))

	weekdays := next(t, "0 9 * * 1-5", "America/New_York")
	for date, local := range map[string]string{"2026-03-06": "2026-03-06 09:00 EST", "2026-03-07": "2026-03-07 00:00 EST",
		"2026-03-08": "2026-03-08 00:00 EST", "2026-03-09": "2026-03-09 09:00 EDT"} {
		at, err := backfill.ScheduledAt(date, ny, weekdays)
		require.NoError(t, err)
		require.Equal(t, local, at.In(ny).Format("2006-01-02 15:04 MST"), date)
	}
	at, err = backfill.ScheduledAt("2026-03-08", ny, nil)
	require.NoError(t, err)
	require.Equal(t, "2026-03-08 00:00 EST", at.In(ny).Format("2006-01-02 15:04 MST"), "no schedule: midnight")
	once := next(t, "@at 2026-03-10T18:00", "America/New_York")
	at, err = backfill.ScheduledAt("2026-03-09", ny, once)
	require.NoError(t, err)
	require.Equal(t, "2026-03-09 00:00 EDT", at.In(ny).Format("2006-01-02 15:04 MST"), "a one-time job on another day: midnight")
	at, err = backfill.ScheduledAt("2026-03-10", ny, once)
	require.NoError(t, err)
	require.Equal(t, "2026-03-10 18:00 EDT", at.In(ny).Format("2006-01-02 15:04 MST"))
}

// TestPlanJob: each date's action and instant, in the order the runs
// start: a date whose run (its instant) exists keeps it whatever its
// status; with only_missing a date with a succeeded run at any time of the
// day, or a succeeded run a workflow created for that business date, is
// passed over, and without it such a date is created.
func TestPlanJob(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	daily := next(t, "0 9 * * *", "America/New_York")
	at := func(date string) int64 {
		t.Helper()
		a, err := backfill.ScheduledAt(date, ny, daily)
		require.NoError(t, err)
		return a.UnixMilli()
	}
	elevenPM, err := time.ParseInLocation("2006-01-02 15:04", "2026-03-09 23:00", ny) // 03:00 UTC on the 10th: still the 9th in New York
	require.NoError(t, err)
	runs := []backfill.JobRun{
		{ID: 1, ScheduledAt: at("2026-03-07"), Status: "failed"},
		{ID: 2, ScheduledAt: at("2026-03-08"), Status: "succeeded"},
		{ID: 3, ScheduledAt: elevenPM.UnixMilli(), Status: "succeeded"}, // a manual run of the 9th
		{ID: 4, ScheduledAt: 1, Status: "succeeded", WorkflowDate: "2026-03-10"},
		{ID: 5, ScheduledAt: 2, Status: "failed", WorkflowDate: "2026-03-11"},
	}
	plan, fields := backfill.PlanJob(backfill.Request{From: "2026-03-07", To: "2026-03-11", Parallel: 2}, ny, daily, runs)
	require.Nil(t, fields)
	type row struct {
		Date, Action string
		RunID        int64
	}
	var got []row
	for _, d := range plan {
		got = append(got, row{d.Date, d.Action, d.RunID})
		require.Equal(t, at(d.Date), d.ScheduledAt.UnixMilli(), d.Date)
	}
	require.Equal(t, []row{{"2026-03-07", backfill.Exists, 1}, {"2026-03-08", backfill.Exists, 2}, {"2026-03-09", backfill.Create, 0},
		{"2026-03-10", backfill.Create, 0}, {"2026-03-11", backfill.Create, 0}}, got)

	plan, fields = backfill.PlanJob(backfill.Request{From: "2026-03-07", To: "2026-03-11", Parallel: 2, OnlyMissing: true, NewestFirst: true}, ny, daily, runs)
	require.Nil(t, fields)
	got = nil
	for _, d := range plan {
		got = append(got, row{d.Date, d.Action, d.RunID})
	}
	require.Equal(t, []row{{"2026-03-11", backfill.Create, 0}, {"2026-03-10", backfill.Succeeded, 4}, {"2026-03-09", backfill.Succeeded, 3},
		{"2026-03-08", backfill.Succeeded, 2}, {"2026-03-07", backfill.Exists, 1}}, got)

	_, fields = backfill.PlanJob(backfill.Request{From: "2026-03-08", To: "2026-03-07", Parallel: 1}, ny, daily, nil)
	require.Equal(t, msg.BackfillBackwards, fields["to"].Code)
}
