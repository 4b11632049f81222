package schedule

import (
	"math"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
)

// One job, several zones (docs/schedules.md, "Several zones"): the same
// cron expression read in each of a list of IANA zones fires at the union
// of the instants. Each firing is tagged with the first zone of the list
// that produces it; an instant that several zones produce fires once, and
// the others are listed as the zones it coincides with. Each zone keeps its
// own daylight-saving rule (a fixed time that does not exist in New York
// fires at the transition there, whatever London does), and H picks the
// same values in every zone (it hashes the job, not the zone).

// Limits of a multi-zone schedule.
const (
	// MaxZones bounds the zones of one job.
	MaxZones = 8
	// MaxZoneFiringsPerDay bounds how often a multi-zone schedule may fire
	// a day in each zone: a denser expression (every 30 minutes) fires at
	// nearly the same instants in every zone, and planning a backlog of a
	// multi-zone job enumerates its firings (Plan counts a single zone's
	// from the bitmasks), which this keeps bounded.
	MaxZoneFiringsPerDay = 24
)

// MultiZone is one expression in several zones: the union of their
// firings. It is immutable and safe for concurrent use. Build one with
// ParseZones.
type MultiZone struct {
	zones []*Schedule // in list order; zones[0] is the job's time_zone
	names []string
}

// ZoneFiring is one firing of a MultiZone.
type ZoneFiring struct {
	Firing
	// Zone is the first zone of the list that fires at At: the firing's
	// zone (the run's time_zone); Local is At in it.
	Zone string
	// AlsoZones are the other zones of the list that fire at the same
	// instant, in list order (it fires once); nil for none.
	AlsoZones []string
}

// ParseZones compiles spec.Expr in each zone of zones (spec.Zone is not
// used), which must be 1 to MaxZones distinct valid IANA names. Errors are
// *ValidationError values matching ErrInvalid: a zone's (Name "time
// zone"), the expression's (as Parse), a duplicate or too many zones (Name
// "time zones"), an @every or @at expression with more than one zone (an
// interval is the same in every zone, a one-time schedule is one instant),
// or an expression that fires more than MaxZoneFiringsPerDay times a day
// with more than one.
func ParseZones(spec Spec, zones []string) (*MultiZone, error) {
	if len(zones) == 0 {
		zones = []string{spec.Zone}
	}
	if len(zones) > MaxZones {
		return nil, invalid(0, "time zones", strings.Join(zones, ","), msg.New(msg.ZonesTooMany, "count", len(zones), "max", MaxZones))
	}
	m := &MultiZone{zones: make([]*Schedule, 0, len(zones)), names: make([]string, 0, len(zones))}
	seen := make(map[string]bool, len(zones))
	for _, z := range zones {
		loc, err := ValidateZone(z)
		if err != nil {
			return nil, err
		}
		name := loc.String()
		if seen[name] {
			return nil, invalid(0, "time zones", z, msg.New(msg.ZonesDuplicate, "zone", name))
		}
		seen[name] = true
		sp := spec
		sp.Zone = z
		s, err := Parse(sp)
		if err != nil {
			return nil, err
		}
		m.zones, m.names = append(m.zones, s), append(m.names, name)
	}
	if len(m.zones) > 1 {
		s := m.zones[0]
		switch {
		case s.every > 0:
			return nil, invalid(0, "time zones", strings.Join(m.names, ","), msg.New(msg.ZonesEvery))
		case s.once:
			return nil, invalid(0, "time zones", strings.Join(m.names, ","), msg.New(msg.ZonesAt))
		case s.firingsPerDay() > MaxZoneFiringsPerDay:
			return nil, invalid(0, "time zones", strings.Join(m.names, ","), msg.New(msg.ZonesTooDense, "per_day", s.firingsPerDay(), "max", MaxZoneFiringsPerDay))
		}
	}
	return m, nil
}

// Zones returns the zone names in list order.
func (m *MultiZone) Zones() []string { return append([]string(nil), m.names...) }

// Schedules returns the schedule of each zone, in list order.
func (m *MultiZone) Schedules() []*Schedule { return append([]*Schedule(nil), m.zones...) }

// Primary is the schedule in the first zone (the job's time_zone).
func (m *MultiZone) Primary() *Schedule { return m.zones[0] }

// nextZones is the first firing after a of any zone, and a bit set for every
// zone that fires then (bit i for zones[i]).
func (m *MultiZone) nextZones(a int64) (int64, uint16, bool) {
	best, mask, found := int64(math.MaxInt64), uint16(0), false
	for i, s := range m.zones {
		f, ok := s.nextSec(a)
		switch {
		case !ok || f > best:
		case f < best:
			best, mask, found = f, 1<<i, true
		default: // f == best: a coinciding instant
			mask |= 1 << i
		}
	}
	return best, mask, found
}

func (m *MultiZone) nextSec(a int64) (int64, bool) {
	if len(m.zones) == 1 {
		return m.zones[0].nextSec(a)
	}
	f, _, ok := m.nextZones(a)
	return f, ok
}

// Next returns the first firing of any zone strictly after `after`, in
// UTC, or the zero Time if no zone has one within about five years.
func (m *MultiZone) Next(after time.Time) time.Time {
	f, ok := m.nextSec(after.Unix())
	if !ok {
		return time.Time{}
	}
	return time.Unix(f, 0).UTC()
}

// NextFiring is Next with the firing's zone (the first zone of the list
// that fires then) and the zones it coincides with. ok is false when there
// is no firing.
func (m *MultiZone) NextFiring(after time.Time) (at time.Time, zone string, also []string, ok bool) {
	f, mask, ok := m.nextZones(after.Unix())
	if !ok {
		return time.Time{}, "", nil, false
	}
	zone, also = m.tag(mask)
	return time.Unix(f, 0).UTC(), zone, also, true
}

// tag names the zones of mask: the first, and the others.
func (m *MultiZone) tag(mask uint16) (first string, also []string) {
	for i, n := range m.names {
		if mask&(1<<i) == 0 {
			continue
		}
		if first == "" {
			first = n
		} else {
			also = append(also, n)
		}
	}
	return first, also
}

// ZoneOf returns the zone of a firing at t (the first zone of the list
// whose schedule fires at t), and false when no zone fires at t.
func (m *MultiZone) ZoneOf(t time.Time) (string, bool) {
	u := t.Unix()
	if t.Nanosecond() != 0 {
		return "", false
	}
	for i, s := range m.zones {
		if f, ok := s.nextSec(u - 1); ok && f == u {
			return m.names[i], true
		}
	}
	return "", false
}

// Preview returns up to n (at most 1000) firings strictly after `after`,
// each with its zone and the daylight-saving notes of every zone that fires
// then (a zone's note covers what that zone skipped since its own previous
// firing).
func (m *MultiZone) Preview(after time.Time, n int) []ZoneFiring {
	n = min(n, maxPreview)
	if n <= 0 {
		return nil
	}
	out := make([]ZoneFiring, 0, n)
	a := after.Unix()
	prev := make([]int64, len(m.zones)) // each zone's previous firing
	for i := range prev {
		prev[i] = a
	}
	for len(out) < n {
		f, mask, ok := m.nextZones(a)
		if !ok {
			break
		}
		zone, also := m.tag(mask)
		var notes []msg.Msg
		first := -1
		for i, s := range m.zones {
			if mask&(1<<i) == 0 {
				continue
			}
			if first < 0 {
				first = i
			}
			notes = append(notes, s.note(prev[i], f)...)
			prev[i] = f
		}
		texts := make([]string, len(notes))
		for i, nt := range notes {
			texts[i] = nt.String()
		}
		out = append(out, ZoneFiring{
			Firing: Firing{At: time.Unix(f, 0).UTC(), Local: time.Unix(f, 0).In(m.zones[first].loc), Note: strings.Join(texts, "; "), Notes: notes},
			Zone:   zone, AlsoZones: also,
		})
		a = f
	}
	return out
}

// countBetween counts the distinct firings f with lo < f < hi. One zone
// counts from its bitmasks; several enumerate the union (at most
// MaxZoneFiringsPerDay a day in each zone), after a cheap check that a
// zone fires at all.
func (m *MultiZone) countBetween(lo, hi int64) int64 {
	return m.countUpTo(lo, hi, math.MaxInt64)
}

// countUpTo is min(countBetween(lo, hi), limit): the enumeration stops at
// limit (Plan's cap on on-time firings asks only whether there are more).
func (m *MultiZone) countUpTo(lo, hi, limit int64) int64 {
	if len(m.zones) == 1 {
		return min(m.zones[0].countBetween(lo, hi), limit)
	}
	var sum int64 // an upper bound: coinciding instants count once per zone
	for _, s := range m.zones {
		sum += s.countBetween(lo, hi)
	}
	if sum == 0 {
		return 0
	}
	var n int64
	for f, ok := m.nextSec(lo); ok && f < hi && n < limit; f, ok = m.nextSec(f) {
		n++
	}
	return n
}

func (m *MultiZone) lastBefore(from, hi int64) int64 {
	if len(m.zones) == 1 {
		return m.zones[0].lastBefore(from, hi)
	}
	return lastBeforeBy(m.nextSec, from, hi)
}

// PlanZones is Plan for a multi-zone schedule: the due firings of the
// union, decided by the misfire policy as one job's (a late firing in
// London and one in Tokyo are two late firings); Skipped and SkippedCount
// count distinct instants. Find each firing's zone with ZoneOf.
func PlanZones(m *MultiZone, nextFireAt, now time.Time, cfg MisfireConfig) Decision {
	return plan(m, nextFireAt, now, cfg)
}
