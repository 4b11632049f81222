package schedule

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/shardjob/shardjob/admin/calendar"
)

var benchCases = []struct {
	name, expr, zone string
}{
	{"Every5Min_UTC", "*/5 * * * *", "UTC"},
	{"Every5Min_NewYork", "*/5 * * * *", "America/New_York"},
	{"Daily0300_UTC", "0 3 * * *", "UTC"},
	{"Daily0300_NewYork", "0 3 * * *", "America/New_York"},
	{"WeekdaysH_Berlin", "H 9 * * MON-FRI", "Europe/Berlin"},
	{"EverySecond_NewYork", "* * * * * *", "America/New_York"},
	{"LeapDay_UTC", "0 0 29 2 *", "UTC"},
	{"AtOnce_Shanghai", "@at 2030-12-24T18:00", "Asia/Shanghai"},
}

// benchStart and benchEnd bound the chain of Next calls, so every call
// starts from a realistic instant (2026..2036) and crosses many DST
// transitions.
var (
	benchStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	benchEnd   = time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
)

func BenchmarkNext(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			s := mustParse(b, Spec{Expr: bc.expr, Zone: bc.zone, JobKey: "bench/job"})
			t := benchStart
			for b.Loop() {
				t = s.Next(t)
				if t.After(benchEnd) || t.IsZero() {
					t = benchStart
				}
			}
		})
	}
}

// BenchmarkNextRobfig runs robfig/cron's own Next (which does not apply
// our DST rules) on the same expressions, for comparison.
func BenchmarkNextRobfig(b *testing.B) {
	p := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			s := mustParse(b, Spec{Expr: bc.expr, Zone: bc.zone, JobKey: "bench/job"})
			r, err := p.Parse(s.Resolved())
			if err != nil {
				b.Fatal(err)
			}
			r.(*cron.SpecSchedule).Location = s.Location()
			t := benchStart
			for b.Loop() {
				t = r.Next(t)
				if t.After(benchEnd) || t.IsZero() {
					t = benchStart
				}
			}
		})
	}
}

// BenchmarkNextCalendar runs CalendarSchedule.Next over 2026 with the
// mainland China calendar (Spring Festival, National Day, make-up days) in
// Asia/Shanghai, and a US-like calendar in New York (daylight saving).
func BenchmarkNextCalendar(b *testing.B) {
	cn := china2026(b)
	us := simpleCalendar(b, "us", 0, "2026-01-01 holiday", "2026-07-03 holiday", "2026-11-26 holiday", "2026-12-25 holiday")
	for _, bc := range []struct {
		name, expr, zone string
		cal              *calendar.Calendar
		policy           calendar.Policy
	}{
		{"BD3Monthly_Shanghai", "0 9 BD3 * *", "Asia/Shanghai", cn, calendar.Policy{}},
		{"BDLMonthly_NewYork", "0 17 BDL * *", "America/New_York", us, calendar.Policy{}},
		{"BusinessDaysOnlyDaily_Shanghai", "30 9 * * *", "Asia/Shanghai", cn, ruleBDO},
		{"SkipHolidaysWeekdays_NewYork", "30 9 * * MON-FRI", "America/New_York", us, ruleSkip},
		{"ShiftNextDaily_Shanghai", "0 9 * * *", "Asia/Shanghai", cn, ruleNext},
		{"ShiftPreviousDaily_Shanghai", "0 9 * * *", "Asia/Shanghai", cn, rulePrevious},
		{"ShiftNextWeekly_NewYork", "0 9 * * SAT", "America/New_York", us, ruleNext},
		{"NoRule_Shanghai", "0 9 * * *", "Asia/Shanghai", cn, calendar.Policy{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cs, err := WithCalendar(mustParse(b, Spec{Expr: bc.expr, Zone: bc.zone}), bc.cal, bc.policy)
			if err != nil {
				b.Fatal(err)
			}
			start, end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
			t := start
			for b.Loop() {
				f, err := cs.Next(t)
				if err != nil {
					b.Fatal(err)
				}
				if t = f.At; t.After(end) {
					t = start
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := Parse(Spec{Expr: "H H(0-5) * * MON-FRI", Zone: "America/New_York", JobKey: "bench/job"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanYearBacklog: an every-second job whose next_fire_at is a
// year old (31.5 million missed firings).
func BenchmarkPlanYearBacklog(b *testing.B) {
	s := mustParse(b, Spec{Expr: "* * * * * *", Zone: "America/New_York"})
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	next := now.AddDate(-1, 0, 0)
	for _, p := range []MisfirePolicy{MisfireRunOnce, MisfireCatchUp} {
		b.Run(string(p), func(b *testing.B) {
			for b.Loop() {
				d := Plan(s, next, now, MisfireConfig{Policy: p, Threshold: time.Second})
				if d.SkippedCount == 0 {
					b.Fatal("nothing skipped")
				}
			}
		})
	}
}

// BenchmarkNextZones is Next of a multi-zone schedule: "09:00 in Tokyo,
// London and New York" (three zones, each crossing its own clock changes),
// and the same expression in one zone through MultiZone for comparison.
func BenchmarkNextZones(b *testing.B) {
	for _, bc := range []struct {
		name  string
		zones []string
	}{
		{"Daily0900_1Zone", []string{"Europe/London"}},
		{"Daily0900_3Zones", []string{"Asia/Tokyo", "Europe/London", "America/New_York"}},
		{"Weekdays0900_1730_3Zones", []string{"Asia/Tokyo", "Europe/London", "America/New_York"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			expr := "0 9 * * *"
			if bc.name == "Weekdays0900_1730_3Zones" {
				expr = "0 9,17 * * MON-FRI"
			}
			m, err := ParseZones(Spec{Expr: expr, JobKey: "bench/job"}, bc.zones)
			if err != nil {
				b.Fatal(err)
			}
			t := benchStart
			for b.Loop() {
				t = m.Next(t)
				if t.After(benchEnd) || t.IsZero() {
					t = benchStart
				}
			}
		})
	}
}

// BenchmarkPlanZonesYearBacklog: an hourly job in three zones (the densest
// several zones take) whose next_fire_at is a year old: the union is
// enumerated (about 26,000 distinct instants) rather than counted.
func BenchmarkPlanZonesYearBacklog(b *testing.B) {
	m, err := ParseZones(Spec{Expr: "0 * * * *"}, []string{"Asia/Kolkata", "Europe/London", "America/New_York"})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	next := now.AddDate(-1, 0, 0)
	for b.Loop() {
		d := PlanZones(m, next, now, MisfireConfig{Policy: MisfireRunOnce, Threshold: time.Second})
		if d.SkippedCount == 0 {
			b.Fatal("nothing skipped")
		}
	}
}
