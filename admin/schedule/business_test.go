package schedule

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/calendar"
)

// china2026 is the real mainland China 2026 calendar of the calendar
// package's test data: Spring Festival 15-23 Feb with make-up Saturdays 14
// and 28 Feb, National Day 1-7 Oct with make-up Saturday 10 Oct.
func china2026(t testing.TB) *calendar.Calendar {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "calendar", "testdata", "cn-2026.csv"))
	require.NoError(t, err)
	entries, err := calendar.ParseCSV(data)
	require.NoError(t, err)
	c, err := calendar.New(calendar.Definition{Name: "cn", Entries: entries})
	require.NoError(t, err)
	return c
}

// simpleCalendar builds a Monday-Friday calendar (or the given week) from
// "YYYY-MM-DD holiday|workday" lines.
func simpleCalendar(t testing.TB, name string, week calendar.Week, days ...string) *calendar.Calendar {
	t.Helper()
	var entries []calendar.Entry
	for _, d := range days {
		date, err := calendar.ParseDate(d[:10])
		require.NoError(t, err)
		entries = append(entries, calendar.Entry{Date: date, Kind: calendar.Kind(d[11:])})
	}
	c, err := calendar.New(calendar.Definition{Name: name, Week: week, Entries: entries})
	require.NoError(t, err)
	return c
}

var (
	ruleBDO      = calendar.Policy{Rule: calendar.RuleBusinessDaysOnly}
	ruleSkip     = calendar.Policy{Rule: calendar.RuleSkipHolidays}
	ruleNext     = calendar.Policy{Rule: calendar.RuleShift}
	rulePrevious = calendar.Policy{Rule: calendar.RuleShift, Shift: calendar.ShiftPrevious}
)

// firingText renders a firing as "AT" or "AT <- SCHEDULED" (shifted) and
// its skipped candidates as "SCHEDULED reason", all RFC 3339 UTC.
type firingText struct {
	at      string
	skipped []string
}

func render(f CalendarFiring) firingText {
	out := firingText{at: f.At.Format(time.RFC3339)}
	if f.Decision.Shifted {
		out.at += " <- " + f.Decision.Scheduled.UTC().Format(time.RFC3339)
	}
	for _, d := range f.Skipped {
		out.skipped = append(out.skipped, d.Scheduled.UTC().Format(time.RFC3339)+" "+string(d.Reason))
	}
	return out
}

type calCase struct {
	name   string
	expr   string
	zone   string
	policy calendar.Policy
	after  string
	want   []firingText
}

func runCalCases(t *testing.T, cal *calendar.Calendar, tests []calCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, Spec{Expr: tc.expr, Zone: tc.zone, JobKey: "app/job"})
			cs, err := WithCalendar(s, cal, tc.policy)
			require.NoError(t, err)
			after := utc(t, tc.after)
			var got []firingText
			for range tc.want {
				f, err := cs.Next(after)
				require.NoError(t, err)
				require.True(t, f.At.After(after), "Next(%s) = %s is not after", after, f.At)
				require.Equal(t, f.SkippedCount, len(f.Skipped))
				require.Equal(t, f.At, f.Decision.At.UTC(), "the firing's decision lands on At")
				require.Equal(t, f.Local, f.At.In(s.Location()))
				got = append(got, render(f))
				after = f.At
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestBusinessDayChina2026(t *testing.T) {
	t.Parallel()
	const sh = "Asia/Shanghai" // UTC+8, no daylight saving: 09:00 is 01:00Z
	runCalCases(t, china2026(t), []calCase{
		// January: 1-3 holidays, Sunday 4 a make-up day: BD1 is Sun 4,
		// BD3 Tue 6. February: BD3 Wed 4. October: 1-7 holidays, BD3 is
		// the make-up Saturday 10.
		{"BD3 Jan Feb", "0 9 BD3 * *", sh, calendar.Policy{}, "2025-12-31T16:00:00Z", []firingText{
			{at: "2026-01-06T01:00:00Z"}, {at: "2026-02-04T01:00:00Z"}, {at: "2026-03-04T01:00:00Z"},
		}},
		{"BD1 Jan is the make-up Sunday", "0 9 BD1 * *", sh, calendar.Policy{}, "2025-12-31T16:00:00Z", []firingText{
			{at: "2026-01-04T01:00:00Z"},
		}},
		{"BD3 Oct is the make-up Saturday", "0 9 bd3 * *", sh, calendar.Policy{}, "2026-09-30T16:00:00Z", []firingText{
			{at: "2026-10-10T01:00:00Z"}, {at: "2026-11-04T01:00:00Z"},
		}},
		{"BDL", "30 17 BDL * *", sh, calendar.Policy{}, "2025-12-31T16:00:00Z", []firingText{
			{at: "2026-01-30T09:30:00Z"}, // Fri 30 Jan 17:30
			{at: "2026-02-28T09:30:00Z"}, // Sat 28 Feb, a make-up day
			{at: "2026-03-31T09:30:00Z"},
		}},
		{"BD-2", "0 9 BD-2 * *", sh, calendar.Policy{}, "2026-01-31T16:00:00Z", []firingText{
			{at: "2026-02-27T01:00:00Z"}, // Fri 27 Feb (Sat 28 is the last)
		}},
		{"BDL Oct", "0 9 BDL * *", sh, calendar.Policy{}, "2026-09-30T16:00:00Z", []firingText{
			{at: "2026-10-30T01:00:00Z"},
		}},
		{"BD3 only in the months allowed", "0 9 BD3 FEB,OCT *", sh, calendar.Policy{}, "2025-12-31T16:00:00Z", []firingText{
			{at: "2026-02-04T01:00:00Z"}, {at: "2026-10-10T01:00:00Z"}, {at: "2027-02-03T01:00:00Z"},
		}},
		{"BD3 several times that day", "0 9,15 BD3 * *", sh, calendar.Policy{}, "2026-02-04T01:00:00Z", []firingText{
			{at: "2026-02-04T07:00:00Z"}, {at: "2026-03-04T01:00:00Z"},
		}},
		// February 2026 has 16 working days (20 weekdays, 6 of them
		// holidays, 2 make-up Saturdays): BD17 skips it, at the
		// expression's time on the month's last day.
		{"BD17 skips February", "0 9 BD17 * *", sh, calendar.Policy{}, "2026-01-31T16:00:00Z", []firingText{
			{at: "2026-03-24T01:00:00Z", skipped: []string{"2026-02-28T01:00:00Z no_such_business_day"}},
		}},
		{"BD3 is a working day whatever the rule", "0 9 BD3 * *", sh, rulePrevious, "2026-09-30T16:00:00Z", []firingText{
			{at: "2026-10-10T01:00:00Z"},
		}},
		// The Spring Festival week on a weekday cron.
		{"business_days_only weekdays", "30 9 * * MON-FRI", sh, ruleBDO, "2026-02-13T00:00:00Z", []firingText{
			{at: "2026-02-13T01:30:00Z"},
			{at: "2026-02-24T01:30:00Z", skipped: []string{
				"2026-02-16T01:30:00Z holiday", "2026-02-17T01:30:00Z holiday", "2026-02-18T01:30:00Z holiday",
				"2026-02-19T01:30:00Z holiday", "2026-02-20T01:30:00Z holiday", "2026-02-23T01:30:00Z holiday",
			}},
		}},
		{"business_days_only daily takes the make-up Saturdays", "30 9 * * *", sh, ruleBDO, "2026-02-13T00:00:00Z", []firingText{
			{at: "2026-02-13T01:30:00Z"},
			{at: "2026-02-14T01:30:00Z"}, // make-up Saturday
			{at: "2026-02-24T01:30:00Z", skipped: []string{
				"2026-02-15T01:30:00Z holiday", "2026-02-16T01:30:00Z holiday", "2026-02-17T01:30:00Z holiday",
				"2026-02-18T01:30:00Z holiday", "2026-02-19T01:30:00Z holiday", "2026-02-20T01:30:00Z holiday",
				"2026-02-21T01:30:00Z holiday", "2026-02-22T01:30:00Z holiday", "2026-02-23T01:30:00Z holiday",
			}},
			{at: "2026-02-25T01:30:00Z"}, {at: "2026-02-26T01:30:00Z"}, {at: "2026-02-27T01:30:00Z"},
			{at: "2026-02-28T01:30:00Z"}, // make-up Saturday
			{at: "2026-03-02T01:30:00Z", skipped: []string{"2026-03-01T01:30:00Z non_working_day"}},
		}},
		{"skip_holidays keeps weekends", "30 9 * * *", sh, ruleSkip, "2026-03-06T00:00:00Z", []firingText{
			{at: "2026-03-06T01:30:00Z"}, {at: "2026-03-07T01:30:00Z"}, {at: "2026-03-08T01:30:00Z"},
		}},
		{"skip_holidays weekdays", "30 9 * * MON-FRI", sh, ruleSkip, "2026-02-13T02:00:00Z", []firingText{
			{at: "2026-02-24T01:30:00Z", skipped: []string{
				"2026-02-16T01:30:00Z holiday", "2026-02-17T01:30:00Z holiday", "2026-02-18T01:30:00Z holiday",
				"2026-02-19T01:30:00Z holiday", "2026-02-20T01:30:00Z holiday", "2026-02-23T01:30:00Z holiday",
			}},
		}},
		// Shift: the nine firings of the break land on one instant and
		// fire once, the firing on its own day being the one that runs.
		{"shift next daily", "0 9 * * *", sh, ruleNext, "2026-02-14T00:00:00Z", []firingText{
			{at: "2026-02-14T01:00:00Z"},
			{at: "2026-02-24T01:00:00Z", skipped: []string{
				"2026-02-15T01:00:00Z duplicate", "2026-02-16T01:00:00Z duplicate", "2026-02-17T01:00:00Z duplicate",
				"2026-02-18T01:00:00Z duplicate", "2026-02-19T01:00:00Z duplicate", "2026-02-20T01:00:00Z duplicate",
				"2026-02-21T01:00:00Z duplicate", "2026-02-22T01:00:00Z duplicate", "2026-02-23T01:00:00Z duplicate",
			}},
			{at: "2026-02-25T01:00:00Z"},
		}},
		{"shift previous daily", "0 9 * * *", sh, rulePrevious, "2026-02-13T02:00:00Z", []firingText{
			{at: "2026-02-14T01:00:00Z", skipped: []string{
				"2026-02-15T01:00:00Z duplicate", "2026-02-16T01:00:00Z duplicate", "2026-02-17T01:00:00Z duplicate",
				"2026-02-18T01:00:00Z duplicate", "2026-02-19T01:00:00Z duplicate", "2026-02-20T01:00:00Z duplicate",
				"2026-02-21T01:00:00Z duplicate", "2026-02-22T01:00:00Z duplicate", "2026-02-23T01:00:00Z duplicate",
			}},
			{at: "2026-02-24T01:00:00Z"},
		}},
		// Two shifted firings and no own one: the earliest fires. Sat 7 and
		// Sun 8 Mar both move to Mon 9 Mar 09:00.
		{"shift next weekend job dedupes", "0 9 * * SAT,SUN", sh, ruleNext, "2026-03-06T00:00:00Z", []firingText{
			{at: "2026-03-09T01:00:00Z <- 2026-03-07T01:00:00Z", skipped: []string{"2026-03-08T01:00:00Z duplicate"}},
			{at: "2026-03-16T01:00:00Z <- 2026-03-14T01:00:00Z", skipped: []string{"2026-03-15T01:00:00Z duplicate"}},
		}},
		{"shift previous weekend job dedupes", "0 9 * * SAT,SUN", sh, rulePrevious, "2026-03-01T00:00:00Z", []firingText{
			{at: "2026-03-06T01:00:00Z <- 2026-03-07T01:00:00Z", skipped: []string{"2026-03-08T01:00:00Z duplicate"}},
		}},
		// Shift next looks back: after Monday 09:00, the Saturday 18:00
		// firing still lands on Monday 18:00.
		{"shift next looks back", "0 9,18 * * SAT", sh, ruleNext, "2026-03-09T01:00:00Z", []firingText{
			{at: "2026-03-09T10:00:00Z <- 2026-03-07T10:00:00Z"},
			{at: "2026-03-16T01:00:00Z <- 2026-03-14T01:00:00Z"},
		}},
		// Shift previous looks ahead: the Saturday firing lands on Friday
		// before the Friday candidate of later that day.
		{"shift previous looks ahead", "0 9 * * SAT", sh, rulePrevious, "2026-03-05T00:00:00Z", []firingText{
			{at: "2026-03-06T01:00:00Z <- 2026-03-07T01:00:00Z"},
			{at: "2026-03-13T01:00:00Z <- 2026-03-14T01:00:00Z"},
		}},
		{"shift previous never returns after or earlier", "0 9 * * SAT", sh, rulePrevious, "2026-03-06T01:00:00Z", []firingText{
			{at: "2026-03-13T01:00:00Z <- 2026-03-14T01:00:00Z"},
		}},
		{"shift next weekly over National Day", "0 9 * * THU", sh, ruleNext, "2026-09-25T00:00:00Z", []firingText{
			{at: "2026-10-08T01:00:00Z", skipped: []string{"2026-10-01T01:00:00Z duplicate"}},
		}},
		{"shift previous weekly over National Day", "0 9 * * THU", sh, rulePrevious, "2026-09-25T00:00:00Z", []firingText{
			{at: "2026-09-30T01:00:00Z <- 2026-10-01T01:00:00Z"},
			{at: "2026-10-08T01:00:00Z"},
		}},
	})
}

// Daylight saving: a shifted firing keeps its local clock time; when that
// time does not exist on the new day it fires when the clocks jump, when it
// happens twice at the first occurrence (docs/schedules.md, Business
// calendars).
func TestCalendarAcrossDST(t *testing.T) {
	t.Parallel()
	// US-like: Monday-Friday, Independence Day and Thanksgiving, and two
	// special opening Sundays on the days the clocks change.
	us := simpleCalendar(t, "us", 0, "2026-03-08 workday", "2026-07-03 holiday", "2026-11-01 workday", "2026-11-26 holiday")
	// DE-like: Monday-Friday, Good Friday and Easter Monday, and a special
	// opening Sunday on 29 March (clocks jump) and 25 October (clocks go back).
	de := simpleCalendar(t, "de", 0, "2026-03-29 workday", "2026-04-03 holiday", "2026-04-06 holiday", "2026-10-25 workday")
	const ny, berlin = "America/New_York", "Europe/Berlin"
	runCalCases(t, us, []calCase{
		// Sat 7 Mar 02:30 EST moves to Sun 8 Mar 02:30, which does not
		// exist: it fires when the clocks jump, 03:00 EDT = 07:00Z.
		{"NY shift into the spring-forward gap", "30 2 * * SAT", ny, ruleNext, "2026-03-06T00:00:00Z", []firingText{
			{at: "2026-03-08T07:00:00Z <- 2026-03-07T07:30:00Z"},
		}},
		// The daily job's own Sunday 02:30 fires at the jump too; the
		// Saturday firing shifted there is a duplicate.
		{"NY gap: own and shifted on one instant", "30 2 * * *", ny, ruleNext, "2026-03-06T08:00:00Z", []firingText{
			{at: "2026-03-08T07:00:00Z", skipped: []string{"2026-03-07T07:30:00Z duplicate"}},
			{at: "2026-03-09T06:30:00Z"}, // 02:30 EDT
		}},
		// Sat 31 Oct 01:30 EDT moves to Sun 1 Nov: the first 01:30, EDT = 05:30Z.
		{"NY shift into the fall-back overlap", "30 1 * * SAT", ny, ruleNext, "2026-10-30T00:00:00Z", []firingText{
			{at: "2026-11-01T05:30:00Z <- 2026-10-31T05:30:00Z"},
		}},
		{"NY business_days_only over the spring-forward Sunday", "30 2 * * *", ny, ruleBDO, "2026-03-06T08:00:00Z", []firingText{
			{at: "2026-03-08T07:00:00Z", skipped: []string{"2026-03-07T07:30:00Z non_working_day"}},
		}},
		{"NY Thanksgiving shift previous", "0 17 * * THU", ny, rulePrevious, "2026-11-20T00:00:00Z", []firingText{
			{at: "2026-11-25T22:00:00Z <- 2026-11-26T22:00:00Z"},
		}},
		{"NY BDL July", "0 17 BDL 7 *", ny, calendar.Policy{}, "2026-06-30T00:00:00Z", []firingText{
			{at: "2026-07-31T21:00:00Z"}, // EDT
		}},
		// Wed 1, Thu 2, Fri 3 a holiday: BD3 is Mon 6, 09:00 EDT.
		{"NY BD3 July passes over the holiday", "0 9 BD3 7 *", ny, calendar.Policy{}, "2026-06-30T00:00:00Z", []firingText{
			{at: "2026-07-06T13:00:00Z"},
		}},
	})
	runCalCases(t, de, []calCase{
		// Sat 28 Mar 02:30 CET moves to Sun 29 Mar 02:30, which does not
		// exist: 03:00 CEST = 01:00Z.
		{"Berlin shift into the spring-forward gap", "30 2 * * SAT", berlin, ruleNext, "2026-03-27T00:00:00Z", []firingText{
			{at: "2026-03-29T01:00:00Z <- 2026-03-28T01:30:00Z"},
		}},
		// Sat 24 Oct 02:30 CEST moves to Sun 25 Oct: the first 02:30, CEST = 00:30Z.
		{"Berlin shift into the fall-back overlap", "30 2 * * SAT", berlin, ruleNext, "2026-10-23T00:00:00Z", []firingText{
			{at: "2026-10-25T00:30:00Z <- 2026-10-24T00:30:00Z"},
		}},
		// Easter: Good Friday 3 Apr and Easter Monday 6 Apr.
		{"Berlin Easter shift next", "0 8 * * FRI", berlin, ruleNext, "2026-04-01T00:00:00Z", []firingText{
			{at: "2026-04-07T06:00:00Z <- 2026-04-03T06:00:00Z"},
		}},
		{"Berlin Easter business_days_only", "0 8 * * MON-FRI", berlin, ruleBDO, "2026-04-02T07:00:00Z", []firingText{
			{at: "2026-04-07T06:00:00Z", skipped: []string{"2026-04-03T06:00:00Z holiday", "2026-04-06T06:00:00Z holiday"}},
		}},
		{"Berlin BD3 April", "0 8 BD3 4 *", berlin, calendar.Policy{}, "2026-03-31T00:00:00Z", []firingText{
			{at: "2026-04-07T06:00:00Z"}, // Wed 1, Thu 2, then Tue 7 (Fri 3 and Mon 6 are holidays), 08:00 CEST
		}},
	})
}

func TestWithCalendarErrors(t *testing.T) {
	t.Parallel()
	cal := china2026(t)
	bd := mustParse(t, Spec{Expr: "0 9 BD3 * *"})
	_, err := WithCalendar(bd, nil, calendar.Policy{})
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorIs(t, err, ErrNeedsCalendar)
	require.EqualError(t, err, "cron field 3 (day of month): BD3 needs a calendar: set the job's calendar")
	sixFields := mustParse(t, Spec{Expr: "0 0 9 BDL * *"})
	_, err = WithCalendar(sixFields, nil, ruleBDO)
	require.EqualError(t, err, "cron field 4 (day of month): BDL needs a calendar: set the job's calendar")

	daily := mustParse(t, Spec{Expr: "0 9 * * *"})
	_, err = WithCalendar(daily, nil, ruleBDO)
	require.ErrorIs(t, err, ErrNeedsCalendar)
	require.EqualError(t, err, "calendar rule: the rule business_days_only needs a calendar: set the job's calendar")
	_, err = WithCalendar(daily, cal, calendar.Policy{Rule: "weekdays"})
	require.ErrorIs(t, err, ErrInvalid)
	require.EqualError(t, err, `calendar rule: "weekdays" is not a calendar rule: want "business_days_only", "skip_holidays" or "shift"`)
	_, err = WithCalendar(daily, cal, calendar.Policy{Rule: calendar.RuleShift, Shift: "sideways"})
	require.EqualError(t, err, `calendar shift: "sideways" is not a direction: want "next" or "previous"`)
	_, err = WithCalendar(daily, cal, calendar.Policy{Rule: calendar.RuleSkipHolidays, Shift: calendar.ShiftNext})
	require.EqualError(t, err, `calendar shift: a direction ("next") is only for the rule "shift"`)

	_, err = WithCalendar(mustParse(t, Spec{Expr: "*/30 * * * *"}), cal, ruleNext)
	require.EqualError(t, err, `calendar rule: shift moves firings to another day and is for schedules that fire at most 24 times a day; "*/30 * * * *" fires 48 times a day: use business_days_only`)
	_, err = WithCalendar(mustParse(t, Spec{Expr: "@every 30m"}), cal, rulePrevious)
	require.ErrorContains(t, err, "fires 48 times a day")
	_, err = WithCalendar(mustParse(t, Spec{Expr: "0 * * * *"}), cal, ruleNext)
	require.NoError(t, err, "hourly may shift")

	// Without a calendar and without a rule, a schedule fires as alone.
	cs, err := WithCalendar(daily, nil, calendar.Policy{})
	require.NoError(t, err)
	f, err := cs.Next(utc(t, "2026-02-16T00:00:00Z"))
	require.NoError(t, err)
	require.Equal(t, daily.Next(utc(t, "2026-02-16T00:00:00Z")), f.At)
	require.False(t, f.Decision.Shifted)

	// The Schedule alone has no firing for BD3.
	require.True(t, bd.NeedsCalendar())
	require.Equal(t, calendar.BusinessDay(3), bd.BusinessDay())
	require.True(t, bd.Next(utc(t, "2026-01-01T00:00:00Z")).IsZero())
	require.Empty(t, bd.Preview(utc(t, "2026-01-01T00:00:00Z"), 3))
	require.False(t, daily.NeedsCalendar())
}

// A calendar that has no working day for years ends the search with an
// error instead of looping.
func TestCalendarSearchIsBounded(t *testing.T) {
	t.Parallel()
	// Every day from 2026 to 2032 a holiday (about 2,500 special days).
	var days []string
	for d := calendar.NewDate(2026, 1, 1); d.Year < 2033; d = d.AddDays(1) {
		days = append(days, d.String()+" holiday")
	}
	closed := simpleCalendar(t, "closed", 0, days...)
	after := utc(t, "2026-01-01T00:00:00Z")
	for _, tc := range []struct {
		expr   string
		policy calendar.Policy
	}{
		{"0 9 * * *", ruleBDO}, {"* * * * * *", ruleBDO}, {"0 9 * * *", ruleSkip},
		{"0 9 BD3 * *", calendar.Policy{}}, {"0 9 * * *", rulePrevious},
	} {
		cs, err := WithCalendar(mustParse(t, Spec{Expr: tc.expr}), closed, tc.policy)
		require.NoError(t, err)
		f, err := cs.Next(after)
		require.ErrorIs(t, err, ErrNoFiring, "%s %v: %+v", tc.expr, tc.policy, f)
		require.ErrorContains(t, err, "has no firing within about five years after 2026-01-01T00:00:00Z")
	}
	// Shift next would move the first firing to the first working day after
	// the closure, Monday 2033-01-03: beyond the look-ahead, an error too.
	cs, err := WithCalendar(mustParse(t, Spec{Expr: "0 9 * * *"}), closed, ruleNext)
	require.NoError(t, err)
	_, err = cs.Next(after)
	require.ErrorIs(t, err, ErrNoFiring)
}

// A every-second job over the Spring Festival: the skipped candidates are
// listed up to MaxSkippedListed and counted beyond, day by day.
func TestCalendarSkipsAreCountedBeyondTheList(t *testing.T) {
	t.Parallel()
	cs, err := WithCalendar(mustParse(t, Spec{Expr: "* * * * * *", Zone: "Asia/Shanghai"}), china2026(t), ruleBDO)
	require.NoError(t, err)
	f, err := cs.Next(utc(t, "2026-02-14T15:59:59Z")) // Sat 14 Feb 23:59:59, a make-up day
	require.NoError(t, err)
	require.Equal(t, "2026-02-23T16:00:00Z", f.At.Format(time.RFC3339), "Tue 24 Feb 00:00:00")
	require.Equal(t, 9*86400, f.SkippedCount, "nine whole days of seconds")
	require.Len(t, f.Skipped, MaxSkippedListed)
	require.Equal(t, "2026-02-14T16:00:00Z", f.Skipped[0].Scheduled.UTC().Format(time.RFC3339))
}

// Every candidate appears once along a chain: as a firing or as skipped.
func TestCalendarChainAccountsForEveryCandidate(t *testing.T) {
	t.Parallel()
	cal := china2026(t)
	for _, expr := range []string{"0 9 * * *", "0 9,18 * * *", "30 7 * * FRI,SAT", "0 */6 * * *"} {
		s := mustParse(t, Spec{Expr: expr, Zone: "Asia/Shanghai"})
		// Wednesdays 4 Feb and 2 Dec 2026, 00:00 in Shanghai: working days on
		// both sides of each edge, so no shift crosses them.
		from, to := utc(t, "2026-02-03T16:00:00Z"), utc(t, "2026-12-01T16:00:00Z")
		want := len(nextUntil(s, from.Add(-time.Second), to))
		for _, p := range []calendar.Policy{ruleBDO, ruleSkip, ruleNext, rulePrevious} {
			cs, err := WithCalendar(s, cal, p)
			require.NoError(t, err)
			fired, skipped := 0, 0
			for after := from.Add(-time.Second); ; {
				f, err := cs.Next(after)
				require.NoError(t, err)
				if !f.At.Before(to) {
					for _, d := range f.Skipped { // removed before the edge, reported after it
						if d.Scheduled.Before(to) {
							skipped++
						}
					}
					break
				}
				fired++
				skipped += f.SkippedCount
				after = f.At
			}
			require.Equal(t, want, fired+skipped, "%s %v", expr, p)
			require.Equal(t, int64(fired), cs.Count(from, to), "%s %v", expr, p)
		}
	}
}

func nextUntil(s *Schedule, from, to time.Time) []time.Time {
	var out []time.Time
	for t := s.Next(from); !t.IsZero() && t.Before(to); t = s.Next(t) {
		out = append(out, t)
	}
	return out
}

func TestBusinessDayParse(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		"0 9 BD3 * *":      "0 9 BD3 * *",
		"0 9 bdl * ?":      "0 9 BDL * ?",
		"0 9 Bd-2 * *":     "0 9 BD-2 * *",
		"0 9 BD-1 * *":     "0 9 BDL * *",
		"0 9 BD31 JAN *":   "0 9 BD31 JAN *",
		"0 0 9 BD03 * */1": "0 0 9 BD3 * */1",
		"H H BD1 * *":      "25 14 BD1 * *",
	} {
		s, err := Parse(Spec{Expr: expr, JobKey: "app/job"})
		require.NoError(t, err, expr)
		require.Equal(t, want, s.Resolved(), expr)
		require.True(t, s.NeedsCalendar())
	}
	tests := []struct{ expr, msg string }{
		{"0 9 BD0 * *", "cron field 3 (day of month): BD0 is not a business day: they count from 1 (BD1 is the first working day of the month, BDL or BD-1 the last)"},
		{"0 9 BD-0 * *", "cron field 3 (day of month): BD-0 is not a business day: they count from 1 (BD1 is the first working day of the month, BDL or BD-1 the last)"},
		{"0 9 BD32 * *", "cron field 3 (day of month): BD32: 32 is outside 1-31 (no month has more than 31 days)"},
		{"0 9 bd-40 * *", "cron field 3 (day of month): BD-40: 40 is outside 1-31 (no month has more than 31 days)"},
		{"0 9 BD3,15 * *", `cron field 3 (day of month): "BD3,15": a business day (BD3, BDL, BD-2) stands alone in the day-of-month field and cannot be combined with other days; use one job per business day`},
		{"0 9 1,BDL * *", `cron field 3 (day of month): "1,BDL": a business day (BD3, BDL, BD-2) stands alone in the day-of-month field and cannot be combined with other days; use one job per business day`},
		{"0 9 BD1-BD5 * *", `cron field 3 (day of month): "BD1-BD5": ranges and steps of business days are not supported; write one business day: BDn (the n-th working day, n from 1 to 31), BDL (the last) or BD-n (the n-th from the end)`},
		{"0 9 BD1-5 * *", `cron field 3 (day of month): "BD1-5": ranges and steps of business days are not supported; write one business day: BDn (the n-th working day, n from 1 to 31), BDL (the last) or BD-n (the n-th from the end)`},
		{"0 9 BD3/2 * *", `cron field 3 (day of month): "BD3/2": ranges and steps of business days are not supported; write one business day: BDn (the n-th working day, n from 1 to 31), BDL (the last) or BD-n (the n-th from the end)`},
		{"0 9 BDX * *", `cron field 3 (day of month): "BDX" is not a business day: write BDn (the n-th working day of the month, n from 1 to 31), BDL (the last) or BD-n (the n-th from the end)`},
		{"0 9 BD * *", `cron field 3 (day of month): "BD" is not a business day: write BDn (the n-th working day of the month, n from 1 to 31), BDL (the last) or BD-n (the n-th from the end)`},
		{"0 9 BD3 * MON-FRI", "cron field 5 (day of week): MON-FRI cannot be combined with BD3 in the day of month: BD3 already picks one working day of the month from the job's calendar (its base week and holidays say which days work); write * here"},
		{"0 0 9 BDL * 1", "cron field 6 (day of week): 1 cannot be combined with BDL in the day of month: BDL already picks one working day of the month from the job's calendar (its base week and holidays say which days work); write * here"},
		{"0 BD3 1 * *", `cron field 2 (hour): "BD3": business days (BD3, BDL, BD-2) are only allowed in the day-of-month field`},
		{"0 9 * * BD-2", `cron field 5 (day of week): "BD-2": business days (BD3, BDL, BD-2) are only allowed in the day-of-month field`},
	}
	for _, tc := range tests {
		_, err := Parse(Spec{Expr: tc.expr})
		require.ErrorIs(t, err, ErrInvalid, tc.expr)
		require.EqualError(t, err, tc.msg, tc.expr)
	}
}

func TestCalendarPreview(t *testing.T) {
	t.Parallel()
	cs, err := WithCalendar(mustParse(t, Spec{Expr: "0 9 BD17 * *", Zone: "Asia/Shanghai"}), china2026(t), calendar.Policy{})
	require.NoError(t, err)
	fs := cs.Preview(utc(t, "2026-01-01T00:00:00Z"), 2)
	require.Len(t, fs, 2)
	require.Equal(t, "2026-01-26T01:00:00Z", fs[0].At.Format(time.RFC3339))
	require.Equal(t, "2026-03-24T01:00:00Z", fs[1].At.Format(time.RFC3339))
	require.Equal(t, "skipped: the month has fewer working days than the business day asks for", fs[1].Skipped[0].Note())
	require.True(t, errors.Is(func() error { _, err := cs.Next(utc(t, "9990-01-01T00:00:00Z")); return err }(), ErrNoFiring))
}

// Count agrees with the firings Next returns, for every rule, over windows
// that cut days and the Spring Festival.
func TestCalendarCountMatchesNext(t *testing.T) {
	t.Parallel()
	cal := china2026(t)
	windows := [][2]string{
		{"2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"2026-02-13T01:00:00Z", "2026-02-25T01:00:01Z"},
		{"2026-02-14T05:30:00Z", "2026-03-02T00:59:59Z"},
		{"2026-09-28T00:00:00Z", "2026-10-12T12:00:00Z"},
	}
	for _, expr := range []string{"0 9 * * *", "*/20 9-10 * * MON-FRI", "0 9,18 * * SAT", "0 9 BD3 * *", "0 */2 BDL * *", "@every 7h"} {
		s := mustParse(t, Spec{Expr: expr, Zone: "Asia/Shanghai", Anchor: utc(t, "2026-01-01T00:00:00Z")})
		for _, p := range []calendar.Policy{{}, ruleBDO, ruleSkip, ruleNext, rulePrevious} {
			cs, err := WithCalendar(s, cal, p)
			require.NoError(t, err)
			for _, w := range windows {
				from, to := utc(t, w[0]), utc(t, w[1])
				var want int64
				for after := from.Add(-time.Nanosecond); ; want++ {
					f, err := cs.Next(after)
					if err != nil || !f.At.Before(to) {
						break
					}
					after = f.At
				}
				require.Equal(t, want, cs.Count(from, to), "%s %v %v", expr, p, w)
			}
		}
	}
}

// The admin was down over the Spring Festival: the holidays are not
// misfires, and the calendar's removals are reported with the plan.
func TestPlanCalendar(t *testing.T) {
	t.Parallel()
	s := mustParse(t, Spec{Expr: "0 9 * * *", Zone: "Asia/Shanghai"})
	cs, err := WithCalendar(s, china2026(t), ruleBDO)
	require.NoError(t, err)
	next, now := utc(t, "2026-02-14T01:00:00Z"), utc(t, "2026-02-25T02:05:00Z") // Sat 14 (make-up) 09:00 to Wed 25 10:05
	holidays := []string{
		"2026-02-15T01:00:00Z", "2026-02-16T01:00:00Z", "2026-02-17T01:00:00Z", "2026-02-18T01:00:00Z", "2026-02-19T01:00:00Z",
		"2026-02-20T01:00:00Z", "2026-02-21T01:00:00Z", "2026-02-22T01:00:00Z", "2026-02-23T01:00:00Z",
	}
	scheduled := func(ds []calendar.Decision) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Scheduled.UTC().Format(time.RFC3339))
		}
		return out
	}

	p := PlanCalendar(cs, next, now, MisfireConfig{Policy: MisfireCatchUp})
	require.Equal(t, []string{"2026-02-14T01:00:00Z", "2026-02-24T01:00:00Z", "2026-02-25T01:00:00Z"}, formatAll(p.Fire))
	require.Empty(t, p.Skipped)
	require.True(t, p.Misfired)
	require.Equal(t, holidays, scheduled(p.CalendarSkipped))
	require.Equal(t, 9, p.CalendarSkippedCount)
	require.Equal(t, "2026-02-26T01:00:00Z", p.Next.Format(time.RFC3339))
	require.Equal(t, p.Next, p.NextFiring.At)

	p = PlanCalendar(cs, next, now, MisfireConfig{Policy: MisfireRunOnce})
	require.Equal(t, []string{"2026-02-25T01:00:00Z"}, formatAll(p.Fire))
	require.Equal(t, []string{"2026-02-14T01:00:00Z", "2026-02-24T01:00:00Z"}, formatAll(p.Skipped))
	require.Equal(t, 2, p.SkippedCount, "two misfires, not eleven")
	require.Equal(t, 9, p.CalendarSkippedCount)

	// Without the calendar the same outage misfires twelve times.
	require.Equal(t, 11, Plan(s, next, now, MisfireConfig{Policy: MisfireRunOnce}).SkippedCount)

	// Not due yet: only the next firing.
	p = PlanCalendar(cs, utc(t, "2026-02-24T01:00:00Z"), utc(t, "2026-02-20T00:00:00Z"), MisfireConfig{})
	require.Empty(t, p.Fire)
	require.Equal(t, "2026-02-24T01:00:00Z", p.Next.Format(time.RFC3339))
	require.Equal(t, holidays[5:], scheduled(p.NextFiring.Skipped), "20 to 23 Feb: from now on")
}

// A year-old backlog of an every-second job with business_days_only is
// planned without following 21 million firings one by one.
func TestPlanCalendarHugeBacklog(t *testing.T) {
	t.Parallel()
	cs, err := WithCalendar(mustParse(t, Spec{Expr: "* * * * * *", Zone: "Asia/Shanghai"}), china2026(t), ruleBDO)
	require.NoError(t, err)
	first, err := cs.Next(utc(t, "2025-12-31T23:59:59Z"))
	require.NoError(t, err)
	next, now := first.At, utc(t, "2026-12-01T00:00:00Z")
	require.Equal(t, "2026-01-03T16:00:00Z", next.Format(time.RFC3339), "the first working second: Sun 4 Jan, a make-up day")
	p := PlanCalendar(cs, next, now, MisfireConfig{Policy: MisfireSkip, Threshold: time.Second})
	want := cs.Count(next, now.Add(-time.Second)) // late: before now - threshold
	require.Equal(t, int(want), p.SkippedCount)
	require.Equal(t, []string{"2026-11-30T23:59:59Z", "2026-12-01T00:00:00Z"}, formatAll(p.Fire), "on time")
	require.Len(t, p.Skipped, MaxSkippedListed)
	require.Equal(t, next, p.Skipped[0])
}
