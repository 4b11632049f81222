package jobdef

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
)

func TestValidateCalendarFields(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := func(cron string, id int64, rule, shift string) apitypes.JobSpec {
		return apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: cron, TimeZone: "Asia/Shanghai",
			CalendarID: id, CalendarRule: rule, CalendarShift: shift}}
	}
	for _, ok := range []apitypes.JobSpec{
		spec("0 9 * * *", 0, "", ""),
		spec("0 9 * * *", 7, "business_days_only", ""),
		spec("0 9 * * *", 7, "skip_holidays", ""),
		spec("0 9 * * *", 7, "shift", ""),
		spec("0 9 * * *", 7, "shift", "previous"),
		spec("0 9 BD3 * *", 7, "business_days_only", ""),
		spec("0 18 BDL * *", 7, "shift", "next"),
		spec("0 * * * *", 7, "shift", ""), // 24 a day: the densest shift takes
	} {
		v, err := Validate(ok, now)
		require.NoError(t, err, ok.JobDef)
		require.False(t, v.Job.NextFireAt.Valid && ok.CalendarID != 0, "a calendar job's next firing waits for its calendar")
		back := View(v.Job).JobDef
		require.Equal(t, ok.CalendarID, back.CalendarID)
		require.Equal(t, ok.CalendarRule, back.CalendarRule)
		want := ok.CalendarShift
		if ok.CalendarRule == "shift" && want == "" {
			want = "next" // the default direction, stored
		}
		require.Equal(t, want, back.CalendarShift)
	}
	for _, tc := range []struct {
		spec         apitypes.JobSpec
		field, words string
	}{
		{spec("0 9 BDL * *", 0, "", ""), "cron", "BDL (a business day) is counted on a business calendar: set calendar_id"},
		{spec("0 9 BD-2 * *", 0, "", ""), "cron", "BD-2"},
		{spec("0 9 * * *", 7, "", ""), "calendar_rule", "required with a calendar"},
		{spec("0 9 * * *", 0, "shift", ""), "calendar_rule", "needs a calendar: set calendar_id"},
		{spec("0 9 * * *", 0, "", "next"), "calendar_shift", "only with a calendar"},
		{spec("0 9 * * *", 7, "weekdays", ""), "calendar_rule", `"weekdays" is not a calendar rule`},
		{spec("0 9 * * *", 7, "business_days_only", "next"), "calendar_shift", `only with the rule "shift"`},
		{spec("0 9 * * *", 7, "shift", "later"), "calendar_shift", `"later" is not a direction`},
		{spec("*/30 * * * *", 7, "shift", ""), "calendar_rule", "at most 24 times a day"},
		{spec("0 9 * * *", -1, "", ""), "calendar_id", "or 0 for none"},
	} {
		_, err := Validate(tc.spec, now)
		var fe FieldErrors
		require.ErrorAs(t, err, &fe, tc.spec.JobDef)
		require.Contains(t, fe[tc.field], tc.words, "%v: %v", tc.spec.JobDef, fe)
	}
}

// china is the start of the Spring Festival break of 2026 (admin/calendar/testdata).
func china(t *testing.T) *calendar.Calendar {
	t.Helper()
	e := []calendar.Entry{
		{Date: calendar.NewDate(2026, 2, 14), Kind: calendar.KindWorkday, Name: "Spring Festival (make-up)"},
		{Date: calendar.NewDate(2026, 2, 16), Kind: calendar.KindHoliday, Name: "Spring Festival"},
		{Date: calendar.NewDate(2026, 2, 17), Kind: calendar.KindHoliday, Name: "Spring Festival"},
	}
	c, err := calendar.New(calendar.Definition{Name: "cn", Entries: e})
	require.NoError(t, err)
	return c
}

func TestWithCalendarNextEventAndReasons(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 2, 13, 2, 0, 0, 0, time.UTC) // Fri 10:00 in Shanghai
	v, err := Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: "0 9 * * *", TimeZone: "Asia/Shanghai",
		CalendarID: 7, CalendarRule: "business_days_only"}}, now)
	require.NoError(t, err)
	v, cs, err := WithCalendar(v, china(t), now)
	require.NoError(t, err)
	// Sat 14 Feb is a make-up working day: the next firing, 09:00 local.
	require.Equal(t, time.Date(2026, 2, 14, 1, 0, 0, 0, time.UTC).UnixMilli(), v.Job.NextFireAt.Int64)
	// After it, Sun 15 Feb (not a working day) is the next event: a
	// removed firing the leader records when it is due.
	require.Equal(t, time.Date(2026, 2, 15, 1, 0, 0, 0, time.UTC).UnixMilli(), NextEvent(cs, time.Date(2026, 2, 14, 1, 0, 0, 0, time.UTC)).Int64)
	f, err := cs.Next(time.Date(2026, 2, 14, 1, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 2, 18, 1, 0, 0, 0, time.UTC), f.At, "Wed 18 Feb, after two holidays")
	require.Len(t, f.Skipped, 3)
	codes := []msg.Code{}
	for _, d := range f.Skipped {
		codes = append(codes, jobrules.CalendarSkipReason(d, "cn", 0).Code)
	}
	require.Equal(t, []msg.Code{msg.RunSkippedNonWorking, msg.RunSkippedHolidayName, msg.RunSkippedHolidayName}, codes)
	require.Equal(t, "skipped: 2026-02-16 is a holiday (Spring Festival) in calendar cn", jobrules.CalendarSkipReason(f.Skipped[1], "cn", 0).String())
	require.Equal(t, "skipped: 2026-02-15 (Sun) is not a working day in calendar cn", jobrules.CalendarSkipReason(f.Skipped[0], "cn", 0).String())

	// A disabled job has no next firing, calendar or not.
	off := false
	v.Job.Enabled, v.Job.NextFireAt.Valid = off, false
	v, _, err = WithCalendar(v, china(t), now)
	require.NoError(t, err)
	require.False(t, v.Job.NextFireAt.Valid)
}
