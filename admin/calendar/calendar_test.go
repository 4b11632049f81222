package calendar

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseDate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, err string
		want    Date
	}{
		{in: "2026-02-14", want: d(2026, 2, 14)},
		{in: "2024-02-29", want: d(2024, 2, 29)},
		{in: "0001-01-01", want: d(1, 1, 1)},
		{in: "9999-12-31", want: d(9999, 12, 31)},
		{in: "2026-02-29", err: `date "2026-02-29": day 29 is outside 1-28 (February 2026)`},
		{in: "2100-02-29", err: "day 29 is outside 1-28"},
		{in: "2026-13-01", err: "month 13 is outside 1-12"},
		{in: "0000-01-01", err: "year 0 is outside 1-9999"},
		{in: "2026-1-01", err: "want YYYY-MM-DD"},
		{in: "2026/01/01", err: "want YYYY-MM-DD"},
		{in: "+026-01-01", err: "want YYYY-MM-DD"},
		{in: "", err: "want YYYY-MM-DD"},
	} {
		got, err := ParseDate(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got)
		require.Equal(t, tc.in, got.String())
	}
}

func TestDateArithmetic(t *testing.T) {
	t.Parallel()
	// Against the standard library, over four centuries around today.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		tm := time.Date(1900+rng.IntN(400), time.January, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(366))
		date := DateOf(tm)
		require.True(t, date.Valid())
		require.Equal(t, tm.Weekday(), date.Weekday(), date)
		n := rng.IntN(2000) - 1000
		require.Equal(t, DateOf(tm.AddDate(0, 0, n)), date.AddDays(n), "%s %+d", date, n)
		require.Equal(t, tm.Format(time.DateOnly), date.String())
	}
	require.Equal(t, -1, d(2026, 2, 14).Compare(d(2026, 2, 15)))
	require.Equal(t, 1, d(2026, 3, 1).Compare(d(2026, 2, 28)))
	require.Equal(t, 0, d(2026, 3, 1).Compare(d(2026, 3, 1)))
	require.True(t, d(2025, 12, 31).Before(d(2026, 1, 1)))
	require.True(t, d(2026, 1, 1).After(d(2025, 12, 31)))
	require.False(t, Date{}.Valid())
}

func TestWeek(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Week
		str  string
		err  string
	}{
		{in: "", want: MonFri, str: "MON,TUE,WED,THU,FRI"},
		{in: "MON-FRI", want: MonFri, str: "MON,TUE,WED,THU,FRI"},
		{in: "sun-thu", want: WeekOf(0, 1, 2, 3, 4), str: "MON,TUE,WED,THU,SUN"},
		{in: "MON, WED ,fri", want: WeekOf(1, 3, 5), str: "MON,WED,FRI"},
		{in: "SUN-SAT", want: allDays, str: "MON,TUE,WED,THU,FRI,SAT,SUN"},
		{in: "FRI-SUN", err: "range FRI-SUN runs backwards"},
		{in: "MON-FRY", err: `"FRY" is not a day name`},
		{in: "MON,,FRI", err: `"" is not a day name`},
	} {
		got, err := ParseWeek(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		require.Equal(t, tc.str, got.String())
		back, err := ParseWeek(got.String())
		require.NoError(t, err)
		require.Equal(t, got, back)
	}
	require.True(t, Week(0).Has(time.Monday))
	require.False(t, Week(0).Has(time.Saturday))
}

func TestParseBusinessDay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want BusinessDay
		err  string
	}{
		{in: "BD1", want: 1}, {in: "BD3", want: 3}, {in: "bd31", want: 31}, {in: "BD03", want: 3},
		{in: "BDL", want: -1}, {in: "bdl", want: -1}, {in: "BD-1", want: -1}, {in: "BD-2", want: -2},
		{in: "BD0", err: "0 is outside 1-31"}, {in: "BD32", err: "32 is outside 1-31"},
		{in: "BD-0", err: "outside"}, {in: "BD", err: "want BDn"}, {in: "BD+3", err: "want BDn"},
		{in: "BD100", err: "want BDn"}, {in: "3", err: "must start with BD"}, {in: "BDL2", err: "want BDn"},
	} {
		got, err := ParseBusinessDay(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		back, err := ParseBusinessDay(got.String())
		require.NoError(t, err)
		require.Equal(t, got, back)
	}
	require.Equal(t, "BDL", BusinessDay(-1).String())
	require.Equal(t, "BD-2", BusinessDay(-2).String())
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		def   Definition
		field string
		date  Date
		err   string
	}{
		{name: "no name", def: Definition{}, field: "name", err: "calendar name: required"},
		{name: "bad name", def: Definition{Name: "cn 2026"}, field: "name", err: `"cn 2026": only letters`},
		{name: "bad week", def: Definition{Name: "x", Week: 0x80}, field: "week", err: "bits outside SUN-SAT"},
		{
			name: "holiday and workday", field: "days", date: d(2026, 2, 14),
			def: Definition{Name: "cn", Entries: []Entry{
				{Date: d(2026, 2, 14), Kind: KindWorkday, Name: "make-up"},
				{Date: d(2026, 2, 15), Kind: KindHoliday},
				{Date: d(2026, 2, 14), Kind: KindHoliday, Name: "Spring Festival"},
			}},
			err: "calendar days: 2026-02-14 is both a holiday (Spring Festival) and a working day (make-up): a date can be only one of them",
		},
		{
			name: "twice", field: "days", date: d(2026, 1, 1),
			def: Definition{Name: "cn", Entries: []Entry{{Date: d(2026, 1, 1), Kind: KindHoliday}, {Date: d(2026, 1, 1), Kind: KindHoliday}}},
			err: "2026-01-01 is listed twice as a holiday",
		},
		{
			name: "bad date", field: "days", date: d(2026, 2, 30),
			def: Definition{Name: "cn", Entries: []Entry{{Date: d(2026, 2, 30), Kind: KindHoliday}}},
			err: "day 30 is outside 1-28",
		},
		{
			name: "bad kind", field: "days", date: d(2026, 2, 3),
			def: Definition{Name: "cn", Entries: []Entry{{Date: d(2026, 2, 3), Kind: "off"}}},
			err: `kind "off" is neither`,
		},
		{
			name: "name with line break", field: "days", date: d(2026, 2, 3),
			def: Definition{Name: "cn", Entries: []Entry{{Date: d(2026, 2, 3), Kind: KindHoliday, Name: "a\nb"}}},
			err: "contains a control character",
		},
		{
			name: "name with spaces", field: "days", date: d(2026, 2, 3),
			def: Definition{Name: "cn", Entries: []Entry{{Date: d(2026, 2, 3), Kind: KindHoliday, Name: " a"}}},
			err: "leading or trailing white space",
		},
		{
			name: "too many", field: "days",
			def: Definition{Name: "cn", Entries: make([]Entry, MaxEntries+1)},
			err: "10001 special days, more than the limit of 10000",
		},
	} {
		err := tc.def.Validate()
		require.ErrorContains(t, err, tc.err, tc.name)
		require.ErrorIs(t, err, ErrInvalid)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, tc.field, ve.Field, tc.name)
		require.Equal(t, tc.date, ve.Date, tc.name)
		_, err = New(tc.def)
		require.Error(t, err)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	a := Definition{Name: "a", Entries: []Entry{
		{Date: d(2026, 1, 1), Kind: KindHoliday, Name: "New Year"},
		{Date: d(2026, 1, 4), Kind: KindWorkday},
	}}
	b := Definition{Name: "b", Week: MonFri, Entries: []Entry{a.Entries[1], a.Entries[0]}}
	require.Len(t, a.Version(), 32)
	require.Equal(t, a.Version(), b.Version(), "the order, the name and an explicit default week do not matter")
	// Pinned: the version of stored runs must not change across releases.
	require.Equal(t, "69e5d33166d112c53d3a7c50ab7722ea", a.Version())

	seen := map[string]string{a.Version(): "a"}
	for name, changed := range map[string]Definition{
		"week":     {Week: WeekOf(1, 2, 3, 4, 5, 6), Entries: a.Entries},
		"kind":     {Entries: []Entry{a.Entries[0], {Date: d(2026, 1, 4), Kind: KindHoliday}}},
		"date":     {Entries: []Entry{a.Entries[0], {Date: d(2026, 1, 5), Kind: KindWorkday}}},
		"day name": {Entries: []Entry{{Date: d(2026, 1, 1), Kind: KindHoliday, Name: "New Year's Day"}, a.Entries[1]}},
		"fewer":    {Entries: a.Entries[:1]},
	} {
		v := changed.Version()
		require.NotContains(t, seen, v, name)
		seen[v] = name
	}
	c := mustNew(t, a)
	require.Equal(t, a.Version(), c.Version())
}

func TestQueriesChina2026(t *testing.T) {
	t.Parallel()
	c := china2026(t)
	for _, tc := range []struct {
		date Date
		work bool
		why  string
	}{
		{d(2026, 1, 1), false, "New Year's Day (Thursday)"},
		{d(2026, 1, 2), false, "New Year bridge (Friday)"},
		{d(2026, 1, 4), true, "make-up Sunday"},
		{d(2026, 1, 5), true, "ordinary Monday"},
		{d(2026, 1, 10), false, "ordinary Saturday"},
		{d(2026, 2, 14), true, "make-up Saturday before Spring Festival"},
		{d(2026, 2, 15), false, "Spring Festival, a Sunday inside the break"},
		{d(2026, 2, 23), false, "Spring Festival, Monday"},
		{d(2026, 2, 24), true, "first working day after Spring Festival"},
		{d(2026, 2, 28), true, "make-up Saturday after Spring Festival"},
		{d(2026, 4, 6), false, "Qingming Monday"},
		{d(2026, 5, 9), true, "Labour Day make-up Saturday"},
		{d(2026, 9, 20), true, "National Day make-up Sunday"},
		{d(2026, 10, 7), false, "National Day, Wednesday"},
		{d(2026, 10, 10), true, "National Day make-up Saturday"},
		{d(2026, 10, 11), false, "ordinary Sunday"},
		{d(2027, 1, 1), true, "not in the calendar: a Friday is a working day"},
		{Date{}, false, "invalid date"},
		{d(2026, 2, 29), false, "invalid date"},
	} {
		require.Equal(t, tc.work, c.IsWorkday(tc.date), "%s: %s", tc.date, tc.why)
	}
	require.True(t, c.IsHoliday(d(2026, 2, 15)))
	require.False(t, c.IsHoliday(d(2026, 2, 14)))
	require.False(t, c.IsHoliday(d(2026, 1, 10)), "a weekend is not a holiday")
	e, ok := c.Lookup(d(2026, 2, 14))
	require.True(t, ok)
	require.Equal(t, Entry{Date: d(2026, 2, 14), Kind: KindWorkday, Name: "Spring Festival make-up day"}, e)
	_, ok = c.Lookup(d(2026, 2, 13))
	require.False(t, ok)
}

func TestNthWorkdayChina2026(t *testing.T) {
	t.Parallel()
	c := china2026(t)
	for _, tc := range []struct {
		month int
		n     BusinessDay
		want  Date // zero: no such day
	}{
		// January: 1-3 off, Sunday 4 is a make-up day, so BD1 is a Sunday.
		{1, 1, d(2026, 1, 4)},
		{1, 3, d(2026, 1, 6)},
		{1, -1, d(2026, 1, 30)},
		{1, -2, d(2026, 1, 29)},
		// February: 16 working days; both make-up Saturdays count, and the
		// last working day is Saturday 28.
		{2, 3, d(2026, 2, 4)},
		{2, 11, d(2026, 2, 14)},
		{2, 12, d(2026, 2, 24)},
		{2, 16, d(2026, 2, 28)},
		{2, 17, Date{}},
		{2, -1, d(2026, 2, 28)},
		{2, -2, d(2026, 2, 27)},
		{2, -16, d(2026, 2, 2)},
		{2, -17, Date{}},
		// May: 1-5 off, Saturday 9 is a make-up day; 19 working days.
		{5, 1, d(2026, 5, 6)},
		{5, 3, d(2026, 5, 8)},
		{5, 4, d(2026, 5, 9)},
		{5, -1, d(2026, 5, 29)},
		{5, -2, d(2026, 5, 28)},
		{5, 19, d(2026, 5, 29)},
		{5, 20, Date{}},
		{5, 25, Date{}},
		// September: Sunday 20 is a make-up day, 25-27 off.
		{9, 3, d(2026, 9, 3)},
		{9, -1, d(2026, 9, 30)},
		{9, -2, d(2026, 9, 29)},
		{9, -8, d(2026, 9, 20)},
		// October: 1-7 off, Saturday 10 is a make-up day: BD3 is that Saturday.
		{10, 1, d(2026, 10, 8)},
		{10, 3, d(2026, 10, 10)},
		{10, -1, d(2026, 10, 30)},
		{10, -2, d(2026, 10, 29)},
		// Out of range n never panics.
		{10, 0, Date{}},
		{10, 32, Date{}},
		{10, -32, Date{}},
	} {
		got, ok := c.NthWorkday(2026, time.Month(tc.month), tc.n)
		require.Equal(t, tc.want != Date{}, ok, "%s in 2026-%02d", tc.n, tc.month)
		require.Equal(t, tc.want, got, "%s in 2026-%02d", tc.n, tc.month)
	}
	for m, want := range map[time.Month]int{1: 21, 2: 16, 5: 19, 9: 22, 10: 18, 12: 23} {
		require.Equal(t, want, c.WorkdaysIn(2026, m), "working days in %s 2026", m)
	}
	require.Equal(t, 0, c.WorkdaysIn(2026, 13))
	_, ok := c.NthWorkday(0, 1, 1)
	require.False(t, ok)
}

func TestNextPreviousChina2026(t *testing.T) {
	t.Parallel()
	c := china2026(t)
	for _, tc := range []struct{ from, next, prev Date }{
		{d(2026, 2, 13), d(2026, 2, 14), d(2026, 2, 12)},
		{d(2026, 2, 14), d(2026, 2, 24), d(2026, 2, 13)},
		{d(2026, 2, 18), d(2026, 2, 24), d(2026, 2, 14)},
		{d(2026, 2, 24), d(2026, 2, 25), d(2026, 2, 14)},
		{d(2026, 2, 27), d(2026, 2, 28), d(2026, 2, 26)},
		{d(2026, 2, 28), d(2026, 3, 2), d(2026, 2, 27)},
		{d(2025, 12, 31), d(2026, 1, 4), d(2025, 12, 30)},
		{d(2026, 1, 4), d(2026, 1, 5), d(2025, 12, 31)},
		{d(2026, 9, 30), d(2026, 10, 8), d(2026, 9, 29)},
	} {
		next, ok := c.NextWorkday(tc.from)
		require.True(t, ok)
		require.Equal(t, tc.next, next, "next after %s", tc.from)
		prev, ok := c.PreviousWorkday(tc.from)
		require.True(t, ok)
		require.Equal(t, tc.prev, prev, "previous before %s", tc.from)
	}
	_, ok := c.NextWorkday(d(9999, 12, 31))
	require.False(t, ok)
	_, ok = c.PreviousWorkday(d(1, 1, 1))
	require.False(t, ok)
	_, ok = c.NextWorkday(Date{})
	require.False(t, ok)
	_, ok = c.PreviousWorkday(d(2026, 4, 31))
	require.False(t, ok)
}

// model is the obvious, slow answer the lookup tables must agree with.
type model struct {
	week    Week
	special map[Date]Kind
}

func (m model) isWorkday(date Date) bool {
	if k, ok := m.special[date]; ok {
		return k == KindWorkday
	}
	tm := time.Date(date.Year, date.Month, date.Day, 0, 0, 0, 0, time.UTC)
	return m.week.Has(tm.Weekday())
}

func (m model) nth(y int, mo time.Month, n int) (Date, bool) {
	var days []Date
	for day := 1; day <= daysIn(y, mo); day++ {
		if m.isWorkday(d(y, int(mo), day)) {
			days = append(days, d(y, int(mo), day))
		}
	}
	if n > 0 && n <= len(days) {
		return days[n-1], true
	}
	if n < 0 && -n <= len(days) {
		return days[len(days)+n], true
	}
	return Date{}, false
}

func TestAgainstModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		m := model{week: Week(rng.IntN(127) + 1), special: map[Date]Kind{}}
		if round%10 == 0 {
			m.week = WeekOf(time.Sunday) // sparse weeks make long searches
		}
		var entries []Entry
		for range rng.IntN(200) {
			date := DateOf(time.Date(2024+rng.IntN(4), 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(366)))
			if _, dup := m.special[date]; dup {
				continue
			}
			kind := KindHoliday
			if rng.IntN(3) == 0 {
				kind = KindWorkday
			}
			m.special[date] = kind
			entries = append(entries, Entry{Date: date, Kind: kind})
		}
		c := mustNew(t, Definition{Name: "m", Week: m.week, Entries: entries})
		for y := 2023; y <= 2028; y++ {
			for mo := time.January; mo <= time.December; mo++ {
				for _, n := range []int{1, 2, 3, 5, 10, 20, 23, 31, -1, -2, -3, -10, -23} {
					want, wantOK := m.nth(y, mo, n)
					got, ok := c.NthWorkday(y, mo, BusinessDay(n))
					require.Equal(t, wantOK, ok, "BD%d %d-%02d week %s", n, y, mo, m.week)
					require.Equal(t, want, got)
				}
			}
		}
		for range 300 {
			date := DateOf(time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(6*366)))
			require.Equal(t, m.isWorkday(date), c.IsWorkday(date), date)
			next, ok := c.NextWorkday(date)
			require.True(t, ok)
			want := date.AddDays(1)
			for !m.isWorkday(want) {
				want = want.AddDays(1)
			}
			require.Equal(t, want, next, "next after %s", date)
			prev, ok := c.PreviousWorkday(date)
			require.True(t, ok)
			want = date.AddDays(-1)
			for !m.isWorkday(want) {
				want = want.AddDays(-1)
			}
			require.Equal(t, want, prev, "previous before %s", date)
		}
	}
}

func TestNewCopies(t *testing.T) {
	t.Parallel()
	entries := []Entry{{Date: d(2026, 5, 1), Kind: KindHoliday}}
	c := mustNew(t, Definition{Name: "x", Entries: entries})
	entries[0].Date = d(2026, 5, 4)
	require.False(t, c.IsWorkday(d(2026, 5, 1)), "New keeps its own copy")
	def := c.Definition()
	def.Entries[0].Kind = KindWorkday
	require.False(t, c.IsWorkday(d(2026, 5, 1)), "Definition returns a copy")
	require.Equal(t, MonFri, c.Week())
	require.Equal(t, "x", c.Name())
}

// TestConcurrentUse: a *Calendar is read-only after New (run with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	c := china2026(t)
	sh := mustZone(t, "Asia/Shanghai")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				date := d(2026, 1, 1).AddDays((g*500 + i) % 365)
				c.IsWorkday(date)
				c.NextWorkday(date)
				c.NthWorkday(2026, date.Month, BusinessDay(i%5+1))
				c.Apply(Policy{Rule: RuleShift}, time.Date(date.Year, date.Month, date.Day, 9, 0, 0, 0, sh))
			}
		})
	}
	wg.Wait()
}
