package schedule

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/msg"
)

var fuzzZones = []string{
	"UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Sao_Paulo",
	"Asia/Kolkata", "Pacific/Apia", "Pacific/Chatham", "Europe/Dublin", "Africa/Casablanca",
	"America/St_Johns", "Antarctica/Troll", "Asia/Magadan", "Pacific/Kiritimati",
}

func FuzzParse(f *testing.F) {
	for _, seed := range []struct{ expr, zone, key string }{
		{"*/5 * * * *", "UTC", "app/job"},
		{"0 3 * * *", "America/New_York", ""},
		{"H H(0-5) * * H", "Europe/Berlin", "a/b"},
		{"H(0-29)/7,H(30-59) * * * * *", "", "x"},
		{"0 0 30 2 *", "UTC", ""},
		{"@every 1h30m", "Asia/Kolkata", ""},
		{"@weekly", "Local", ""},
		{"1-7/2 0 0 * * 5-7", "Etc/GMT+8", ""},
		{"TZ=UTC 0 0 * * *", "", ""},
		{"0 0 L * *", "UTC", ""},
		{"H/0 * * * *", "UTC", "k"},
		{"? ? ? ? ? ?", "UTC", ""},
		{"0,,1 * * * *", "UTC", ""},
		{"0 9 BD3 * *", "Asia/Shanghai", ""},
		{"30 17 bdl JAN,JUL ?", "America/New_York", ""},
		{"0 0 9 BD-2 * */1", "Europe/Berlin", ""},
		{"0 9 BD0 * *", "UTC", ""},
		{"0 9 BD-0 * *", "UTC", ""},
		{"0 9 BD32 * *", "UTC", ""},
		{"0 0 BD30 1 *", "UTC", ""},  // never that many working days in January
		{"0 0 BD-23 2 *", "UTC", ""}, // nor in February
		{"0 9 BD3,4 * *", "UTC", ""},
		{"0 9 BD3 * MON", "UTC", ""},
		{"0 BD3 * * *", "UTC", ""},
		{"H H BD1 * *", "Asia/Kolkata", "a/b"},
		{"@at 2026-12-24T18:00", "Asia/Shanghai", ""},
		{"@at 2026-03-08T02:30", "America/New_York", ""},
		{"@AT 2026-10-04T02:15:30", "Australia/Lord_Howe", ""},
		{"@at 2026-12-24T18:00+05:30", "Europe/Berlin", ""},
		{"@at 2026-12-24T18:00Z", "", ""},
		{"@at 2026-12-24 18:00", "UTC", ""},
		{"@at 2026-02-30T18:00", "UTC", ""},
		{"@at 1969-12-31T23:59", "UTC", ""},
		{"@at", "UTC", ""},
	} {
		f.Add(seed.expr, seed.zone, seed.key)
	}
	f.Fuzz(func(t *testing.T, expr, zone, key string) {
		s, err := Parse(Spec{Expr: expr, Zone: zone, JobKey: key})
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q, %q) returned %T %v, want *ValidationError", expr, zone, err, err)
			}
			if ve.Error() == "" || ve.Name == "" || ve.Msg == "" {
				t.Fatalf("empty validation error for %q: %+v", expr, ve)
			}
			// Every refusal is a code the console translates, rendering
			// the English the API answers.
			if _, ok := msg.Catalog[ve.Reason.Code]; !ok || ve.Reason.Code == msg.Text {
				t.Fatalf("Parse(%q, %q): reason %+v is not a code of the catalog", expr, zone, ve.Reason)
			}
			if ve.Reason.String() != ve.Msg || ve.Message().String() != ve.Error() {
				t.Fatalf("Parse(%q, %q): the code renders %q, the error says %q", expr, zone, ve.Message().String(), ve.Error())
			}
			return
		}
		// The resolved form is plain cron that parses to the same schedule.
		again, err := Parse(Spec{Expr: s.Resolved(), Zone: zone})
		if err != nil {
			t.Fatalf("Resolved() %q of %q does not parse: %v", s.Resolved(), expr, err)
		}
		if again.second != s.second || again.minute != s.minute || again.hour != s.hour || again.dom != s.dom ||
			again.month != s.month || again.dow != s.dow || again.domStar != s.domStar || again.dowStar != s.dowStar ||
			again.every != s.every || again.bd != s.bd || again.once != s.once || again.at != s.at {
			t.Fatalf("Resolved() %q of %q parses differently", s.Resolved(), expr)
		}
		a := time.Date(2026, 3, 8, 6, 30, 0, 0, time.UTC)
		if s.NeedsCalendar() {
			if n := s.Next(a); !n.IsZero() {
				t.Fatalf("%q needs a calendar but Next(%s) = %s", expr, a, n)
			}
			if _, err := WithCalendar(s, nil, calendar.Policy{}); !errors.Is(err, ErrNeedsCalendar) {
				t.Fatalf("%q without a calendar: %v", expr, err)
			}
			cs, err := WithCalendar(s, fuzzCalendar, calendar.Policy{})
			if err != nil {
				t.Fatalf("%q: %v", expr, err)
			}
			f, err := cs.Next(a)
			if errors.Is(err, ErrNoFiring) {
				// Documented: a month with fewer working days than asked
				// does not fire, so BD30 in January never does. Only
				// that may leave the whole look-ahead without a firing.
				if m, ok := businessDayMonth(s, a); ok {
					t.Fatalf("%q: no firing, yet %s has working day %d", expr, m, s.bd)
				}
				return
			}
			if err != nil || !f.At.After(a) {
				t.Fatalf("%q: calendar Next(%s) = %+v, %v", expr, a, f, err)
			}
			return
		}
		if s.Once() {
			// One firing: Next is it until it has passed, then none.
			at := time.Unix(s.at, 0).UTC()
			if n := s.Next(a); at.After(a) && !n.Equal(at) || !at.After(a) && !n.IsZero() {
				t.Fatalf("%q: Next(%s) = %s, the one firing is %s", expr, a, n, at)
			}
			if n := s.Next(at); !n.IsZero() {
				t.Fatalf("%q fires again after its one firing, at %s", expr, n)
			}
			if p := s.Preview(at.Add(-time.Second), 5); len(p) != 1 || !p[0].At.Equal(at) {
				t.Fatalf("%q: preview %+v, want the one firing %s", expr, p, at)
			}
			return
		}
		if n := s.Next(a); n.IsZero() || !n.After(a) {
			t.Fatalf("%q: Next(%s) = %s", expr, a, n)
		}
		_ = s.Preview(a, 3)
	})
}

func FuzzNext(f *testing.F) {
	seeds := []struct {
		expr string
		zone uint8
		at   int64
	}{
		{"*/5 * * * *", 0, 1772935200},
		{"30 2 * * *", 1, 1772928000},      // New York spring forward 2026
		{"30 1 * * *", 1, 1793505600},      // New York fall back 2026
		{"0 * * * *", 1, 1793505600},       // hourly over fall back
		{"*/15 2 * * *", 2, 1774659600},    // Berlin
		{"*/15 2 * * *", 1, 1772928000},    // New York spring forward: skipped (not fixed)
		{"15 * * * *", 3, 1791036000},      // Lord Howe 30-minute gap 2026, skipped
		{"*/30 0 * * *", 4, 1541260800},    // Sao Paulo midnight gap, skipped
		{"*/20 30 2 * * *", 1, 1772949000}, // New York gap, fixed with seconds: fires once
		{"45 1 * * *", 3, 1775300000},      // Lord Howe
		{"0 0 * * *", 4, 1541260800},       // Sao Paulo midnight gap 2018
		{"0 9 * * MON-FRI", 5, 1772935200},
		{"0 0 29 2 *", 0, 1767225600},
		{"*/20 * 2 * * *", 1, 1772949000},
		{"0 0 30 * *", 6, 1325000000}, // Samoa skipped 2011-12-30
		{"H H * * *", 7, 1772935200},
		{"@every 45m", 1, 1772935200},
		{"0 0 13 * FRI", 9, 1700000000},
		{"0 * * * *", 8, 2240524800}, // Dublin, 2040-12-31: time.ZoneBounds is wrong that day
	}
	for _, sd := range seeds {
		f.Add(sd.expr, sd.zone, sd.at, "fuzz/job")
	}
	f.Fuzz(func(t *testing.T, expr string, zoneIdx uint8, at int64, key string) {
		zone := fuzzZones[int(zoneIdx)%len(fuzzZones)]
		s, err := Parse(Spec{Expr: expr, Zone: zone, JobKey: key, Anchor: time.Unix(1767225600, 0)})
		if err != nil {
			return
		}
		// Keep the start between 1900 and 2200.
		const lo, span = -2208988800, 9467107200
		checkNextInvariants(t, s, lo+((at%span)+span)%span)
	})
}

var fuzzRobfigParser = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// checkNextInvariants follows Next for up to 8 firings after `at` and checks
// each one: strictly increasing, within the horizon, on a whole second,
// matching the expression in local wall time (or a DST-gap firing, and never
// the repeat of a fixed time) by the reference in reference_test.go, with no
// firing counted in between, and equal to robfig's Next in UTC.
func checkNextInvariants(t testing.TB, s *Schedule, at int64) {
	t.Helper()
	zone := s.loc.String()
	var rs *cron.SpecSchedule
	if zone == "UTC" && s.every == 0 {
		r, err := fuzzRobfigParser.Parse(s.robfig)
		if err != nil {
			t.Fatalf("robfig rejects %q (from %q): %v", s.robfig, s.spec.Expr, err)
		}
		rs = r.(*cron.SpecSchedule)
		rs.Location = time.UTC
	}
	prev := time.Unix(at, 0).UTC()
	var fs []int64
	for range 8 {
		next := s.Next(prev)
		if next.IsZero() {
			break
		}
		if !next.After(prev) {
			t.Fatalf("%q in %s: Next(%s) = %s is not after", s.spec.Expr, zone, prev, next)
		}
		if next.Sub(prev) > horizon*time.Second {
			t.Fatalf("%q in %s: Next(%s) = %s is beyond the horizon", s.spec.Expr, zone, prev, next)
		}
		if next.Nanosecond() != 0 || next.Location() != time.UTC {
			t.Fatalf("%q: Next returned %v", s.spec.Expr, next)
		}
		if s.every > 0 {
			if (next.Unix()-s.anchor)%s.every != 0 || next.Unix() <= s.anchor {
				t.Fatalf("%q: %s is not anchor + k*every", s.spec.Expr, next)
			}
		} else if !refIsFiring(s, next) {
			t.Fatalf("%q in %s: %s (local %s) does not match the expression and is no DST-gap firing",
				s.spec.Expr, zone, next, next.In(s.loc))
		}
		if c := s.countBetween(prev.Unix(), next.Unix()); c != 0 {
			t.Fatalf("%q in %s: %d firings counted between %s and Next=%s", s.spec.Expr, zone, c, prev, next)
		}
		if rs != nil {
			if want := rs.Next(prev); !want.IsZero() && !want.Equal(next) {
				t.Fatalf("%q in UTC after %s: got %s, robfig %s", s.spec.Expr, prev, next, want)
			}
		}
		fs = append(fs, next.Unix())
		prev = next
	}
	if k := len(fs); k >= 3 {
		if c := s.countBetween(fs[0], fs[k-1]); c != int64(k-2) {
			t.Fatalf("%q in %s: countBetween = %d, want %d", s.spec.Expr, zone, c, k-2)
		}
		if l := s.lastBefore(fs[0], fs[k-1]); l != fs[k-2] {
			t.Fatalf("%q in %s: lastBefore = %d, want %d", s.spec.Expr, zone, l, fs[k-2])
		}
	}
}

// The fuzz checks, on random valid expressions in every fuzz zone at random
// instants between 1900 and 2200 (deterministic seed).
func TestNextInvariantsRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 1500 {
		zone := fuzzZones[i%len(fuzzZones)]
		s, err := Parse(Spec{Expr: randomExpr(r, r.IntN(4) == 0), Zone: zone})
		if err != nil {
			continue
		}
		checkNextInvariants(t, s, -2208988800+r.Int64N(9467107200))
	}
}

// businessDayMonth returns a month of the expression, from the one after
// a's to five years on, that has the business day it asks for in
// fuzzCalendar, and false when none has.
func businessDayMonth(s *Schedule, a time.Time) (string, bool) {
	y, m := a.Year(), a.Month()
	for range 5 * 12 {
		if m++; m > time.December {
			m, y = time.January, y+1
		}
		if s.month&(1<<uint(m)) == 0 {
			continue
		}
		if _, ok := fuzzCalendar.NthWorkday(y, m, s.bd); ok {
			return fmt.Sprintf("%d-%02d", y, m), true
		}
	}
	return "", false
}

// fuzzCalendar has a 2026 like mainland China's (holidays and make-up
// weekend days) in a Monday-Friday week, and every other year plain.
var fuzzCalendar = func() *calendar.Calendar {
	var entries []calendar.Entry
	for _, d := range []string{"2026-01-01", "2026-02-16", "2026-02-17", "2026-02-18", "2026-02-19", "2026-02-20", "2026-02-23", "2026-10-01", "2026-10-02", "2026-10-05"} {
		date, _ := calendar.ParseDate(d)
		entries = append(entries, calendar.Entry{Date: date, Kind: calendar.KindHoliday})
	}
	for _, d := range []string{"2026-01-04", "2026-02-14", "2026-02-28", "2026-03-08", "2026-10-10", "2026-10-25"} {
		date, _ := calendar.ParseDate(d)
		entries = append(entries, calendar.Entry{Date: date, Kind: calendar.KindWorkday})
	}
	c, err := calendar.New(calendar.Definition{Name: "fuzz", Entries: entries})
	if err != nil {
		panic(err)
	}
	return c
}()

var fuzzPolicies = []calendar.Policy{
	{}, {Rule: calendar.RuleBusinessDaysOnly}, {Rule: calendar.RuleSkipHolidays},
	{Rule: calendar.RuleShift}, {Rule: calendar.RuleShift, Shift: calendar.ShiftPrevious},
}

// FuzzCalendarNext follows a CalendarSchedule's Next for a few firings from
// a random instant around 2026 and checks each: strictly after, the
// decision landing on At, on a working day where the rule says so, skipped
// candidates sorted, counted and (but for shift's duplicates) after the
// previous firing and not after At.
func FuzzCalendarNext(f *testing.F) {
	for _, sd := range []struct {
		expr   string
		zone   uint8
		at     int64
		policy uint8
	}{
		{"0 9 BD3 * *", 5, 1767225600, 0},
		{"30 2 * * SAT", 1, 1772755200, 3},
		{"30 2 * * *", 1, 1772755200, 4},
		{"0 9,18 * * *", 2, 1771000000, 1},
		{"* * * * * *", 0, 1771113600, 1},
		{"0 * * * *", 0, 1771113600, 3},
		{"0 9 BD-2 FEB *", 0, 1767225600, 4},
		{"@every 2h", 0, 1771113600, 4},
		{"30 1 * * SAT,SUN", 1, 1793000000, 3},
	} {
		f.Add(sd.expr, sd.zone, sd.at, sd.policy)
	}
	f.Fuzz(func(t *testing.T, expr string, zoneIdx uint8, at int64, policyIdx uint8) {
		zone := fuzzZones[int(zoneIdx)%len(fuzzZones)]
		s, err := Parse(Spec{Expr: expr, Zone: zone, JobKey: "fuzz/job", Anchor: time.Unix(1767225600, 0)})
		if err != nil {
			return
		}
		p := fuzzPolicies[int(policyIdx)%len(fuzzPolicies)]
		cs, err := WithCalendar(s, fuzzCalendar, p)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q %v: %v", expr, p, err)
			}
			return
		}
		// Start between 2025 and 2028.
		const lo, span = 1735689600, 3 * 366 * 86400
		after := time.Unix(lo+((at%span)+span)%span, 0).UTC()
		for range 4 {
			fr, err := cs.Next(after)
			if err != nil {
				if !errors.Is(err, ErrNoFiring) {
					t.Fatalf("%q %v after %s: %v", expr, p, after, err)
				}
				return
			}
			if !fr.At.After(after) || !fr.At.Equal(fr.Decision.At) || !fr.Decision.Fire {
				t.Fatalf("%q %v: Next(%s) = %+v", expr, p, after, fr)
			}
			day := calendar.DateOf(fr.Local)
			if (p.Rule == calendar.RuleBusinessDaysOnly || p.Rule == calendar.RuleShift || s.NeedsCalendar()) && !fuzzCalendar.IsWorkday(day) {
				t.Fatalf("%q %v: fires at %s, on %s, not a working day", expr, p, fr.Local, day)
			}
			if p.Rule == calendar.RuleSkipHolidays && fuzzCalendar.IsHoliday(day) {
				t.Fatalf("%q %v: fires at %s, a holiday", expr, p, fr.Local)
			}
			if fr.SkippedCount < len(fr.Skipped) || len(fr.Skipped) > MaxSkippedListed {
				t.Fatalf("%q %v: %d skipped listed, %d counted", expr, p, len(fr.Skipped), fr.SkippedCount)
			}
			for i, d := range fr.Skipped {
				if d.Fire || d.Reason == "" || (i > 0 && d.Scheduled.Before(fr.Skipped[i-1].Scheduled)) {
					t.Fatalf("%q %v: skipped %d: %+v", expr, p, i, d)
				}
				if d.Reason == calendar.ReasonDuplicate {
					if !d.At.Equal(fr.At) {
						t.Fatalf("%q %v: duplicate of %s reported with %s", expr, p, d.At, fr.At)
					}
				} else if !d.Scheduled.After(after) || d.Scheduled.After(fr.At) {
					t.Fatalf("%q %v: skipped %s outside (%s, %s]", expr, p, d.Scheduled, after, fr.At)
				}
			}
			after = fr.At
		}
	})
}
