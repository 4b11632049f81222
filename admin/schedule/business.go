package schedule

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/msg"
)

// MaxShiftPerDay bounds how often a schedule with the rule shift may fire
// a day. Shift moves whole days of firings onto a working day, and finding
// the firings moved onto one day means looking at every candidate of the
// non-working days around it; an hourly job is the densest for which that
// means something (a every-minute job shifted would only pile duplicates
// onto the working day's own firings). Denser schedules are refused by
// WithCalendar: use business_days_only for them.
const MaxShiftPerDay = 24

// CalendarSchedule is a Schedule under a business calendar and a job's
// calendar rule (calendar.Policy). It is immutable and safe for concurrent
// use. Build one with WithCalendar.
type CalendarSchedule struct {
	s      *Schedule
	cal    *calendar.Calendar
	policy calendar.Policy
}

// CalendarFiring is one firing of a CalendarSchedule, with the candidate
// firings the calendar removed before it.
type CalendarFiring struct {
	// At is the instant the job fires, in UTC: the run key. For a shifted
	// firing it is the moved instant, not the cron's.
	At time.Time
	// Local is At in the job's zone.
	Local time.Time
	// Decision is the candidate that fires at At: its Scheduled instant (the
	// cron's), and for a shifted firing Shifted, ShiftedTo and Reason (why
	// it moved; Decision.Note renders it).
	Decision calendar.Decision
	// Skipped are the candidates the calendar removed that this firing
	// accounts for, oldest Scheduled first, at most MaxSkippedListed: the
	// candidates skipped after `after` up to At (holiday, non_working_day,
	// no_such_business_day, no_working_day) and those shifted onto At that
	// do not fire because another firing there does (duplicate). A chain of
	// Next calls, each from the previous At, reports every candidate exactly
	// once, as a firing or as skipped.
	Skipped []calendar.Decision
	// SkippedCount is the total of skipped candidates (>= len(Skipped)).
	SkippedCount int
}

// WithCalendar returns s under the calendar cal and the rule p.
//
// cal may be nil when s does not NeedsCalendar and p is the zero Policy
// (the schedule then fires as without a calendar). Errors are
// *ValidationError values matching ErrInvalid:
//
//   - an expression with a business day and no calendar ("cron field 3 (day
//     of month): BD3 needs a calendar: set the job's calendar"), which also
//     matches ErrNeedsCalendar;
//   - a rule without a calendar, an invalid rule or direction;
//   - the rule shift on a schedule that fires more than MaxShiftPerDay times
//     a day.
//
// A business day is always a working day, so no rule changes the firings of
// an expression with BD3: any rule is accepted with it.
func WithCalendar(s *Schedule, cal *calendar.Calendar, p calendar.Policy) (*CalendarSchedule, error) {
	if cal == nil && s.bd != 0 {
		ve := invalid(s.bdPos, "day of month", s.bd.String(), msg.New(msg.CronBDNeedsCalendar, "bd", s.bd))
		ve.kind = ErrNeedsCalendar
		return nil, ve
	}
	if err := p.Validate(); err != nil {
		name, value, reason := "calendar rule", string(p.Rule), msg.Of(err)
		var cve *calendar.ValidationError
		if errors.As(err, &cve) {
			reason = cve.Reason // without "calendar <field>: "
			if cve.Field == "shift" {
				name, value = "calendar shift", string(p.Shift)
			}
		}
		return nil, invalid(0, name, value, reason)
	}
	if cal == nil && p.Rule != calendar.RuleNone {
		ve := invalid(0, "calendar rule", string(p.Rule), msg.New(msg.RuleNeedsCalendar, "rule", p.Rule))
		ve.kind = ErrNeedsCalendar
		return nil, ve
	}
	if p.Rule == calendar.RuleShift && s.bd == 0 {
		if perDay := s.firingsPerDay(); perDay > MaxShiftPerDay {
			return nil, invalid(0, "calendar rule", string(p.Rule), msg.New(msg.RuleShiftTooOften,
				"max", MaxShiftPerDay, "expr", strconv.Quote(s.resolved), "count", perDay, "rule", calendar.RuleBusinessDaysOnly))
		}
	}
	return &CalendarSchedule{s: s, cal: cal, policy: p}, nil
}

// firingsPerDay returns how many times a day the schedule fires at most.
func (s *Schedule) firingsPerDay() int64 {
	if s.every > 0 {
		return (secondsPerDay + s.every - 1) / s.every
	}
	if s.once {
		return 1
	}
	return s.perDay
}

// Schedule returns the schedule without its calendar.
func (c *CalendarSchedule) Schedule() *Schedule { return c.s }

// Calendar returns the calendar (nil when there is none).
func (c *CalendarSchedule) Calendar() *calendar.Calendar { return c.cal }

// Policy returns the calendar rule.
func (c *CalendarSchedule) Policy() calendar.Policy { return c.policy }

// Next returns the first firing strictly after `after`, with the candidate
// firings the calendar removed on the way (see CalendarFiring.Skipped).
//
// The candidates are the cron expression's firings (Schedule.Next), or for
// BD3 the expression's times on the third working day of each month its
// month field allows; the rule then decides each one (calendar.Apply).
// Shifted firings that land on one instant fire once: the candidate on its
// own day, otherwise the earliest, fires; the others are duplicates.
//
// Shift (next) moves firings forward, so the firing after `after` may come
// from a candidate before it: Next looks back to the first non-working day
// after the working day before `after`. Shift (previous) moves firings
// backward: a firing on working day W gathers the candidates up to the next
// working day after W, so Next looks ahead that far. Neither returns an
// instant <= after: a candidate moved to `after` or before belongs to an
// earlier firing.
//
// The search is bounded: when nothing fires within about five years of
// candidates (a calendar with no working day for years, a BD25 no month has)
// Next returns an error matching ErrNoFiring. Its work is bounded too: at
// most MaxSkippedListed skipped candidates are listed one by one, the others
// of a skipped day are counted from the field bitmasks.
func (c *CalendarSchedule) Next(after time.Time) (CalendarFiring, error) {
	a := max(after.Unix(), minInstant)
	if a > maxInstant-2*horizon {
		return CalendarFiring{}, c.noFiring(after)
	}
	var r collector
	var at int64
	var ok bool
	switch {
	case c.s.bd != 0:
		at, ok = c.nextBusinessDay(a, &r)
	case c.cal == nil || c.policy.Rule == calendar.RuleNone:
		if at, ok = c.s.nextSec(a); ok {
			r.fire = calendar.Decision{Scheduled: c.local(at), Date: calendar.DateOf(c.local(at)), Fire: true, At: c.local(at)}
		}
	case c.policy.Rule == calendar.RuleShift:
		at, ok = c.nextShift(a, &r)
	default:
		at, ok = c.nextSkipping(a, &r)
	}
	if !ok {
		return CalendarFiring{}, c.noFiring(after)
	}
	return r.firing(c.local(at)), nil
}

// Preview returns up to n (at most 1000) firings strictly after `after`,
// each with the candidates skipped before it. It stops early, without an
// error, where Next finds no firing.
func (c *CalendarSchedule) Preview(after time.Time, n int) []CalendarFiring {
	n = min(n, maxPreview)
	var out []CalendarFiring
	for len(out) < n {
		f, err := c.Next(after)
		if err != nil {
			break
		}
		out = append(out, f)
		after = f.At
	}
	return out
}

func (c *CalendarSchedule) noFiring(after time.Time) error {
	name := "no calendar"
	if c.cal != nil {
		name = "calendar " + c.cal.Name()
	}
	return fmt.Errorf("%w: %q (%s, rule %q) has no firing within about five years after %s",
		ErrNoFiring, c.s.resolved, name, c.policy.Rule, after.UTC().Format(time.RFC3339))
}

func (c *CalendarSchedule) local(u int64) time.Time { return time.Unix(u, 0).In(c.s.loc) }

// collector gathers the outcome of one Next call.
type collector struct {
	fire    calendar.Decision
	skipped []calendar.Decision
	count   int
}

// skip records a removed candidate: listed while there is room, counted
// always.
func (r *collector) skip(d calendar.Decision) {
	r.count++
	if len(r.skipped) < MaxSkippedListed {
		r.skipped = append(r.skipped, d)
	}
}

func (r *collector) full() bool { return len(r.skipped) >= MaxSkippedListed }

func (r *collector) firing(local time.Time) CalendarFiring {
	slices.SortStableFunc(r.skipped, func(a, b calendar.Decision) int { return a.Scheduled.Compare(b.Scheduled) })
	f := CalendarFiring{At: local.UTC(), Local: local, Decision: r.fire, SkippedCount: r.count}
	if len(r.skipped) > 0 {
		f.Skipped = r.skipped
	}
	return f
}

// dateDays returns the day number of a calendar date.
func dateDays(d calendar.Date) int64 { return daysFromCivil(int64(d.Year), int(d.Month), d.Day) }

// startOfDay returns the first instant whose local date is the day `days`
// (or later): it walks the zone's periods from well before that day, as
// wall time is monotonic only inside a period.
func (s *Schedule) startOfDay(days int64) int64 {
	w0 := days * secondsPerDay
	u := w0 - maxOffsetSpan
	for {
		p := lookupPeriod(s.loc, u)
		if x := max(w0-p.off, u); x < p.end {
			return x
		}
		u = p.end
	}
}

// nextSkipping is Next for business_days_only and skip_holidays: both
// decide by the candidate's date alone, so once the list of skipped
// candidates is full, the rest of a skipped day is counted and jumped over.
func (c *CalendarSchedule) nextSkipping(a int64, r *collector) (int64, bool) {
	limit := a + horizon
	for u := a; ; {
		f, ok := c.s.nextSec(u)
		if !ok || f > limit {
			return 0, false
		}
		d := c.cal.Apply(c.policy, c.local(f))
		if d.Fire {
			r.fire = d
			return f, true
		}
		r.skip(d)
		u = f
		if r.full() {
			end := c.s.startOfDay(dateDays(d.Date) + 1)
			if end > f {
				r.count += int(c.s.countBetween(f, end))
				u = end - 1
			}
		}
	}
}

// nextShift is Next for the rule shift (see Next for the look-back and the
// look-ahead). It considers every candidate that can land after a before
// the first landing instant found (plus the day's others), keeps the
// earliest landing instant X, and reports the other candidates landing on
// X as duplicates.
func (c *CalendarSchedule) nextShift(a int64, r *collector) (int64, bool) {
	previous := c.policy.Shift == calendar.ShiftPrevious
	limit := a + horizon
	start := a
	if !previous {
		// Candidates on the non-working days since the last working day
		// before a's date may land after a.
		day := calendar.DateOf(c.local(a))
		if pw, ok := c.cal.PreviousWorkday(day); ok {
			start = min(a, c.s.startOfDay(dateDays(pw)+1)-1)
		} else {
			start = a - horizon
		}
		start = max(start, a-horizon, minInstant)
	}
	var buf [4]calendar.Decision // the usual group: one firing, no duplicate
	group := buf[:0]
	var pending []calendar.Decision
	found := false
	var x int64
	var stop calendar.Date // candidates on stop or later cannot land on X or before
	for u := start; ; {
		f, ok := c.s.nextSec(u)
		if !ok || f > limit {
			break
		}
		u = f
		if found && !previous && f > x {
			break // shift next lands a candidate on its own instant or later
		}
		t := c.local(f)
		date := calendar.DateOf(t)
		if found && !date.Before(stop) {
			break
		}
		if f <= a && c.cal.IsWorkday(date) {
			continue // fires where it is, not after a
		}
		d := c.cal.Apply(c.policy, t)
		if !d.Fire { // no working day to move to
			if f > a {
				pending = append(pending, d)
			}
			continue
		}
		at := d.At.Unix()
		switch {
		case at <= a:
			continue
		case !found || at < x:
			found, x, group = true, at, append(group[:0], d)
			stop = d.ShiftedTo
			if !d.Shifted {
				stop = d.Date
			}
			if previous {
				if nw, ok := c.cal.NextWorkday(stop); ok {
					stop = nw
				} else {
					stop = calendar.Date{Year: calendar.MaxYear + 1}
				}
			} else {
				stop = stop.AddDays(1)
			}
		case at == x:
			group = append(group, d)
		}
		if !previous && !d.Shifted && at == x {
			break // every later candidate lands after x
		}
	}
	if !found || x > limit {
		return 0, false
	}
	if len(group) == 1 {
		r.fire = group[0]
	} else {
		for _, d := range calendar.Dedupe(group) {
			if d.Fire {
				r.fire = d
			} else {
				r.skip(d)
			}
		}
	}
	for _, d := range pending {
		if d.Scheduled.Unix() <= x {
			r.skip(d)
		}
	}
	return x, true
}

// nextBusinessDay is Next for an expression with a business day: month by
// month, the expression's first time after a on the month's business day;
// a month without that business day is skipped with
// ReasonNoSuchBusinessDay, at the expression's first time on the month's
// last day (the instant it stands for in the run history).
func (c *CalendarSchedule) nextBusinessDay(a int64, r *collector) (int64, bool) {
	t := c.local(a)
	y, m := t.Year(), t.Month()
	for range 5*12 + 2 {
		if c.s.month&(1<<uint(m)) != 0 {
			if date, ok := c.cal.NthWorkday(y, m, c.s.bd); ok {
				if f, ok := c.s.nextOnDate(date, a); ok {
					d := c.cal.Apply(c.policy, c.local(f))
					if d.Fire && d.At.Unix() > a {
						r.fire = d
						return d.At.Unix(), true
					}
					r.skip(d) // a business day is a working day: not reached
				}
			} else {
				last := calendar.Date{Year: y, Month: m, Day: daysIn(int64(y), int(m))}
				k, ok := c.s.nextOnDate(last, minInstant)
				if !ok {
					k = c.s.startOfDay(dateDays(last))
				}
				if k > a {
					r.skip(calendar.Decision{Scheduled: c.local(k), Date: last, Reason: calendar.ReasonNoSuchBusinessDay})
				}
			}
		}
		if m++; m > time.December {
			m, y = time.January, y+1
		}
	}
	return 0, false
}

// nextOnDate returns the first firing after a of the expression's times of
// day on the local date d, by the daylight-saving rules of Next, and false
// when there is none that day.
func (s *Schedule) nextOnDate(d calendar.Date, a int64) (int64, bool) {
	day := s.onDate(d)
	w0 := dateDays(d) * secondsPerDay
	from := max(a, w0-maxOffsetSpan, minInstant)
	return day.nextCronUntil(from, min(w0+secondsPerDay+maxOffsetSpan, maxInstant))
}

// Count returns the number of firings in [from, to) under the calendar: the
// instants Next returns, each counted once (so a watchdog expecting runs
// and the scheduler creating them agree). It counts whole days from the
// field bitmasks for business_days_only, skip_holidays and business days,
// and follows Next for shift (at most MaxShiftPerDay firings a day).
func (c *CalendarSchedule) Count(from, to time.Time) int64 {
	return c.countBetween(ceilSec(from)-1, ceilSec(to))
}

// ceilSec returns the first whole second at or after t.
func ceilSec(t time.Time) int64 {
	if t.Nanosecond() > 0 {
		return t.Unix() + 1
	}
	return t.Unix()
}

// nextAt is Next's instant alone.
func (c *CalendarSchedule) nextAt(a int64) (int64, bool) {
	f, err := c.Next(time.Unix(a, 0))
	if err != nil {
		return 0, false
	}
	return f.At.Unix(), true
}

// countBetween returns the number of firings f with lo < f < hi.
func (c *CalendarSchedule) countBetween(lo, hi int64) int64 {
	lo, hi = max(lo, minInstant-1), min(hi, maxInstant)
	if hi-lo < 2 {
		return 0
	}
	s := c.s
	switch {
	case s.bd != 0:
		return c.countBusinessDays(lo, hi)
	case c.cal == nil || c.policy.Rule == calendar.RuleNone:
		return s.countBetween(lo, hi)
	case c.policy.Rule == calendar.RuleShift:
		var n int64
		for a := lo; ; n++ {
			f, ok := c.nextAt(a)
			if !ok || f >= hi {
				return n
			}
			a = f
		}
	}
	var n int64
	first, last := dateDays(calendar.DateOf(c.local(lo+1))), dateDays(calendar.DateOf(c.local(hi-1)))
	for day := first; day <= last; day++ {
		y, m, d := civilFromDays(day)
		date := calendar.Date{Year: int(y), Month: time.Month(m), Day: d}
		if c.policy.Rule == calendar.RuleBusinessDaysOnly && !c.cal.IsWorkday(date) ||
			c.policy.Rule == calendar.RuleSkipHolidays && c.cal.IsHoliday(date) {
			continue
		}
		from, to := max(lo, s.startOfDay(day)-1), min(hi, s.startOfDay(day+1))
		if to-from >= 2 {
			n += s.countBetween(from, to)
		}
	}
	return n
}

// countBusinessDays counts the firings of an expression with a business day
// in (lo, hi): month by month, its times on the month's business day.
func (c *CalendarSchedule) countBusinessDays(lo, hi int64) int64 {
	var n int64
	from, to := c.local(lo+1), c.local(hi-1)
	y, m := from.Year(), from.Month()
	for y < to.Year() || y == to.Year() && m <= to.Month() {
		if c.s.month&(1<<uint(m)) != 0 {
			if date, ok := c.cal.NthWorkday(y, m, c.s.bd); ok {
				day := c.s.onDate(date)
				w0 := dateDays(date) * secondsPerDay
				if a, b := max(lo, w0-maxOffsetSpan), min(hi, w0+secondsPerDay+maxOffsetSpan); b-a >= 2 {
					n += day.countBetween(a, b)
				}
			}
		}
		if m++; m > time.December {
			m, y = time.January, y+1
		}
	}
	return n
}

// onDate returns a copy of s whose day fields match the local date d alone.
func (s *Schedule) onDate(d calendar.Date) Schedule {
	day := *s
	day.month, day.dom, day.domStar, day.dowStar = 1<<uint(d.Month), 1<<uint(d.Day), false, true
	return day
}

// CalendarPlan is what PlanCalendar decides for a due job.
type CalendarPlan struct {
	// Decision is Plan's decision over the calendar's firings: their
	// instants (CalendarFiring.At) are the run keys that fire, are skipped
	// as late, and Next.
	Decision
	// NextFiring is the firing after now, with the candidates the calendar
	// removed before it (for a due job, Decision.Next is its At); its At is
	// zero when Next found none.
	NextFiring CalendarFiring
	// CalendarSkipped are the candidates the calendar removed among the due
	// firings (those up to now), oldest first, at most MaxSkippedListed;
	// CalendarSkippedCount has their total. When the backlog is too long to
	// follow firing by firing (more than MaxCatchUp+MaxSkippedListed+1 late
	// firings), the part Plan counts instead is left out of both.
	CalendarSkipped      []calendar.Decision
	CalendarSkippedCount int
}

// PlanCalendar is Plan for a job with a calendar: the due firings are the
// calendar's (CalendarSchedule.Next), so a holiday is not a misfire, a
// shifted firing is due at its moved instant, and the counts of late
// firings agree with the calendar. Like Plan, its work is bounded whatever
// the backlog.
func PlanCalendar(c *CalendarSchedule, nextFireAt, now time.Time, cfg MisfireConfig) CalendarPlan {
	src := &calendarSource{c: c, now: now.Unix()}
	var p CalendarPlan
	p.Decision = plan(src, nextFireAt, now, cfg)
	if nf, err := c.Next(now); err == nil {
		p.NextFiring = nf
	}
	p.CalendarSkippedCount = src.rec.count
	if len(src.rec.skipped) > 0 {
		p.CalendarSkipped = src.rec.skipped
	}
	return p
}

// calendarSource is a CalendarSchedule as Plan sees it; it gathers the
// candidates removed before the due firings (those up to now) that Plan
// follows one by one.
type calendarSource struct {
	c   *CalendarSchedule
	now int64
	rec collector
}

func (p *calendarSource) nextSec(a int64) (int64, bool) {
	f, err := p.c.Next(time.Unix(a, 0))
	if err != nil {
		return 0, false
	}
	at := f.At.Unix()
	if at <= p.now {
		for _, d := range f.Skipped {
			p.rec.skip(d)
		}
		p.rec.count += f.SkippedCount - len(f.Skipped)
	}
	return at, true
}

func (p *calendarSource) countBetween(lo, hi int64) int64 { return p.c.countBetween(lo, hi) }

func (p *calendarSource) lastBefore(from, hi int64) int64 {
	return lastBeforeBy(p.c.nextAt, from, hi)
}
