package calendar

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
)

// Supported years. Dates outside are invalid; queries on them answer "no".
const (
	MinYear = 1
	MaxYear = 9999
)

// Date is a civil date: a day of the proleptic Gregorian calendar, with no
// time of day and no time zone. The job's zone decides which date an instant
// falls on (DateOf). The zero Date is invalid.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// NewDate returns the date y-m-d; it does not normalise (see Date.Valid).
func NewDate(y int, m time.Month, d int) Date { return Date{Year: y, Month: m, Day: d} }

// DateOf returns the local date of t in t's own location: pass t.In(zone).
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{Year: y, Month: m, Day: d}
}

// ParseDate parses YYYY-MM-DD (exactly: four-digit year, two-digit month
// and day).
func ParseDate(s string) (Date, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, msg.New(msg.DateFormat, "value", strconv.Quote(s))
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 {
		return Date{}, msg.New(msg.DateFormat, "value", strconv.Quote(s))
	}
	date := Date{Year: y, Month: time.Month(m), Day: d}
	if err := date.check(); err != nil {
		return Date{}, msg.New(msg.DateInvalid, "value", strconv.Quote(s), "error", msg.Of(err))
	}
	return date, nil
}

// digits parses a string of ASCII digits only (no sign, no spaces).
// monthCodes name the months in messages.
var monthCodes = [13]msg.Code{"", msg.Month1, msg.Month2, msg.Month3, msg.Month4, msg.Month5, msg.Month6,
	msg.Month7, msg.Month8, msg.Month9, msg.Month10, msg.Month11, msg.Month12}

// monthMsg is month m's name (January) as a message argument.
func monthMsg(m time.Month) msg.Msg { return msg.New(monthCodes[m]) }

func digits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := range len(s) {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Valid reports whether d is a real date between MinYear and MaxYear.
func (d Date) Valid() bool { return d.check() == nil }

func (d Date) check() error {
	switch {
	case d.Year < MinYear || d.Year > MaxYear:
		return msg.New(msg.DateYear, "year", d.Year, "min", MinYear, "max", MaxYear)
	case d.Month < time.January || d.Month > time.December:
		return msg.New(msg.DateMonth, "month", int(d.Month))
	case d.Day < 1 || d.Day > daysIn(d.Year, d.Month):
		return msg.New(msg.DateDay, "day", d.Day, "max", daysIn(d.Year, d.Month), "month", monthMsg(d.Month), "year", d.Year)
	}
	return nil
}

// String renders YYYY-MM-DD.
func (d Date) String() string {
	var b [10]byte
	put := func(at, width, v int) {
		for i := at + width - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	if d.Year < 0 || d.Year > 9999 || d.Month < 0 || d.Month > 99 || d.Day < 0 || d.Day > 99 {
		return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
	}
	put(0, 4, d.Year)
	b[4] = '-'
	put(5, 2, int(d.Month))
	b[7] = '-'
	put(8, 2, d.Day)
	return string(b[:])
}

// Weekday returns the day of the week of a valid date.
func (d Date) Weekday() time.Weekday { return d.midnight().Weekday() }

// AddDays returns the date n days after d (before, for negative n).
func (d Date) AddDays(n int) Date { return dateOfDays(d.days() + int64(n)) }

// Compare returns -1, 0 or +1 as d is before, equal to or after e.
func (d Date) Compare(e Date) int {
	switch {
	case d.Year != e.Year:
		return sign(d.Year - e.Year)
	case d.Month != e.Month:
		return sign(int(d.Month - e.Month))
	default:
		return sign(d.Day - e.Day)
	}
}

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.Compare(e) < 0 }

// After reports whether d is after e.
func (d Date) After(e Date) bool { return d.Compare(e) > 0 }

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// days returns the day number (days since 1970-01-01).
func (d Date) days() int64 { return d.midnight().Unix() / 86400 }

func (d Date) midnight() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

func dateOfDays(n int64) Date { return DateOf(time.Unix(n*86400, 0).UTC()) }

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func daysIn(y int, m time.Month) int {
	if m == time.February && isLeap(y) {
		return 29
	}
	if m < time.January || m > time.December {
		return 0
	}
	return monthDays[m]
}

// Week is the base week of a calendar: the set of weekdays that are working
// days unless a holiday says otherwise. Bit i stands for time.Weekday(i).
// The zero Week means the default, MonFri.
type Week uint8

// MonFri is the default base week, Monday to Friday.
const MonFri Week = 1<<time.Monday | 1<<time.Tuesday | 1<<time.Wednesday | 1<<time.Thursday | 1<<time.Friday

const allDays Week = 1<<7 - 1

// WeekOf returns the week made of the given working weekdays.
func WeekOf(days ...time.Weekday) Week {
	var w Week
	for _, d := range days {
		if d >= time.Sunday && d <= time.Saturday {
			w |= 1 << d
		}
	}
	return w
}

// Has reports whether d is a working weekday of w (the zero Week is MonFri).
func (w Week) Has(d time.Weekday) bool { return w.orDefault()&(1<<d) != 0 }

func (w Week) orDefault() Week {
	if w == 0 {
		return MonFri
	}
	return w
}

var weekdayNames = [7]string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}

// String renders the working weekdays Monday first, comma-separated and in
// capitals: "MON,TUE,WED,THU,FRI". ParseWeek reads it back.
func (w Week) String() string {
	w = w.orDefault()
	parts := make([]string, 0, 7)
	for i := 1; i <= 7; i++ {
		if d := i % 7; w&(1<<d) != 0 {
			parts = append(parts, weekdayNames[d])
		}
	}
	return strings.Join(parts, ",")
}

// ParseWeek reads a base week written as a list of day names and ranges, in
// any letter case: "MON-FRI", "SUN-THU", "MON,TUE,THU", "MON-WED,FRI". A
// range runs Sunday to Saturday and does not wrap (write "FRI-SAT,SUN" rather
// than "FRI-SUN"). The empty string is the default, MON-FRI.
func ParseWeek(s string) (Week, error) {
	if strings.TrimSpace(s) == "" {
		return MonFri, nil
	}
	var w Week
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, ok := dayByName(lo)
		if !ok {
			return 0, msg.New(msg.CalWeekDayName, "week", strconv.Quote(s), "value", strconv.Quote(strings.TrimSpace(lo)))
		}
		b := a
		if isRange {
			if b, ok = dayByName(hi); !ok {
				return 0, msg.New(msg.CalWeekDayName, "week", strconv.Quote(s), "value", strconv.Quote(strings.TrimSpace(hi)))
			}
			if b < a {
				return 0, msg.New(msg.CalWeekBackwards, "week", strconv.Quote(s), "range", part)
			}
		}
		for d := a; d <= b; d++ {
			w |= 1 << d
		}
	}
	return w, nil
}

func dayByName(s string) (time.Weekday, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	for i, n := range weekdayNames {
		if n == s {
			return time.Weekday(i), true
		}
	}
	return 0, false
}

// BusinessDay is the N of a business-day-of-month selector: N >= 1 is the
// N-th working day of the month (BD3 is 3), N <= -1 counts from the end (BDL,
// the last working day, is -1; BD-2, the second to last, is -2). 0 is not a
// business day.
type BusinessDay int

// MaxBusinessDay bounds |N|: no month has more than 31 days.
const MaxBusinessDay = 31

// ParseBusinessDay reads the day-of-month syntax BDn (1 <= n <= 31), BDL and
// BD-n (1 <= n <= 31; BD-1 is BDL), in any letter case.
func ParseBusinessDay(s string) (BusinessDay, error) {
	u := strings.ToUpper(s)
	rest, ok := strings.CutPrefix(u, "BD")
	if !ok {
		return 0, fmt.Errorf("business day %q: must start with BD (BD3, BDL, BD-2)", s)
	}
	if rest == "L" {
		return -1, nil
	}
	neg := false
	if r, cut := strings.CutPrefix(rest, "-"); cut {
		neg, rest = true, r
	}
	n, ok := digits(rest)
	if !ok || len(rest) > 2 {
		return 0, fmt.Errorf("business day %q: want BDn (n-th working day), BDL (last) or BD-n (n-th from last), n from 1 to %d", s, MaxBusinessDay)
	}
	if n < 1 || n > MaxBusinessDay {
		return 0, fmt.Errorf("business day %q: %d is outside 1-%d", s, n, MaxBusinessDay)
	}
	if neg {
		return BusinessDay(-n), nil
	}
	return BusinessDay(n), nil
}

// String renders BD3, BDL or BD-2 (and BD0 for the invalid zero).
func (b BusinessDay) String() string {
	if b == -1 {
		return "BDL"
	}
	return "BD" + strconv.Itoa(int(b))
}
