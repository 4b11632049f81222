package calendar

import (
	"fmt"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
)

// Rule says how a job's calendar changes the firings its cron expression
// produces.
type Rule string

const (
	// RuleNone: the calendar changes nothing; every firing fires.
	RuleNone Rule = ""
	// RuleBusinessDaysOnly: fire only on working days. A firing on a holiday
	// or on a non-working weekday is skipped.
	RuleBusinessDaysOnly Rule = "business_days_only"
	// RuleSkipHolidays: fire as the cron says except on holidays. A weekend
	// that is not a holiday still fires; an extra working day is not special.
	RuleSkipHolidays Rule = "skip_holidays"
	// RuleShift: a firing on a non-working day moves to the next (or
	// previous, see Direction) working day at the same local clock time.
	RuleShift Rule = "shift"
)

// Direction is where RuleShift moves a firing.
type Direction string

const (
	// ShiftNext moves a firing to the next working day (the default).
	ShiftNext Direction = "next"
	// ShiftPrevious moves a firing to the previous working day.
	ShiftPrevious Direction = "previous"
)

// Policy is a job's calendar rule.
type Policy struct {
	Rule Rule
	// Shift is the direction of RuleShift; empty means ShiftNext. It must be
	// empty with any other rule.
	Shift Direction
}

// Validate reports an unknown rule or direction as a *ValidationError.
func (p Policy) Validate() error {
	switch p.Rule {
	case RuleNone, RuleBusinessDaysOnly, RuleSkipHolidays:
		if p.Shift != "" {
			return invalid("shift", Date{}, msg.CalShiftOnly, "value", strconv.Quote(string(p.Shift)))
		}
	case RuleShift:
		if p.Shift != "" && p.Shift != ShiftNext && p.Shift != ShiftPrevious {
			return invalid("shift", Date{}, msg.CalShiftBad, "value", strconv.Quote(string(p.Shift)))
		}
	default:
		return invalid("rule", Date{}, msg.CalRuleBad, "value", strconv.Quote(string(p.Rule)))
	}
	return nil
}

// Reason says why a calendar removed or moved a firing. The scheduler stores
// it with the skipped firing; the preview shows it.
type Reason string

const (
	// ReasonHoliday: the firing's date is a holiday of the calendar.
	ReasonHoliday Reason = "holiday"
	// ReasonNonWorkingDay: the date is not a working weekday of the base week
	// (a weekend) and no extra working day; it is not a holiday.
	ReasonNonWorkingDay Reason = "non_working_day"
	// ReasonDuplicate: the firing was shifted onto an instant another firing
	// of the same job already has; it fires once (see Dedupe).
	ReasonDuplicate Reason = "duplicate"
	// ReasonNoWorkday: RuleShift found no working day to move to before the
	// end (or the start) of the supported years.
	ReasonNoWorkday Reason = "no_working_day"
	// ReasonNoSuchBusinessDay: a business-day selector (BD25) asks for more
	// working days than the month has; the job does not fire that month.
	// NthWorkday reports it as ok = false; the caller records the reason.
	ReasonNoSuchBusinessDay Reason = "no_such_business_day"
)

// Decision is what a calendar rule does to one candidate firing.
type Decision struct {
	// Scheduled is the candidate as given (the cron's instant, in the job's
	// zone).
	Scheduled time.Time
	// Date is the local date of Scheduled.
	Date Date
	// Fire is true when the firing happens (at At); false when it is
	// skipped, for Reason.
	Fire bool
	// Shifted is true when RuleShift moved the firing to another day.
	Shifted bool
	// At is the instant the firing lands on: Scheduled, or for a shifted
	// firing the same local clock time on ShiftedTo. It is set for a
	// duplicate too (the instant it shares); zero for other skips.
	At time.Time
	// ShiftedTo is the working day a shifted firing moved to.
	ShiftedTo Date
	// Reason is why the firing was skipped or shifted; empty when it fires
	// as scheduled.
	Reason Reason
	// Holiday is the name of the holiday when Reason is ReasonHoliday (it
	// may be empty: names are optional).
	Holiday string
}

// Note renders the decision for a person, for example
// "skipped: 2026-02-16 is a holiday (Spring Festival)" or
// "shifted from Sat 2026-02-14 to Mon 2026-02-16: not a working day". It is
// empty for a firing that fires as scheduled.
func (d Decision) Note() string {
	why := ""
	switch d.Reason {
	case ReasonHoliday:
		why = d.Date.String() + " is a holiday" + quoted(d.Holiday)
	case ReasonNonWorkingDay:
		why = d.Date.String() + " (" + d.Date.Weekday().String()[:3] + ") is not a working day"
	case ReasonNoWorkday:
		why = "no working day to shift " + d.Date.String() + " to"
	case ReasonDuplicate:
		return fmt.Sprintf("skipped: shifted onto %s, which fires already", d.At.Format("2006-01-02 15:04:05 MST"))
	case ReasonNoSuchBusinessDay:
		why = "the month has fewer working days than the business day asks for"
	}
	switch {
	case d.Shifted:
		return "shifted to " + d.ShiftedTo.String() + ": " + why
	case !d.Fire:
		return "skipped: " + why
	}
	return ""
}

// Apply decides what the policy does to the candidate firing t. t must be
// in the job's zone (t.In(zone)): its local date decides, and a shifted
// firing keeps its local clock time in that zone. A nil calendar or RuleNone
// fires everything; an invalid policy is treated as RuleNone (validate it when
// the job is saved).
//
// A shifted firing's local clock time is resolved in the zone like a
// fixed-time cron firing: when it does not exist on the new day (a
// daylight-saving gap) it fires at the instant the clocks jump; when it
// happens twice, at the first occurrence.
func (c *Calendar) Apply(p Policy, t time.Time) Decision {
	date := DateOf(t)
	d := Decision{Scheduled: t, Date: date, Fire: true, At: t}
	if c == nil || p.Validate() != nil {
		return d
	}
	off := func() { // the reason the date is not a working day
		if e, ok := c.Lookup(date); ok && e.Kind == KindHoliday {
			d.Reason, d.Holiday = ReasonHoliday, e.Name
		} else {
			d.Reason = ReasonNonWorkingDay
		}
	}
	switch p.Rule {
	case RuleBusinessDaysOnly:
		if !c.IsWorkday(date) {
			off()
			d.Fire, d.At = false, time.Time{}
		}
	case RuleSkipHolidays:
		if c.IsHoliday(date) {
			off()
			d.Fire, d.At = false, time.Time{}
		}
	case RuleShift:
		if c.IsWorkday(date) {
			return d
		}
		off()
		var to Date
		var ok bool
		if p.Shift == ShiftPrevious {
			to, ok = c.PreviousWorkday(date)
		} else {
			to, ok = c.NextWorkday(date)
		}
		if !ok {
			d.Fire, d.At, d.Reason, d.Holiday = false, time.Time{}, ReasonNoWorkday, ""
			return d
		}
		d.Shifted, d.ShiftedTo, d.At = true, to, sameClockOn(to, t)
	}
	return d
}

// wallSeconds returns t's local date and clock as seconds, as if in UTC.
func wallSeconds(t time.Time) int64 {
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, m, d, h, mi, s, 0, time.UTC).Unix()
}

// sameClockOn returns the instant of t's local clock time on date, in t's
// location: at a daylight-saving gap, the instant the clocks jump; at an
// overlap, the first occurrence.
func sameClockOn(date Date, t time.Time) time.Time {
	loc := t.Location()
	h, mi, s := t.Clock()
	want := time.Date(date.Year, date.Month, date.Day, h, mi, s, 0, time.UTC).Unix()
	r := time.Date(date.Year, date.Month, date.Day, h, mi, s, t.Nanosecond(), loc)
	got := wallSeconds(r)
	start, end := r.ZoneBounds()
	switch {
	case got > want && !start.IsZero(): // gap: time.Date went past the jump
		return start
	case got < want && !end.IsZero(): // gap: time.Date stayed before the jump
		return end
	case got != want:
		return r
	}
	// Overlap: the same wall clock may also exist in the zone before this
	// one (the clocks went back at start).
	if start.IsZero() {
		return r
	}
	_, offset := r.Zone()
	_, before := start.Add(-time.Nanosecond).Zone()
	if before > offset {
		earlier := r.Add(-time.Duration(before-offset) * time.Second)
		if earlier.Before(start) && wallSeconds(earlier) == want {
			return earlier
		}
	}
	return r
}

// Dedupe makes firings shifted onto the same instant fire once. It returns
// a copy of ds in the same order in which, among the decisions that fire at
// an equal At, one still fires — the one not shifted if there is one (a
// firing on its own day keeps its place), otherwise the earliest Scheduled
// — and the others are skipped with ReasonDuplicate (At kept: the instant
// they shared). Decisions that do not fire are unchanged.
//
// A scheduler that decides one firing at a time gets the same effect by
// using At as the run key of a shifted firing: the second firing onto an
// instant finds the key taken and is recorded as a duplicate.
func Dedupe(ds []Decision) []Decision {
	out := make([]Decision, len(ds))
	copy(out, ds)
	type instant struct {
		sec  int64
		nsec int
	}
	keep := make(map[instant]int, len(out))
	for i, d := range out {
		if !d.Fire {
			continue
		}
		k := instant{d.At.Unix(), d.At.Nanosecond()}
		j, seen := keep[k]
		if !seen {
			keep[k] = i
			continue
		}
		if better(d, out[j]) {
			keep[k] = i
			out[j] = duplicate(out[j])
		} else {
			out[i] = duplicate(d)
		}
	}
	return out
}

// better reports whether a should fire rather than b (both at one instant).
func better(a, b Decision) bool {
	if a.Shifted != b.Shifted {
		return !a.Shifted
	}
	return a.Scheduled.Before(b.Scheduled)
}

func duplicate(d Decision) Decision {
	d.Fire = false
	d.Reason = ReasonDuplicate
	d.Holiday = ""
	return d
}
