package schedule

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	// Embed the IANA database so zones resolve on hosts without
	// /usr/share/zoneinfo (distroless and scratch images).
	_ "time/tzdata"

	"github.com/shardjob/shardjob/admin/msg"
)

// ValidateZone resolves an IANA time zone name for a job.
//
// "" means "UTC". "Local" is rejected (the admin's own zone must never leak
// into a job's schedule), and so is every spelling of a fixed UTC offset —
// "+08:00", "UTC+8", "GMT-5", "Etc/GMT+8" — because an offset cannot follow a
// region's daylight-saving rules (and the Etc/GMT names have inverted signs).
// Use a region name such as "Asia/Shanghai" or "America/New_York", or "UTC".
// The error is a *ValidationError with Name "time zone".
func ValidateZone(name string) (*time.Location, error) {
	switch name {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, zoneError(name, msg.ZoneLocal)
	}
	if strings.TrimSpace(name) != name || name == "" {
		return nil, zoneError(name, msg.ZoneSpaces)
	}
	if isFixedOffsetName(name) {
		code := msg.ZoneFixedOffset
		if strings.HasPrefix(name, "Etc/GMT") {
			code = msg.ZoneEtcGMT
		}
		return nil, zoneError(name, code)
	}
	if strings.HasPrefix(name, "/") || strings.Contains(name, "..") || strings.Contains(name, "\\") {
		return nil, zoneError(name, msg.ZonePath)
	}
	if !plausibleZoneName(name) {
		return nil, zoneError(name, msg.ZoneUnknown)
	}
	if loc, ok := zoneCache.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, zoneError(name, msg.ZoneUnknown)
	}
	zoneCache.Store(name, loc)
	return loc, nil
}

// zoneCache memoises loaded zones: time.LoadLocation reads and decodes the
// zone file on every call. Only valid names are stored, so it is bounded by
// the size of the IANA database.
var zoneCache sync.Map // string -> *time.Location

// plausibleZoneName admits the shape of IANA names — an upper-case ASCII
// letter first, then letters, digits, '/', '_', '-' and '+' — and so keeps
// out the other files of a system zoneinfo directory: "localtime" (the
// host's zone under another name), "posixrules", "right/..." (clocks that
// count leap seconds), "zone.tab".
func plausibleZoneName(name string) bool {
	if name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '/', c == '_', c == '-', c == '+':
		default:
			return false
		}
	}
	return true
}

// zoneError is the error about zone name: its quoted name, then what code
// says.
func zoneError(name string, code msg.Code) *ValidationError {
	return invalid(0, "time zone", name, msg.New(msg.ZoneError, "zone", strconv.Quote(name), "error", msg.New(code)))
}

// isFixedOffsetName reports whether name spells a fixed UTC offset: a leading
// sign ("+08:00"), a UTC/GMT/UT prefix followed by a sign or digit ("UTC+8",
// "GMT-05:00", "GMT0"), or the Etc/GMT±N family.
func isFixedOffsetName(name string) bool {
	if name[0] == '+' || name[0] == '-' || (name[0] >= '0' && name[0] <= '9') {
		return true
	}
	rest := strings.TrimPrefix(name, "Etc/")
	for _, p := range []string{"UTC", "GMT", "UT"} {
		if tail, ok := strings.CutPrefix(rest, p); ok && tail != "" {
			c := tail[0]
			if c == '+' || c == '-' || (c >= '0' && c <= '9') || c == ' ' {
				return true
			}
		}
	}
	return false
}

// period is one stretch of constant UTC offset of a zone: instants in
// [start, end) have local wall time instant+off. An unbounded side is
// math.MinInt64 / math.MaxInt64.
type period struct {
	start, end int64
	off        int64
	abbr       string
}

func lookupPeriod(loc *time.Location, u int64) period {
	if loc == time.UTC {
		return period{start: math.MinInt64, end: math.MaxInt64, abbr: "UTC"}
	}
	t := time.Unix(u, 0).In(loc)
	abbr, off := t.Zone()
	st, en := t.ZoneBounds()
	p := period{start: math.MinInt64, end: math.MaxInt64, off: int64(off), abbr: abbr}
	if !st.IsZero() {
		p.start = st.Unix()
	}
	if !en.IsZero() {
		p.end = en.Unix()
	}
	// ZoneBounds is only a hint: for years served by the zone's POSIX TZ
	// rule, Go (up to at least 1.26) reports on the last UTC day of a leap
	// year an end before the instant itself (golang/go#81583). The offsets
	// are right, so check the bounds against them and rebuild them by
	// probing when they do not hold.
	if p.start > u || p.end <= u ||
		(p.start != math.MinInt64 && offsetAt(loc, p.start) != off) ||
		(p.end != math.MaxInt64 && offsetAt(loc, p.end-1) != off) {
		p.start, p.end = probeBounds(loc, u, off)
	}
	return p
}

func offsetAt(loc *time.Location, u int64) int {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return off
}

// probeBounds finds the stretch around u where the offset stays off, by
// hourly probes and a binary search for the exact second, within two days on
// each side (a bound that is still the same offset two days away is
// reported there; the next look-up continues from it).
func probeBounds(loc *time.Location, u int64, off int) (start, end int64) {
	const step, reach = 3600, 48 * 3600
	edge := func(dir int64) int64 {
		same := u
		for k := int64(1); k*step <= reach; k++ {
			x := u + dir*k*step
			if offsetAt(loc, x) == off {
				same = x
				continue
			}
			// The offset changes between same and x: find the first
			// instant (in direction dir) with the other offset.
			in, out := same, x
			for (out-in)*dir > 1 {
				mid := in + (out-in)/2
				if offsetAt(loc, mid) == off {
					in = mid
				} else {
					out = mid
				}
			}
			return out
		}
		return u + dir*reach
	}
	end = edge(1)
	start = edge(-1) + 1 // edge(-1) is the last instant before the stretch
	if start > u {
		start = u
	}
	return start, end
}

// previous returns the period just before p, and false when p is the first.
func (p period) previous(loc *time.Location) (period, bool) {
	if p.start == math.MinInt64 {
		return period{}, false
	}
	return lookupPeriod(loc, p.start-1), true
}

// next returns the period just after p, and false when p is the last.
func (p period) next(loc *time.Location) (period, bool) {
	if p.end == math.MaxInt64 {
		return period{}, false
	}
	return lookupPeriod(loc, p.end), true
}
