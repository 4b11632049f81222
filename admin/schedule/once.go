package schedule

import (
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
)

// One-time schedules: "@at 2026-12-24T18:00" fires once, at that local
// time in the job's zone ("@at 2026-12-24T18:00:30" with seconds), or at
// an instant with an explicit offset ("@at 2026-12-24T18:00+08:00",
// "...Z"), which the zone does not change. A local time follows the
// daylight-saving rule of fixed times (docs/schedules.md, "Clock
// changes"): one that does not exist fires once at the moment the clocks
// jump, one that happens twice fires at its first occurrence.

// Layouts of an @at time: local (in the job's zone) and with an offset.
var (
	atLocalLayouts  = []string{"2006-01-02T15:04", "2006-01-02T15:04:05"}
	atOffsetLayouts = []string{"2006-01-02T15:04Z07:00", "2006-01-02T15:04:05Z07:00"}
)

// The years an @at time may name.
const (
	minAtYear = 1970
	maxAtYear = 2999
)

// compileAt compiles "@at <time>" (fields[0] is "@at").
func (s *Schedule) compileAt(fields []string) error {
	if len(fields) != 2 {
		return exprError(strings.Join(fields, " "), msg.CronAtArgs)
	}
	text := fields[1]
	if t, ok := parseIn(atOffsetLayouts, text, time.UTC); ok {
		if t.Year() < minAtYear || t.Year() > maxAtYear {
			return exprError(text, msg.CronAtYears, "value", text, "min", minAtYear, "max", maxAtYear)
		}
		s.once, s.at = true, t.Unix()
		s.resolved = "@at " + t.Format(time.RFC3339)
		return nil
	}
	w, ok := parseIn(atLocalLayouts, text, time.UTC) // the wall time, read as if UTC
	if !ok {
		return exprError(text, msg.CronAtBad, "value", strconv.Quote(text))
	}
	if w.Year() < minAtYear || w.Year() > maxAtYear {
		return exprError(text, msg.CronAtYears, "value", text, "min", minAtYear, "max", maxAtYear)
	}
	s.once = true
	s.at, s.atNote = resolveWall(s.loc, w.Unix())
	s.resolved = "@at " + w.Format("2006-01-02T15:04:05")
	return nil
}

func parseIn(layouts []string, text string, loc *time.Location) (time.Time, bool) {
	for _, l := range layouts {
		if t, err := time.ParseInLocation(l, text, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// resolveWall returns the instant of wall time w (Unix seconds of the wall
// clock read as UTC) in loc by the rule of fixed times: its first
// occurrence, or the transition instant when w does not exist; and a note
// for the preview when a clock change decided it.
func resolveWall(loc *time.Location, w int64) (int64, msg.Msg) {
	if loc == time.UTC {
		return w, msg.Msg{}
	}
	// Offsets are within a day: the periods a day before and after w (as
	// an instant) bound every offset w can have.
	before := lookupPeriod(loc, w-secondsPerDay)
	after := lookupPeriod(loc, w+secondsPerDay)
	best, found := int64(0), false
	for _, off := range []int64{before.off, after.off} {
		if u := w - off; int64(offsetAt(loc, u)) == off && (!found || u < best) {
			best, found = u, true
		}
	}
	if !found {
		// A spring-forward gap: w read with the earlier offset is an
		// instant after the jump, in the period that starts at it.
		p := lookupPeriod(loc, w-before.off)
		clock := time.Unix(w, 0).UTC().Format("15:04")
		at := time.Unix(p.start, 0).In(loc).Format("15:04 MST")
		return p.start, msg.New(msg.DSTGapFiredOne, "time", clock, "at", at)
	}
	p := lookupPeriod(loc, best)
	if nxt, ok := p.next(loc); ok && nxt.off < p.off && w >= p.end+nxt.off {
		return best, msg.New(msg.DSTOverlapFirstOnly, "time", time.Unix(w, 0).UTC().Format("15:04"), "zone", p.abbr, "to", nxt.abbr)
	}
	return best, msg.Msg{}
}

// nextOnce is nextSec of a one-time schedule.
func (s *Schedule) nextOnce(a int64) (int64, bool) {
	if a < s.at {
		return s.at, true
	}
	return 0, false
}

// Once reports whether the schedule fires once (@at).
func (s *Schedule) Once() bool { return s.once }
