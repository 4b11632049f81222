package calendar

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	for _, ok := range []Policy{
		{}, {Rule: RuleBusinessDaysOnly}, {Rule: RuleSkipHolidays},
		{Rule: RuleShift}, {Rule: RuleShift, Shift: ShiftNext}, {Rule: RuleShift, Shift: ShiftPrevious},
	} {
		require.NoError(t, ok.Validate(), ok)
	}
	for _, tc := range []struct {
		p     Policy
		field string
		err   string
	}{
		{Policy{Rule: "weekdays"}, "rule", `calendar rule: "weekdays" is not a calendar rule: want "business_days_only", "skip_holidays" or "shift"`},
		{Policy{Rule: RuleShift, Shift: "later"}, "shift", `"later" is not a direction`},
		{Policy{Rule: RuleSkipHolidays, Shift: ShiftNext}, "shift", `a direction ("next") is only for the rule "shift"`},
	} {
		err := tc.p.Validate()
		require.ErrorContains(t, err, tc.err)
		require.ErrorIs(t, err, ErrInvalid)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, tc.field, ve.Field)
	}
}

func TestRulesChina2026(t *testing.T) {
	t.Parallel()
	c := china2026(t)
	sh := mustZone(t, "Asia/Shanghai")
	at := func(m, day int) time.Time { return time.Date(2026, time.Month(m), day, 9, 30, 0, 0, sh) }
	type want struct {
		fire    bool
		at      string // UTC, when it fires
		reason  Reason
		holiday string
		note    string
	}
	for _, tc := range []struct {
		name string
		p    Policy
		t    time.Time
		want want
	}{
		// business_days_only
		{"bdo: ordinary Friday", Policy{Rule: RuleBusinessDaysOnly}, at(2, 13), want{fire: true, at: "2026-02-13T01:30:00Z"}},
		{"bdo: make-up Saturday fires", Policy{Rule: RuleBusinessDaysOnly}, at(2, 14), want{fire: true, at: "2026-02-14T01:30:00Z"}},
		{"bdo: holiday", Policy{Rule: RuleBusinessDaysOnly}, at(2, 16), want{reason: ReasonHoliday, holiday: "Spring Festival", note: "skipped: 2026-02-16 is a holiday (Spring Festival)"}},
		{"bdo: weekend", Policy{Rule: RuleBusinessDaysOnly}, at(3, 7), want{reason: ReasonNonWorkingDay, note: "skipped: 2026-03-07 (Sat) is not a working day"}},
		{"bdo: holiday on a weekend says holiday", Policy{Rule: RuleBusinessDaysOnly}, at(10, 3), want{reason: ReasonHoliday, holiday: "National Day"}},
		// skip_holidays: weekends fire, holidays do not
		{"skip: weekend fires", Policy{Rule: RuleSkipHolidays}, at(3, 7), want{fire: true, at: "2026-03-07T01:30:00Z"}},
		{"skip: holiday", Policy{Rule: RuleSkipHolidays}, at(5, 4), want{reason: ReasonHoliday, holiday: "Labour Day"}},
		{"skip: holiday on a Sunday", Policy{Rule: RuleSkipHolidays}, at(2, 15), want{reason: ReasonHoliday, holiday: "Spring Festival"}},
		{"skip: make-up Saturday fires", Policy{Rule: RuleSkipHolidays}, at(2, 28), want{fire: true, at: "2026-02-28T01:30:00Z"}},
		// shift
		{"shift: working day unchanged", Policy{Rule: RuleShift}, at(2, 24), want{fire: true, at: "2026-02-24T01:30:00Z"}},
		{"shift next: Spring Festival Monday to Tuesday 24", Policy{Rule: RuleShift}, at(2, 16), want{
			fire: true, at: "2026-02-24T01:30:00Z", reason: ReasonHoliday, holiday: "Spring Festival",
			note: "shifted to 2026-02-24: 2026-02-16 is a holiday (Spring Festival)",
		}},
		{"shift next: last day of the break", Policy{Rule: RuleShift, Shift: ShiftNext}, at(2, 23), want{fire: true, at: "2026-02-24T01:30:00Z", reason: ReasonHoliday, holiday: "Spring Festival"}},
		{"shift previous: into the make-up Saturday", Policy{Rule: RuleShift, Shift: ShiftPrevious}, at(2, 20), want{fire: true, at: "2026-02-14T01:30:00Z", reason: ReasonHoliday, holiday: "Spring Festival"}},
		{"shift next: weekend to Monday", Policy{Rule: RuleShift}, at(3, 1), want{fire: true, at: "2026-03-02T01:30:00Z", reason: ReasonNonWorkingDay}},
		{"shift next: across the month", Policy{Rule: RuleShift}, at(9, 27), want{fire: true, at: "2026-09-28T01:30:00Z", reason: ReasonHoliday, holiday: "Mid-Autumn Festival"}},
		{"shift next: National Day week", Policy{Rule: RuleShift}, at(10, 1), want{fire: true, at: "2026-10-08T01:30:00Z", reason: ReasonHoliday, holiday: "National Day"}},
		{"shift previous: National Day week to Wednesday 30", Policy{Rule: RuleShift, Shift: ShiftPrevious}, at(10, 4), want{fire: true, at: "2026-09-30T01:30:00Z", reason: ReasonHoliday, holiday: "National Day"}},
		// no rule
		{"none", Policy{}, at(2, 16), want{fire: true, at: "2026-02-16T01:30:00Z"}},
		{"invalid policy fires", Policy{Rule: "bogus"}, at(2, 16), want{fire: true, at: "2026-02-16T01:30:00Z"}},
	} {
		got := c.Apply(tc.p, tc.t)
		require.Equal(t, tc.t, got.Scheduled, tc.name)
		require.Equal(t, DateOf(tc.t), got.Date, tc.name)
		require.Equal(t, tc.want.fire, got.Fire, tc.name)
		require.Equal(t, tc.want.reason, got.Reason, tc.name)
		require.Equal(t, tc.want.holiday, got.Holiday, tc.name)
		if tc.want.fire {
			require.Equal(t, utc(tc.want.at), got.At.UTC(), tc.name)
			require.Equal(t, got.At.Location(), sh, tc.name)
		} else {
			require.True(t, got.At.IsZero(), tc.name)
		}
		require.Equal(t, tc.want.reason != "" && tc.want.fire, got.Shifted, tc.name)
		if tc.want.note != "" {
			require.Equal(t, tc.want.note, got.Note(), tc.name)
		}
		if got.Reason == "" {
			require.Empty(t, got.Note(), tc.name)
		}
	}
	var nilCal *Calendar
	require.True(t, nilCal.Apply(Policy{Rule: RuleBusinessDaysOnly}, at(2, 16)).Fire, "no calendar: fires")
}

// TestShiftSpringFestivalWeek runs a daily 09:00 job in Shanghai through
// the Spring Festival break: nine firings on holidays move onto one instant
// and fire once, each of the others recorded as a duplicate.
func TestShiftSpringFestivalWeek(t *testing.T) {
	t.Parallel()
	c := china2026(t)
	sh := mustZone(t, "Asia/Shanghai")
	var next, prev []Decision
	for day := 13; day <= 25; day++ {
		tm := time.Date(2026, 2, day, 9, 0, 0, 0, sh)
		next = append(next, c.Apply(Policy{Rule: RuleShift, Shift: ShiftNext}, tm))
		prev = append(prev, c.Apply(Policy{Rule: RuleShift, Shift: ShiftPrevious}, tm))
	}
	summary := func(ds []Decision) (fires []string, dups []int) {
		for _, dec := range Dedupe(ds) {
			switch {
			case dec.Fire:
				fires = append(fires, dec.At.UTC().Format(time.RFC3339))
			case dec.Reason == ReasonDuplicate:
				dups = append(dups, dec.Date.Day)
				require.Contains(t, dec.Note(), "which fires already")
			default:
				t.Fatalf("unexpected skip %+v", dec)
			}
		}
		return fires, dups
	}
	fires, dups := summary(next)
	require.Equal(t, []string{
		"2026-02-13T01:00:00Z", "2026-02-14T01:00:00Z", // Friday, make-up Saturday
		"2026-02-24T01:00:00Z", "2026-02-25T01:00:00Z", // 15-23 all land on Tuesday 24
	}, fires)
	require.Equal(t, []int{15, 16, 17, 18, 19, 20, 21, 22, 23}, dups, "Tuesday 24's own firing is kept")

	fires, dups = summary(prev)
	require.Equal(t, []string{
		"2026-02-13T01:00:00Z", "2026-02-14T01:00:00Z", // 15-23 all land on Saturday 14
		"2026-02-24T01:00:00Z", "2026-02-25T01:00:00Z",
	}, fires)
	require.Equal(t, []int{15, 16, 17, 18, 19, 20, 21, 22, 23}, dups, "Saturday 14's own firing is kept")
}

func TestDedupe(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	sat, sun := base.AddDate(0, 0, -2), base.AddDate(0, 0, -1)
	in := []Decision{
		{Scheduled: sun, Fire: true, Shifted: true, At: base, Reason: ReasonNonWorkingDay},
		{Scheduled: sat, Fire: true, Shifted: true, At: base, Reason: ReasonNonWorkingDay},
		{Scheduled: base.Add(time.Hour), Fire: true, At: base.Add(time.Hour)},
		{Scheduled: sat.Add(time.Hour), Fire: false, Reason: ReasonHoliday},
	}
	out := Dedupe(in)
	require.Equal(t, []bool{false, true, true, false}, []bool{out[0].Fire, out[1].Fire, out[2].Fire, out[3].Fire}, "the earliest scheduled of two shifted firings is kept")
	require.Equal(t, ReasonDuplicate, out[0].Reason)
	require.Equal(t, base, out[0].At)
	require.Equal(t, ReasonHoliday, out[3].Reason, "skips stay as they are")
	require.True(t, in[0].Fire, "the input is not changed")

	// A firing on its own day wins over one shifted onto it, in any order.
	own := Decision{Scheduled: base, Fire: true, At: base}
	out = Dedupe([]Decision{in[1], own})
	require.False(t, out[0].Fire)
	require.True(t, out[1].Fire)
	out = Dedupe([]Decision{own, in[1]})
	require.True(t, out[0].Fire)
	require.False(t, out[1].Fire)
	require.Empty(t, Dedupe(nil))
}

// TestShiftAcrossClockChanges: a shifted firing keeps its local clock time;
// where that time does not exist on the new day it fires when the clocks
// jump, and where it happens twice, at the first occurrence.
func TestShiftAcrossClockChanges(t *testing.T) {
	t.Parallel()
	every := allDays
	for _, tc := range []struct {
		name, zone string
		holiday    Date
		dir        Direction
		h, m       int
		want       string
	}{
		{"New York gap: 02:30 on 8 March does not exist", "America/New_York", d(2026, 3, 7), ShiftNext, 2, 30, "2026-03-08T07:00:00Z"},
		{"New York gap, shifted back onto it", "America/New_York", d(2026, 3, 9), ShiftPrevious, 2, 30, "2026-03-08T07:00:00Z"},
		{"New York: 03:30 after the gap exists", "America/New_York", d(2026, 3, 7), ShiftNext, 3, 30, "2026-03-08T07:30:00Z"},
		{"New York overlap: first 01:30 (EDT)", "America/New_York", d(2026, 10, 31), ShiftNext, 1, 30, "2026-11-01T05:30:00Z"},
		{"New York overlap from after", "America/New_York", d(2026, 11, 2), ShiftPrevious, 1, 30, "2026-11-01T05:30:00Z"},
		{"Berlin gap", "Europe/Berlin", d(2026, 3, 28), ShiftNext, 2, 30, "2026-03-29T01:00:00Z"},
		{"Berlin overlap: first 02:30 (CEST)", "Europe/Berlin", d(2026, 10, 24), ShiftNext, 2, 30, "2026-10-25T00:30:00Z"},
		{"Lord Howe 30-minute gap", "Australia/Lord_Howe", d(2026, 10, 3), ShiftNext, 2, 15, "2026-10-03T15:30:00Z"},
		{"Lord Howe 30-minute overlap", "Australia/Lord_Howe", d(2026, 4, 4), ShiftNext, 1, 45, "2026-04-04T14:45:00Z"},
		{"Kolkata has no clock change", "Asia/Kolkata", d(2026, 1, 26), ShiftNext, 9, 0, "2026-01-27T03:30:00Z"},
	} {
		loc := mustZone(t, tc.zone)
		c := mustNew(t, Definition{Name: "all", Week: every, Entries: []Entry{{Date: tc.holiday, Kind: KindHoliday}}})
		cand := time.Date(tc.holiday.Year, tc.holiday.Month, tc.holiday.Day, tc.h, tc.m, 0, 0, loc)
		got := c.Apply(Policy{Rule: RuleShift, Shift: tc.dir}, cand)
		require.True(t, got.Fire, tc.name)
		require.True(t, got.Shifted, tc.name)
		require.Equal(t, utc(tc.want), got.At.UTC(), tc.name)
		require.Equal(t, loc, got.At.Location(), tc.name)
	}
}

func TestShiftNoWorkday(t *testing.T) {
	t.Parallel()
	c := mustNew(t, Definition{Name: "x", Entries: []Entry{{Date: d(9999, 12, 31), Kind: KindHoliday}}})
	got := c.Apply(Policy{Rule: RuleShift}, time.Date(9999, 12, 31, 9, 0, 0, 0, time.UTC))
	require.False(t, got.Fire)
	require.Equal(t, ReasonNoWorkday, got.Reason)
	require.Equal(t, "skipped: no working day to shift 9999-12-31 to", got.Note())
}

// TestZoneDecidesTheDate: one instant, two zones, two dates.
func TestZoneDecidesTheDate(t *testing.T) {
	t.Parallel()
	c := china2026(t)
	instant := utc("2026-02-14T20:00:00Z")
	p := Policy{Rule: RuleBusinessDaysOnly}
	inShanghai := c.Apply(p, instant.In(mustZone(t, "Asia/Shanghai")))
	require.Equal(t, d(2026, 2, 15), inShanghai.Date)
	require.False(t, inShanghai.Fire)
	require.Equal(t, ReasonHoliday, inShanghai.Reason)
	inUTC := c.Apply(p, instant)
	require.Equal(t, d(2026, 2, 14), inUTC.Date)
	require.True(t, inUTC.Fire, "the make-up Saturday")
}
