package schedule

import (
	"math"
	"math/bits"
)

const (
	// horizon is how far Next looks ahead: about five years. A schedule with
	// no firing in that window (only "0 0 29 2 *" around 2100) yields none.
	horizon = 5 * 366 * secondsPerDay
	// maxOffsetSpan bounds the difference between two UTC offsets of one zone
	// (real offsets stay within -12h..+14h; historic local mean times a bit
	// beyond); repeated wall times can only be this close to a transition.
	maxOffsetSpan = 26 * 3600
	// Instants outside year 1 .. 9999 are clamped or answered with "none".
	minInstant = -62135596800
	maxInstant = 253402300799
)

// nextBit returns the lowest set bit of mask at position >= from, or 64.
func nextBit(mask uint64, from int) int {
	if from > 63 {
		return 64
	}
	return bits.TrailingZeros64(mask & (^uint64(0) << uint(from)))
}

// lowBits returns a mask of the bits below position n.
func lowBits(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<uint(n) - 1
}

// nextDay returns the first day >= d of month mo in year y that matches the
// day-of-month / day-of-week rule, or 0 if none is left in that month.
// Rule (standard cron): if either field is '*', a day must match both;
// otherwise matching either one is enough.
func (s *Schedule) nextDay(y int64, mo, d int) int {
	dim := daysIn(y, mo)
	if d > dim {
		return 0
	}
	switch {
	case s.domStar && s.dowStar:
		return d
	case s.dowStar:
		if nd := nextBit(s.dom, d); nd <= dim {
			return nd
		}
		return 0
	}
	wd := weekday(daysFromCivil(y, mo, d))
	for ; d <= dim; d++ {
		dowOK := s.dow&(1<<uint(wd)) != 0
		if s.domStar {
			if dowOK {
				return d
			}
		} else if dowOK || s.dom&(1<<uint(d)) != 0 {
			return d
		}
		if wd++; wd == 7 {
			wd = 0
		}
	}
	return 0
}

// dayMatches applies the day rule to one day number.
func (s *Schedule) dayMatches(days int64) bool {
	y, mo, d := civilFromDays(days)
	return s.month&(1<<uint(mo)) != 0 && s.nextDay(y, mo, d) == d
}

// matchesWall reports whether a wall value matches every field.
func (s *Schedule) matchesWall(w int64) bool {
	days := floorDiv(w, secondsPerDay)
	sod := int(w - days*secondsPerDay)
	return s.hour&(1<<uint(sod/3600)) != 0 && s.minute&(1<<uint(sod/60%60)) != 0 &&
		s.second&(1<<uint(sod%60)) != 0 && s.dayMatches(days)
}

// nextWall returns the first wall value in [w0, limit) that matches the
// fields, stepping field by field (month, day, hour, minute, second) with
// bitmask look-ups rather than second by second.
func (s *Schedule) nextWall(w0, limit int64) (int64, bool) {
	if w0 >= limit {
		return 0, false
	}
	days := floorDiv(w0, secondsPerDay)
	sod := int(w0 - days*secondsPerDay)
	y, mo, d := civilFromDays(days)
	h, mi, se := sod/3600, sod/60%60, sod%60
	for {
		// Carry overflowing fields upwards.
		if se > 59 {
			se, mi = 0, mi+1
		}
		if mi > 59 {
			mi, h = 0, h+1
		}
		if h > 23 {
			h, d = 0, d+1
		}
		if d > daysIn(y, mo) {
			d, mo = 1, mo+1
		}
		if mo > 12 {
			mo, y = 1, y+1
		}
		if wallOf(y, mo, d, h, mi, se) >= limit {
			return 0, false
		}
		if s.month&(1<<uint(mo)) == 0 {
			if nm := nextBit(s.month, mo+1); nm <= 12 {
				mo = nm
			} else {
				mo, y = nextBit(s.month, 1), y+1
			}
			d, h, mi, se = 1, 0, 0, 0
			continue
		}
		nd := s.nextDay(y, mo, d)
		if nd == 0 {
			d, h, mi, se = 32, 0, 0, 0 // carries into the next month
			continue
		}
		if nd != d {
			d, h, mi, se = nd, 0, 0, 0
		}
		nh := nextBit(s.hour, h)
		if nh > 23 {
			h, mi, se = 24, 0, 0
			continue
		}
		if nh != h {
			h, mi, se = nh, 0, 0
		}
		nmi := nextBit(s.minute, mi)
		if nmi > 59 {
			mi, se = 60, 0
			continue
		}
		if nmi != mi {
			mi, se = nmi, 0
		}
		nse := nextBit(s.second, se)
		if nse > 59 {
			se = 60
			continue
		}
		w := wallOf(y, mo, d, h, mi, nse)
		if w >= limit {
			return 0, false
		}
		return w, true
	}
}

// gapAt reports whether the zone jumps forward at the start of p (a
// spring-forward transition) and returns the skipped wall range [from, to).
func (s *Schedule) gapAt(p period) (from, to int64, ok bool) {
	prev, has := p.previous(s.loc)
	if !has || prev.off >= p.off {
		return 0, 0, false
	}
	return p.start + prev.off, p.start + p.off, true
}

// firstRealWall returns the first wall value of p that is not a repeat of
// a wall value of the previous period (fall-back overlap). Fixed schedules
// fire only at the first occurrence of a repeated wall time, so they start
// searching p there.
func (s *Schedule) firstRealWall(p period) int64 {
	if prev, ok := p.previous(s.loc); ok && prev.off > p.off {
		return p.start + prev.off
	}
	return p.start + p.off
}

// gapFires reports whether the schedule fires at the start of p because the
// zone jumps forward there and skips a matching wall time. Only fixed
// schedules do: their one time of day moves to the transition instant, while
// the others skip nonexistent times and keep their rhythm in real time.
func (s *Schedule) gapFires(p period) bool {
	if !s.fixed {
		return false
	}
	from, to, ok := s.gapAt(p)
	if !ok {
		return false
	}
	_, hit := s.nextWall(from, to)
	return hit
}

// nextCron returns the first firing instant > a (Unix seconds).
//
// It walks the zone's periods of constant offset. Inside one period wall
// time is monotonic, so the first matching wall value gives the first
// firing. At a forward transition a fixed schedule whose time falls in the
// skipped wall range fires once at the transition instant, and any other
// schedule skips that range. After a backward transition a fixed schedule
// skips the repeated wall range.
func (s *Schedule) nextCron(a int64) (int64, bool) {
	if a < minInstant {
		a = minInstant
	}
	if a > maxInstant-horizon {
		return 0, false
	}
	return s.nextCronUntil(a, a+horizon)
}

// nextCronUntil is nextCron with the last instant considered, limit, given
// (a >= minInstant, limit <= maxInstant).
func (s *Schedule) nextCronUntil(a, limit int64) (int64, bool) {
	u := a + 1
	for {
		p := lookupPeriod(s.loc, u)
		if u == p.start && s.gapFires(p) {
			return u, true
		}
		wFrom := u + p.off
		if s.fixed && p.start != math.MinInt64 && u-p.start < maxOffsetSpan {
			wFrom = max(wFrom, s.firstRealWall(p))
		}
		end := min(p.end, limit+1)
		if w, ok := s.nextWall(wFrom, end+p.off); ok {
			return w - p.off, true
		}
		if p.end > limit {
			return 0, false
		}
		u = p.end
	}
}

// nextEvery returns the first anchor + k*every (k >= 1) greater than a.
func (s *Schedule) nextEvery(a int64) (int64, bool) {
	if a > maxInstant-horizon {
		return 0, false
	}
	first := s.anchor + s.every
	if a < first {
		if first-a > horizon {
			return 0, false
		}
		return first, true
	}
	k := (a-s.anchor)/s.every + 1
	return s.anchor + k*s.every, true
}

func (s *Schedule) nextSec(a int64) (int64, bool) {
	if s.every > 0 {
		return s.nextEvery(a)
	}
	if s.once {
		return s.nextOnce(a)
	}
	return s.nextCron(a)
}

// countBetween returns the number of firings f with lo < f < hi, without
// enumerating them: whole days are counted from the field bitmasks.
func (s *Schedule) countBetween(lo, hi int64) int64 {
	if hi-lo < 2 {
		return 0
	}
	if s.every > 0 {
		// firings are anchor + k*every, k >= 1: count k in (lo, hi).
		kMin := max(floorDiv(lo-s.anchor, s.every)+1, 1)
		kMax := floorDiv(hi-1-s.anchor, s.every)
		return max(kMax-kMin+1, 0)
	}
	if s.once {
		if lo < s.at && s.at < hi {
			return 1
		}
		return 0
	}
	lo = max(lo, minInstant-1)
	var n int64
	u := lo + 1
	for u < hi {
		p := lookupPeriod(s.loc, u)
		end := min(p.end, hi)
		if u == p.start && s.gapFires(p) && !s.matchesWall(u+p.off) {
			n++
		}
		w1, w2 := u+p.off, end+p.off
		if s.fixed && p.start != math.MinInt64 && u-p.start < maxOffsetSpan {
			w1 = max(w1, s.firstRealWall(p))
		}
		if w1 < w2 {
			n += s.countWall(w1, w2)
		}
		u = end
	}
	return n
}

// countWall counts matching wall values in [w1, w2).
func (s *Schedule) countWall(w1, w2 int64) int64 {
	var n int64
	first, last := floorDiv(w1, secondsPerDay), floorDiv(w2-1, secondsPerDay)
	for day := first; day <= last; day++ {
		if !s.dayMatches(day) {
			continue
		}
		base := day * secondsPerDay
		from, to := max(w1-base, 0), min(w2-base, secondsPerDay)
		if from == 0 && to == secondsPerDay {
			n += s.perDay
			continue
		}
		n += s.countBefore(int(to)) - s.countBefore(int(from))
	}
	return n
}

// countBefore counts matching seconds of a day strictly before second x.
func (s *Schedule) countBefore(x int) int64 {
	h, mi, se := x/3600, x/60%60, x%60
	pm, ps := int64(bits.OnesCount64(s.minute)), int64(bits.OnesCount64(s.second))
	n := int64(bits.OnesCount64(s.hour&lowBits(h))) * pm * ps
	if h < 24 && s.hour&(1<<uint(h)) != 0 {
		n += int64(bits.OnesCount64(s.minute&lowBits(mi))) * ps
		if s.minute&(1<<uint(mi)) != 0 {
			n += int64(bits.OnesCount64(s.second & lowBits(se)))
		}
	}
	return n
}

// lastBefore returns the last firing f with from <= f < hi, given that from
// itself is a firing below hi. It binary-searches the largest x with
// nextSec(x) < hi, so it costs O(log(hi-from)) calls of nextSec.
func (s *Schedule) lastBefore(from, hi int64) int64 {
	if s.every > 0 {
		k := floorDiv(hi-1-s.anchor, s.every)
		return max(s.anchor+k*s.every, from)
	}
	if s.once {
		return from // the one firing
	}
	return lastBeforeBy(s.nextSec, from, hi)
}

// lastBeforeBy is lastBefore for any next-firing function.
func lastBeforeBy(next func(int64) (int64, bool), from, hi int64) int64 {
	good, bad := from, hi-1 // next(good) < hi, next(bad) >= hi
	if f, ok := next(good); !ok || f >= hi {
		return from
	}
	for bad-good > 1 {
		mid := good + (bad-good)/2
		if f, ok := next(mid); ok && f < hi {
			good = mid
		} else {
			bad = mid
		}
	}
	f, _ := next(good)
	return f
}
