package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"
)

// refMatch checks a local time against the fields with the time package's
// own calendar (independent of civil.go).
func refMatch(s *Schedule, lt time.Time) bool {
	bit := func(mask uint64, v int) bool { return mask&(1<<uint(v)) != 0 }
	if !bit(s.second, lt.Second()) || !bit(s.minute, lt.Minute()) || !bit(s.hour, lt.Hour()) || !bit(s.month, int(lt.Month())) {
		return false
	}
	domOK, dowOK := bit(s.dom, lt.Day()), bit(s.dow, int(lt.Weekday()))
	if s.domStar || s.dowStar {
		return domOK && dowOK
	}
	return domOK || dowOK
}

// refFixed decides whether a schedule is "fixed" as docs/schedules.md
// defines it, from the resolved expression text rather than the compiled
// bitmasks: the hour field and the minute field each stand for exactly one
// value; the seconds field and the day fields do not count.
func refFixed(s *Schedule) bool {
	expr := s.Resolved()
	switch {
	case expr == "@hourly", strings.HasPrefix(expr, "@every"):
		return false
	case strings.HasPrefix(expr, "@"): // @yearly ... @daily: minute 0, hour 0
		return true
	}
	f := strings.Fields(expr)
	return refFieldValues(f[len(f)-5], 59) == 1 && refFieldValues(f[len(f)-4], 23) == 1
}

// refFieldValues counts the distinct values a minute or hour field (0..hi)
// stands for: a list of *, a, a-b, each optionally with /step (a/step runs to
// the end of the field).
func refFieldValues(field string, hi int) int {
	seen := map[int]bool{}
	for _, item := range strings.Split(field, ",") {
		base, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			step, _ = strconv.Atoi(stepText)
		}
		from, to := 0, hi
		if base != "*" {
			a, b, isRange := strings.Cut(base, "-")
			from, _ = strconv.Atoi(a)
			switch {
			case isRange:
				to, _ = strconv.Atoi(b)
			case !hasStep:
				to = from
			}
		}
		for v := from; v <= to; v += step {
			seen[v] = true
		}
	}
	return len(seen)
}

// refIsFiring applies the DST rules to one instant straight from their
// definition:
//   - u fires if its wall time matches, except that a fixed schedule does
//     not fire at the second occurrence of a repeated wall time;
//   - for a fixed schedule, u also fires if the clocks jumped forward at u
//     and a skipped wall time matches; any other schedule skips the
//     nonexistent wall times.
func refIsFiring(s *Schedule, u time.Time) bool {
	loc := s.loc
	lt := u.In(loc)
	_, offNow := lt.Zone()
	_, offBefore := u.Add(-time.Second).In(loc).Zone()
	if offBefore < offNow && refFixed(s) {
		// Skipped wall times: from (u-1s)'s wall + 1s up to u's wall - 1s.
		start := u.Add(-time.Second).In(loc)
		for i := 1; i <= offNow-offBefore; i++ {
			// Build the skipped wall time in UTC so the time package does
			// not normalise it away.
			wall := time.Date(start.Year(), start.Month(), start.Day(), start.Hour(), start.Minute(), start.Second()+i, 0, time.UTC)
			if refMatch(s, wall) {
				return true
			}
		}
	}
	if !refMatch(s, lt) {
		return false
	}
	if refFixed(s) && refShownEarlier(loc, u) {
		return false // the second occurrence of a repeated wall time
	}
	return true
}

// refShownEarlier reports whether some earlier instant (within 26h) showed
// the same wall time as u: for every offset o in effect during the 26 hours
// before u (sampled every 15 minutes; it does not trust ZoneBounds), the
// instant whose wall time under o equals u's must not exist before u.
func refShownEarlier(loc *time.Location, u time.Time) bool {
	_, off := u.In(loc).Zone()
	wall := u.Unix() + int64(off)
	seen := map[int]bool{off: true}
	for back := 15 * time.Minute; back <= 26*time.Hour; back += 15 * time.Minute {
		_, o := u.Add(-back).In(loc).Zone()
		if seen[o] {
			continue
		}
		seen[o] = true
		e := time.Unix(wall-int64(o), 0)
		if _, oe := e.In(loc).Zone(); oe == o && e.Before(u) {
			return true
		}
	}
	return false
}

// refNext scans instant by instant (second by second, or minute by minute
// when the schedule only fires at second 0 — transitions here fall on whole
// minutes).
func refNext(s *Schedule, after, limit time.Time) time.Time {
	step := time.Second
	if s.second == 1 {
		step = time.Minute
	}
	u := after.Truncate(step).Add(step)
	for ; !u.After(limit); u = u.Add(step) {
		if refIsFiring(s, u) {
			return u
		}
	}
	return time.Time{}
}

type transition struct {
	zone string
	at   string
}

var transitions = []transition{
	{"America/New_York", "2026-03-08T07:00:00Z"},
	{"America/New_York", "2026-11-01T06:00:00Z"},
	{"Europe/Berlin", "2026-03-29T01:00:00Z"},
	{"Europe/Berlin", "2026-10-25T01:00:00Z"},
	{"Europe/London", "2014-03-30T01:00:00Z"},
	{"Europe/London", "2014-10-26T01:00:00Z"},
	{"Australia/Lord_Howe", "2026-04-04T15:00:00Z"},
	{"Australia/Lord_Howe", "2026-10-03T15:30:00Z"},
	{"America/Sao_Paulo", "2018-11-04T03:00:00Z"},
	{"America/Sao_Paulo", "2019-02-17T02:00:00Z"},
	{"Asia/Kolkata", "2026-03-08T07:00:00Z"}, // no transition: control
	// Not transitions: the last UTC day of a leap year served by the TZ
	// footer rule, where time.ZoneBounds is wrong (golang/go#81583).
	{"America/New_York", "2040-12-31T12:00:00Z"},
	{"Europe/Dublin", "2040-12-31T12:00:00Z"},
}

// lookupPeriod must always return a stretch that contains the instant and
// has one offset, even where time.ZoneBounds does not (golang/go#81583).
func TestLookupPeriodContainsInstant(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"America/New_York", "Europe/Warsaw", "Europe/Dublin", "Australia/Lord_Howe", "America/Sao_Paulo", "Asia/Kolkata", "UTC"} {
		loc, err := ValidateZone(zone)
		require.NoError(t, err)
		for _, day := range []string{"2040-12-31T00:00:00Z", "2044-12-31T00:00:00Z", "2026-03-08T00:00:00Z", "2026-11-01T00:00:00Z", "2039-12-31T00:00:00Z"} {
			d := utc(t, day).Unix()
			for u := d - 3600; u < d+secondsPerDay+3600; u += 977 {
				p := lookupPeriod(loc, u)
				require.LessOrEqual(t, p.start, u, "%s %d", zone, u)
				require.Greater(t, p.end, u, "%s %d", zone, u)
				_, off := time.Unix(u, 0).In(loc).Zone()
				require.Equal(t, int64(off), p.off)
				if p.end != math.MaxInt64 {
					_, o := time.Unix(p.end-1, 0).In(loc).Zone()
					require.Equal(t, off, o, "%s %d: offset changes inside the period", zone, u)
				}
			}
		}
	}
	// Next does not hang on that day (it used to loop when trusting ZoneBounds).
	s := mustParse(t, Spec{Expr: "0 * * * *", Zone: "America/New_York"})
	require.Equal(t, []string{"2040-12-31T13:00:00Z", "2040-12-31T14:00:00Z"}, nextN(s, utc(t, "2040-12-31T12:30:00Z"), 2))
	s = mustParse(t, Spec{Expr: "0 0 1 1 *", Zone: "Europe/Dublin"})
	require.Equal(t, []string{"2041-01-01T00:00:00Z"}, nextN(s, utc(t, "2040-12-30T12:00:00Z"), 1))
}

// "Fixed" (the hour and the minute field each stand for one value) decides
// the DST rules; the seconds and day fields do not affect it.
func TestFixed(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]bool{
		"30 1 * * *": true, "H H * * *": true, "@daily": true, "@weekly": true, "@yearly": true,
		"*/10 30 1 * * *": true, "0-59 30 1 * * *": true, "30 1 */1 * */1": true, "30 1 1-15 1,7 MON-FRI": true,
		"5-5 1 * * *": true, "30 1,1 * * *": true, "H(0-29)/30 2 * * *": true,
		"0 * * * *": false, "*/15 1 * * *": false, "30 1,3 * * *": false, "0 1-2 * * *": false,
		"5/20 1 * * *": false, "30 */12 * * *": false, "@hourly": false, "@every 1h": false, "0 30 * * * *": false,
	} {
		s := mustParse(t, Spec{Expr: expr, JobKey: "app/job"})
		require.Equal(t, want, s.Fixed(), expr)
		require.Equal(t, want, refFixed(s), "reference: %s", expr)
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 2000 {
		expr := randomExpr(r, r.IntN(3) == 0)
		s, err := Parse(Spec{Expr: expr})
		if err != nil {
			continue
		}
		require.Equal(t, refFixed(s), s.Fixed(), expr)
	}
}

func TestNextMatchesReferenceAroundTransitions(t *testing.T) {
	t.Parallel()
	exprs := []string{
		"0 * * * *", "30 * * * *", "*/15 * * * *", "* * * * *", "0 0 * * *", "30 2 * * *", "30 1 * * *",
		"0 2 * * *", "45 1 * * *", "15 2 * * *", "0 1,2 * * *", "0-59/7 1-3 * * *", "*/10 2 * * *",
		"0 23 * * *", "30 23 * * *", "0 0 * * SUN", "0 3 * * *", "59 1 * * *", "0 0-3 * * *", "H H(0-3) * * *",
		"*/20 1 * * *", "30 0 * * *", "0 22-23 * * *",
	}
	for _, tr := range transitions {
		for _, expr := range exprs {
			t.Run(fmt.Sprintf("%s %s %s", tr.zone, tr.at, expr), func(t *testing.T) {
				t.Parallel()
				s := mustParse(t, Spec{Expr: expr, Zone: tr.zone, JobKey: "ref/job"})
				at := utc(t, tr.at)
				from, to := at.Add(-30*time.Hour), at.Add(30*time.Hour)
				var want, got []string
				for a := from; ; {
					a = refNext(s, a, to)
					if a.IsZero() {
						break
					}
					want = append(want, a.Format(time.RFC3339))
				}
				for a := from; ; {
					a = s.Next(a)
					if a.IsZero() || a.After(to) {
						break
					}
					got = append(got, a.Format(time.RFC3339))
				}
				require.Equal(t, want, got)
			})
		}
	}
}

func TestNextMatchesReferenceSecondsAroundTransitions(t *testing.T) {
	t.Parallel()
	exprs := []string{"*/20 * 2 * * *", "*/7 59 1 * * *", "30 * 1 * * *", "0 30 2 * * *", "10,50 * * * * *", "0 */10 1-2 * * *", "*/13 * * * * *"}
	for _, tr := range transitions {
		for _, expr := range exprs {
			t.Run(fmt.Sprintf("%s %s %s", tr.zone, tr.at, expr), func(t *testing.T) {
				t.Parallel()
				s := mustParse(t, Spec{Expr: expr, Zone: tr.zone})
				at := utc(t, tr.at)
				from, to := at.Add(-3*time.Hour), at.Add(3*time.Hour)
				var want, got []string
				for a := from; ; {
					if a = refNext(s, a, to); a.IsZero() {
						break
					}
					want = append(want, a.Format(time.RFC3339))
				}
				for a := from; ; {
					if a = s.Next(a); a.IsZero() || a.After(to) {
						break
					}
					got = append(got, a.Format(time.RFC3339))
				}
				require.Equal(t, want, got)
			})
		}
	}
}

// randomExpr builds a random 5- or 6-field expression from values, ranges,
// lists and steps.
func randomExpr(r *rand.Rand, withSeconds bool) string {
	field := func(lo, hi int) string {
		switch r.IntN(6) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprint(lo + r.IntN(hi-lo+1))
		case 2:
			a := lo + r.IntN(hi-lo+1)
			b := a + r.IntN(hi-a+1)
			return fmt.Sprintf("%d-%d", a, b)
		case 3:
			return fmt.Sprintf("*/%d", 1+r.IntN(hi-lo+1))
		case 4:
			a, b := lo+r.IntN(hi-lo+1), lo+r.IntN(hi-lo+1)
			return fmt.Sprintf("%d,%d", a, b)
		default:
			a := lo + r.IntN(hi-lo+1)
			return fmt.Sprintf("%d/%d", a, 1+r.IntN(hi-lo+1))
		}
	}
	e := fmt.Sprintf("%s %s %s %s %s", field(0, 59), field(0, 23), field(1, 31), field(1, 12), field(0, 6))
	if withSeconds {
		e = field(0, 59) + " " + e
	}
	return e
}

// In UTC there is no DST, so Next must agree with robfig's own Next.
func TestNextAgreesWithRobfigInUTC(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	p := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	checked := 0
	for range 3000 {
		expr := randomExpr(r, r.IntN(3) == 0)
		s, err := Parse(Spec{Expr: expr})
		if err != nil {
			continue // e.g. a day that never exists
		}
		rs, err := p.Parse(expr)
		require.NoError(t, err, expr)
		rs.(*cron.SpecSchedule).Location = time.UTC
		a := time.Unix(r.Int64N(4102444800), 0).UTC() // 1970..2100
		for range 5 {
			want, got := rs.Next(a), s.Next(a)
			if want.IsZero() || want.Sub(a) > horizon*time.Second {
				break
			}
			require.Equal(t, want, got, "%s after %s", expr, a)
			a = got
			checked++
		}
	}
	t.Logf("compared %d firings with robfig", checked)
}

// Random expressions in DST zones against the reference, in windows around
// transitions.
func TestNextRandomAgainstReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		tr := transitions[i%len(transitions)]
		expr := randomExpr(r, false)
		s, err := Parse(Spec{Expr: expr, Zone: tr.zone})
		if err != nil {
			continue
		}
		at := utc(t, tr.at)
		from, to := at.Add(-26*time.Hour), at.Add(26*time.Hour)
		for a := from; ; {
			want := refNext(s, a, to)
			got := s.Next(a)
			if want.IsZero() {
				require.True(t, got.IsZero() || got.After(to), "%s %s after %s: got %s", tr.zone, expr, a, got)
				break
			}
			require.Equal(t, want, got, "%s %s after %s", tr.zone, expr, a)
			a = got
		}
	}
}

// countBetween and lastBefore, which Plan uses for big backlogs, must agree
// with plain enumeration.
func TestCountAndLastBeforeMatchEnumeration(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	exprs := []string{"0 * * * *", "30 1 * * *", "*/15 2 * * *", "0 0 * * *", "*/20 * 1-2 * * *", "30 2 * * *", "0 0 29 2 *", "0 9 * * MON-FRI", "@every 7m", "13 * * * * *"}
	for _, tr := range transitions {
		for _, expr := range exprs {
			s := mustParse(t, Spec{Expr: expr, Zone: tr.zone, Anchor: utc(t, "2000-01-01T00:00:07Z")})
			at := utc(t, tr.at).Unix()
			var fs []int64
			for a := at - 3*secondsPerDay; ; {
				f, ok := s.nextSec(a)
				if !ok || f > at+3*secondsPerDay {
					break
				}
				fs = append(fs, f)
				a = f
			}
			for range 40 {
				lo := at - 3*secondsPerDay + r.Int64N(6*secondsPerDay)
				hi := lo + r.Int64N(6*secondsPerDay)
				if hi > at+3*secondsPerDay {
					hi = at + 3*secondsPerDay
				}
				want := int64(0)
				var last int64 = -1
				for _, f := range fs {
					if f > lo && f < hi {
						want++
						last = f
					}
				}
				require.Equal(t, want, s.countBetween(lo, hi), "%s %s (%d,%d)", tr.zone, expr, lo, hi)
				if want > 0 {
					first := fs[0]
					for _, f := range fs {
						if f > lo {
							first = f
							break
						}
					}
					require.Equal(t, last, s.lastBefore(first, hi), "%s %s", tr.zone, expr)
				}
			}
		}
	}
}

func TestCivilMatchesTimePackage(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		days := r.Int64N(3_000_000) - 1_500_000
		tm := time.Unix(days*secondsPerDay, 0).UTC()
		y, m, d := civilFromDays(days)
		require.Equal(t, int64(tm.Year()), y)
		require.Equal(t, int(tm.Month()), m)
		require.Equal(t, tm.Day(), d)
		require.Equal(t, days, daysFromCivil(y, m, d))
		require.Equal(t, int(tm.Weekday()), weekday(days))
		require.Equal(t, time.Date(int(y), time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day(), daysIn(y, m))
	}
}
