package schedule

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/msg"
)

// Spec is what a job stores about its schedule.
type Spec struct {
	Expr   string    // cron text: 5 fields, 6 with seconds first, a descriptor or "@every <duration>"
	Zone   string    // IANA name; "" means "UTC"
	JobKey string    // stable identity of the job, e.g. "app/name"; used by H
	Anchor time.Time // for @every: firings are Anchor + k*d (k >= 1, Anchor truncated to the second); zero means the Unix epoch
}

// Schedule is a compiled Spec. It is immutable and safe for concurrent use.
type Schedule struct {
	spec     Spec
	loc      *time.Location
	resolved string
	robfig   string // the text handed to robfig's parser

	// @every: interval and anchor in Unix seconds (every == 0 for cron).
	every, anchor int64

	// cron: robfig bitmasks without the star bit; bit i set = value i matches.
	second, minute, hour, dom, month, dow uint64
	domStar, dowStar                      bool
	// fixed: the hour and minute fields each match exactly one value, so a
	// nonexistent (spring-forward) wall time fires at the transition instant
	// and a repeated (fall-back) one only at its first occurrence.
	fixed  bool
	perDay int64 // matching seconds in a matching day

	// bd is the business-day selector of the day-of-month field (BD3 is 3,
	// BDL -1, BD-2 -2), 0 when there is none. A schedule with one matches no
	// day of its own (dom is 0, domStar false): only a calendar says which
	// day BD3 is (see WithCalendar), so Next finds no firing.
	bd    calendar.BusinessDay
	bdPos int // 1-based position of the day-of-month field as written

	// @at: the one firing (Unix seconds) and the note of a clock change
	// that decided it (once.go).
	once   bool
	at     int64
	atNote msg.Msg
}

// Firing is one planned firing, for previews.
type Firing struct {
	At    time.Time // the instant, in UTC
	Local time.Time // the same instant in the job's zone
	// Note is "" for an ordinary firing, or explains a daylight-saving case,
	// e.g. "DST gap: 02:30 does not exist, fired at 03:00 EDT" (a fixed
	// time moved to the transition), "DST gap: 02:00 on 2026-03-08 does not
	// exist and is skipped" (on the first firing after scheduled times that
	// a non-fixed schedule skipped) or "DST overlap: first 01:30 (EDT); the
	// repeated 01:30 EST does not fire". Several notes are joined by "; ".
	Note string
	// Notes are the same notes as message codes (admin/msg), for readers
	// in other languages.
	Notes []msg.Msg
}

// Location returns the job's zone.
func (s *Schedule) Location() *time.Location { return s.loc }

// Resolved returns the expression with every H replaced by the values chosen
// for this job (descriptors are returned in lower case, @every normalised).
func (s *Schedule) Resolved() string { return s.resolved }

// String returns Resolved.
func (s *Schedule) String() string { return s.resolved }

// Spec returns the spec the schedule was parsed from.
func (s *Schedule) Spec() Spec { return s.spec }

// Fixed reports whether the hour and minute fields each match exactly one
// value (the seconds field does not count). A fixed schedule whose time does
// not exist on a spring-forward day fires once at the transition instant and
// fires only once in a repeated (fall-back) hour; any other schedule skips
// nonexistent times and fires at every real instant of a repeated hour.
func (s *Schedule) Fixed() bool { return s.every == 0 && !s.once && s.fixed }

// BusinessDay returns the business-day selector of the day-of-month field
// (BD3 is 3, BDL -1, BD-2 -2), or 0 when the expression has none.
func (s *Schedule) BusinessDay() calendar.BusinessDay { return s.bd }

// NeedsCalendar reports whether the expression selects a business day of
// the month (BD3, BDL, BD-2): its days come from a calendar, so it fires
// only through WithCalendar, and Next and Preview of the Schedule alone find
// no firing.
func (s *Schedule) NeedsCalendar() bool { return s.bd != 0 }

// Next returns the first firing strictly after `after` (an instant; its zone
// does not matter), in UTC, or the zero Time if there is none within about
// five years. Firings fall on whole seconds. A schedule that NeedsCalendar
// has no firing of its own: Next returns the zero Time (WithCalendar reports
// the missing calendar as an error).
func (s *Schedule) Next(after time.Time) time.Time {
	f, ok := s.nextSec(after.Unix())
	if !ok {
		return time.Time{}
	}
	return time.Unix(f, 0).UTC()
}

// maxPreview bounds Preview.
const maxPreview = 1000

// Preview returns up to n (at most 1000) firings strictly after `after`,
// with daylight-saving notes.
func (s *Schedule) Preview(after time.Time, n int) []Firing {
	n = min(n, maxPreview)
	if n <= 0 {
		return nil
	}
	out := make([]Firing, 0, n)
	a := after.Unix()
	for len(out) < n {
		f, ok := s.nextSec(a)
		if !ok {
			break
		}
		notes := s.note(a, f)
		texts := make([]string, len(notes))
		for i, n := range notes {
			texts[i] = n.String()
		}
		out = append(out, Firing{At: time.Unix(f, 0).UTC(), Local: time.Unix(f, 0).In(s.loc), Note: strings.Join(texts, "; "), Notes: notes})
		a = f
	}
	return out
}

// note explains a firing f, the first after prev, that a daylight-saving
// transition affected: scheduled times skipped since prev (non-fixed
// schedules), a fixed time moved to the transition, or a repeated hour.
func (s *Schedule) note(prev, f int64) []msg.Msg {
	if s.once {
		if s.atNote.IsZero() {
			return nil
		}
		return []msg.Msg{s.atNote}
	}
	if s.every > 0 || s.loc == time.UTC {
		return nil
	}
	var notes []msg.Msg
	if !s.fixed {
		notes = s.skippedNotes(prev, f)
	}
	if n := s.firingNote(f); !n.IsZero() {
		notes = append(notes, n)
	}
	return notes
}

// skippedNotes describes every spring-forward gap in (prev, f] whose
// nonexistent wall times the schedule would have matched: they are not
// firings, so the next firing says that they were skipped.
func (s *Schedule) skippedNotes(prev, f int64) []msg.Msg {
	var notes []msg.Msg
	for u := prev + 1; u <= f; {
		p := lookupPeriod(s.loc, u)
		if p.start > prev {
			if from, to, ok := s.gapAt(p); ok {
				if first, hit := s.nextWall(from, to); hit {
					count, last, more := s.gapTimes(first, to)
					day := time.Unix(first, 0).UTC().Format(time.DateOnly)
					if count == 1 {
						notes = append(notes, msg.New(msg.DSTGapSkippedOne, "time", s.clock(first), "day", day))
					} else {
						notes = append(notes, msg.New(msg.DSTGapSkippedMany, "count", fmt.Sprint(count)+more, "from", s.clock(first), "to", s.clock(last), "day", day))
					}
				}
			}
		}
		if p.end == math.MaxInt64 {
			break
		}
		u = p.end
	}
	return notes
}

// firingNote explains a firing that a transition moved (a fixed time in a
// spring-forward gap) or that falls in a repeated hour.
func (s *Schedule) firingNote(f int64) msg.Msg {
	p := lookupPeriod(s.loc, f)
	wall := f + p.off
	if f == p.start && s.gapFires(p) {
		from, to, _ := s.gapAt(p)
		first, _ := s.nextWall(from, to)
		return s.gapNote(first, to, wall, p)
	}
	// Repeated wall time: later in the next period (first occurrence) or
	// earlier in the previous one (second occurrence)?
	if f-p.start < maxOffsetSpan {
		if prev, ok := p.previous(s.loc); ok && prev.off > p.off && wall < p.start+prev.off {
			return msg.New(msg.DSTOverlapSecond, "time", s.clock(wall), "zone", p.abbr, "from", prev.abbr)
		}
	}
	if p.end != math.MaxInt64 && p.end-f < maxOffsetSpan {
		if nxt, ok := p.next(s.loc); ok && nxt.off < p.off && wall >= p.end+nxt.off {
			if s.fixed {
				return msg.New(msg.DSTOverlapFirstOnly, "time", s.clock(wall), "zone", p.abbr, "to", nxt.abbr)
			}
			return msg.New(msg.DSTOverlapFirst, "time", s.clock(wall), "zone", p.abbr, "to", nxt.abbr)
		}
	}
	return msg.Msg{}
}

// gapTimes counts the matching wall values in [first, to), given that first
// is one, up to 10000 (more is then "+"), and returns the last one counted.
func (s *Schedule) gapTimes(first, to int64) (count int, last int64, more string) {
	last = first
	for w, ok := first, true; ok && count < 10000; w, ok = s.nextWall(w+1, to) {
		count, last = count+1, w
	}
	if count >= 10000 {
		more = "+"
	}
	return count, last, more
}

// gapNote describes a fixed schedule's firing at the transition instant
// (wall, in period p) for the nonexistent wall times from first to to.
func (s *Schedule) gapNote(first, to, wall int64, p period) msg.Msg {
	count, last, more := s.gapTimes(first, to)
	at := s.clock(wall) + " " + p.abbr
	var note msg.Msg
	if count == 1 {
		note = msg.New(msg.DSTGapFiredOne, "time", s.clock(first), "at", at)
	} else {
		note = msg.New(msg.DSTGapFiredMany, "count", fmt.Sprint(count)+more, "from", s.clock(first), "to", s.clock(last), "at", at)
	}
	if s.matchesWall(wall) {
		note = msg.New(msg.DSTWithRegular, "note", note, "time", s.clock(wall))
	}
	return note
}

// clock formats the time of day of a wall value, with seconds only when the
// schedule uses them.
func (s *Schedule) clock(w int64) string {
	sod := int(w - floorDiv(w, secondsPerDay)*secondsPerDay)
	if s.second == 1 {
		return fmt.Sprintf("%02d:%02d", sod/3600, sod/60%60)
	}
	return fmt.Sprintf("%02d:%02d:%02d", sod/3600, sod/60%60, sod%60)
}
