package calendar

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shardjob/shardjob/admin/msg"
)

// Limits of a calendar's content.
const (
	// MaxEntries is the most special days (holidays plus extra working days)
	// one calendar holds: 27 years of every single day, far beyond any real
	// calendar (China declares about 40 a year).
	MaxEntries = 10000
	// MaxNameBytes bounds the name of a holiday or working day (UTF-8).
	MaxNameBytes = 200
	// MaxCalendarNameLen bounds the name of a calendar.
	MaxCalendarNameLen = 64
)

// Kind says what a special day is.
type Kind string

const (
	// KindHoliday is a day off, whatever its weekday.
	KindHoliday Kind = "holiday"
	// KindWorkday is an extra working day, whatever its weekday: a make-up
	// working day (the Saturdays China works to bridge a holiday) or a bank's
	// special opening day.
	KindWorkday Kind = "workday"
)

// Entry is one special day of a calendar.
type Entry struct {
	Date Date
	Kind Kind
	// Name is optional ("Spring Festival", "make-up day for Spring
	// Festival"): at most MaxNameBytes of UTF-8, no control characters, no
	// leading or trailing white space.
	Name string
}

// Definition is the content of a calendar as it is stored, imported and
// exported. The zero Week is the default, Monday to Friday.
type Definition struct {
	// Name identifies the calendar (jobs refer to it): 1 to
	// MaxCalendarNameLen letters, digits, '.', '_' or '-'.
	Name string
	// Week is the base week: its weekdays are working days unless a holiday
	// says otherwise. Zero means MonFri.
	Week Week
	// Entries are the holidays and extra working days, in any order; each
	// date at most once. A date cannot be both a holiday and a working day.
	Entries []Entry
}

// Validate reports the first problem of d, in date order for the entries,
// as a *ValidationError naming the field and, for a day, the date.
func (d Definition) Validate() error {
	if err := validCalendarName(d.Name); err != nil {
		return err
	}
	if d.Week&^allDays != 0 {
		return invalid("week", Date{}, msg.CalWeekBits, "bits", fmt.Sprintf("%#x", uint8(d.Week)))
	}
	if len(d.Entries) > MaxEntries {
		return invalid("days", Date{}, msg.CalTooManyDays, "count", len(d.Entries), "max", MaxEntries)
	}
	entries := sortedEntries(d.Entries)
	for i, e := range entries {
		if err := e.Date.check(); err != nil {
			return invalid("days", e.Date, msg.CalDayError, "date", e.Date, "error", msg.Of(err))
		}
		if e.Kind != KindHoliday && e.Kind != KindWorkday {
			return invalid("days", e.Date, msg.CalDayKind, "date", e.Date, "kind", strconv.Quote(string(e.Kind)))
		}
		if problem := dayNameProblem(e.Name); !problem.IsZero() {
			return invalid("days", e.Date, msg.CalDayName, "date", e.Date, "error", problem)
		}
		if i > 0 && entries[i-1].Date == e.Date {
			prev := entries[i-1]
			if prev.Kind != e.Kind {
				return invalid("days", e.Date, msg.CalDayBoth,
					"date", e.Date, "holiday", quoted(holidayOf(prev, e).Name), "workday", quoted(workdayOf(prev, e).Name))
			}
			return invalid("days", e.Date, msg.CalDayTwice, "date", e.Date, "kind", kindMsg(e.Kind))
		}
	}
	return nil
}

func holidayOf(a, b Entry) Entry {
	if a.Kind == KindHoliday {
		return a
	}
	return b
}

func workdayOf(a, b Entry) Entry {
	if a.Kind == KindWorkday {
		return a
	}
	return b
}

// kindMsg is the word for kind k as a message argument.
func kindMsg(k Kind) any {
	switch k {
	case KindHoliday:
		return msg.New(msg.KindHoliday)
	case KindWorkday:
		return msg.New(msg.KindWorkday)
	}
	return string(k)
}

func quoted(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

func validCalendarName(name string) error {
	if name == "" {
		return invalid("name", Date{}, msg.CalNameRequired, "max", MaxCalendarNameLen)
	}
	if len(name) > MaxCalendarNameLen {
		return invalid("name", Date{}, msg.CalNameLong, "length", len(name), "max", MaxCalendarNameLen)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return invalid("name", Date{}, msg.CalNameChars, "value", strconv.Quote(name))
		}
	}
	return nil
}

// dayNameProblem says what is wrong with the name of a special day (no
// message when the name is fine).
func dayNameProblem(name string) msg.Msg {
	switch {
	case len(name) > MaxNameBytes:
		return msg.New(msg.DayNameLong, "bytes", len(name), "max", MaxNameBytes)
	case !utf8.ValidString(name):
		return msg.New(msg.DayNameUTF8)
	case strings.TrimSpace(name) != name:
		return msg.New(msg.DayNameSpace)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return msg.New(msg.DayNameControl)
	}
	return msg.Msg{}
}

// sortedEntries returns a copy of entries sorted by date (stable, so equal
// dates keep their order).
func sortedEntries(entries []Entry) []Entry {
	out := slices.Clone(entries)
	slices.SortStableFunc(out, func(a, b Entry) int { return a.Date.Compare(b.Date) })
	return out
}

// Version returns a stable fingerprint of the content of d: 32 hex digits,
// the first 128 bits of SHA-256 over a canonical text of the base week and
// the entries sorted by date (date, kind and name). The calendar's Name is
// its identity, not its content, and is left out. Equal content gives equal
// versions, in any entry order and across releases; any change of a day, a
// kind, a name or the week gives another. Meaningful for a valid d.
func (d Definition) Version() string {
	var b strings.Builder
	b.WriteString("shardjob-calendar 1\nweek ")
	b.WriteString(d.Week.String())
	b.WriteByte('\n')
	for _, e := range sortedEntries(d.Entries) {
		b.WriteString(e.Date.String())
		b.WriteByte(' ')
		b.WriteString(string(e.Kind))
		b.WriteByte(' ')
		b.WriteString(e.Name)
		b.WriteByte('\n')
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// Calendar is a validated, immutable calendar with its lookup tables; safe
// for concurrent use. Build one with New.
type Calendar struct {
	def     Definition // entries sorted by date, Week resolved
	version string
	// pattern[w] has bit i set when day i+1 of a month whose first day is
	// weekday w falls on a working weekday (31 bits).
	pattern [7]uint32
	// From firstYear on, masks holds every month's working days (bit i is
	// day i+1) and holidays its holidays, precomputed for the years that
	// have special days (and those between): 96 bytes a year. Other months
	// follow the base week alone.
	firstYear int
	masks     []uint32
	holidays  []uint32
}

// monthIndex returns the index of a valid month in masks, or -1.
func (c *Calendar) monthIndex(y int, m time.Month) int {
	i := (y-c.firstYear)*12 + int(m) - 1
	if i < 0 || i >= len(c.masks) {
		return -1
	}
	return i
}

// New validates def and builds its calendar.
func New(def Definition) (*Calendar, error) {
	if err := def.Validate(); err != nil {
		return nil, err
	}
	def.Week = def.Week.orDefault()
	def.Entries = sortedEntries(def.Entries)
	c := &Calendar{def: def, version: def.Version()}
	for first := range 7 {
		var mask uint32
		for i := range 31 {
			if def.Week&(1<<((first+i)%7)) != 0 {
				mask |= 1 << i
			}
		}
		c.pattern[first] = mask
	}
	if len(def.Entries) == 0 {
		return c, nil
	}
	c.firstYear = def.Entries[0].Date.Year
	months := (def.Entries[len(def.Entries)-1].Date.Year - c.firstYear + 1) * 12
	c.masks, c.holidays = make([]uint32, months), make([]uint32, months)
	first := time.Date(c.firstYear, time.January, 1, 0, 0, 0, 0, time.UTC).Weekday()
	for i := range c.masks {
		n := daysIn(c.firstYear+i/12, time.Month(i%12+1))
		c.masks[i] = c.pattern[first] & (1<<n - 1)
		first = (first + time.Weekday(n)) % 7
	}
	for _, e := range def.Entries {
		i, bit := c.monthIndex(e.Date.Year, e.Date.Month), uint32(1)<<(e.Date.Day-1)
		if e.Kind == KindHoliday {
			c.masks[i] &^= bit
			c.holidays[i] |= bit
		} else {
			c.masks[i] |= bit
		}
	}
	return c, nil
}

// Name returns the calendar's name.
func (c *Calendar) Name() string { return c.def.Name }

// Week returns the base week (never zero).
func (c *Calendar) Week() Week { return c.def.Week }

// Version returns Definition.Version of the calendar's content.
func (c *Calendar) Version() string { return c.version }

// Definition returns a copy of the calendar's content, entries sorted by date.
func (c *Calendar) Definition() Definition {
	d := c.def
	d.Entries = slices.Clone(d.Entries)
	return d
}

// Lookup returns the special day at d, if d is a holiday or an extra
// working day.
func (c *Calendar) Lookup(d Date) (Entry, bool) {
	i, found := slices.BinarySearchFunc(c.def.Entries, d, func(e Entry, t Date) int { return e.Date.Compare(t) })
	if !found {
		return Entry{}, false
	}
	return c.def.Entries[i], true
}

// IsHoliday reports whether d is listed as a holiday (whatever its weekday).
func (c *Calendar) IsHoliday(d Date) bool {
	if !d.Valid() {
		return false
	}
	i := c.monthIndex(d.Year, d.Month)
	return i >= 0 && c.holidays[i]&(1<<(d.Day-1)) != 0
}

// IsWorkday reports whether d is a working day: an extra working day, or a
// weekday of the base week that is not a holiday. An invalid date is not.
func (c *Calendar) IsWorkday(d Date) bool {
	if !d.Valid() {
		return false
	}
	return c.monthMask(d.Year, d.Month)&(1<<(d.Day-1)) != 0
}

// monthMask returns the working days of a valid month: bit i is day i+1.
func (c *Calendar) monthMask(y int, m time.Month) uint32 {
	if i := c.monthIndex(y, m); i >= 0 {
		return c.masks[i]
	}
	return c.baseMask(y, m)
}

// baseMask returns the working weekdays of a valid month.
func (c *Calendar) baseMask(y int, m time.Month) uint32 {
	first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Weekday()
	return c.pattern[first] & (1<<daysIn(y, m) - 1)
}

func validMonth(y int, m time.Month) bool {
	return y >= MinYear && y <= MaxYear && m >= time.January && m <= time.December
}

// WorkdaysIn returns the number of working days in a month (0 for an
// invalid one).
func (c *Calendar) WorkdaysIn(y int, m time.Month) int {
	if !validMonth(y, m) {
		return 0
	}
	return bits.OnesCount32(c.monthMask(y, m))
}

// NthWorkday returns the n-th working day of a month: n >= 1 counts from the
// start (BD3: n = 3), n <= -1 from the end (BDL: n = -1, the last; BD-2:
// n = -2, the second to last). When the month has fewer than |n| working
// days (BD25 in a month of 20), or n is 0 or the month is invalid, it
// returns ok = false: that month has no such day and a job selecting it does
// not fire that month. It never panics.
func (c *Calendar) NthWorkday(y int, m time.Month, n BusinessDay) (Date, bool) {
	if n == 0 || n > MaxBusinessDay || n < -MaxBusinessDay || !validMonth(y, m) {
		return Date{}, false
	}
	mask := c.monthMask(y, m)
	if bits.OnesCount32(mask) < abs(int(n)) {
		return Date{}, false
	}
	if n > 0 {
		for range n - 1 {
			mask &= mask - 1 // drop the lowest working day
		}
		return Date{Year: y, Month: m, Day: bits.TrailingZeros32(mask) + 1}, true
	}
	for range -n - 1 {
		mask &^= 1 << (31 - bits.LeadingZeros32(mask)) // drop the highest
	}
	return Date{Year: y, Month: m, Day: 32 - bits.LeadingZeros32(mask)}, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// NextWorkday returns the first working day after d (d itself excluded).
// ok is false for an invalid d and past the end of year MaxYear.
func (c *Calendar) NextWorkday(d Date) (Date, bool) {
	if !d.Valid() {
		return Date{}, false
	}
	y, m := d.Year, d.Month
	mask := c.monthMask(y, m) &^ (1<<d.Day - 1)
	for mask == 0 {
		if m++; m > time.December {
			m, y = time.January, y+1
			if y > MaxYear {
				return Date{}, false
			}
		}
		mask = c.monthMask(y, m)
	}
	return Date{Year: y, Month: m, Day: bits.TrailingZeros32(mask) + 1}, true
}

// PreviousWorkday returns the last working day before d (d itself
// excluded). ok is false for an invalid d and before year MinYear.
func (c *Calendar) PreviousWorkday(d Date) (Date, bool) {
	if !d.Valid() {
		return Date{}, false
	}
	y, m := d.Year, d.Month
	mask := c.monthMask(y, m) & (1<<(d.Day-1) - 1)
	for mask == 0 {
		if m--; m < time.January {
			m, y = time.December, y-1
			if y < MinYear {
				return Date{}, false
			}
		}
		mask = c.monthMask(y, m)
	}
	return Date{Year: y, Month: m, Day: 32 - bits.LeadingZeros32(mask)}, true
}
