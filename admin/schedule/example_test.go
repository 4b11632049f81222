package schedule_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/schedule"
)

// A job at 02:30 New York time meets both daylight-saving transitions of
// 2026: the nonexistent 02:30 of March 8 fires at the transition instant
// (03:00 EDT), and later firings are back to 02:30.
func Example() {
	s, err := schedule.Parse(schedule.Spec{Expr: "30 2 * * *", Zone: "America/New_York", JobKey: "billing/invoice"})
	if err != nil {
		panic(err)
	}
	after := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	fmt.Println("next:", s.Next(after).Format(time.RFC3339))
	for _, f := range s.Preview(after, 3) {
		fmt.Println(strings.TrimSpace(f.At.Format(time.RFC3339) + " " + f.Local.Format("2006-01-02 15:04 MST") + " " + f.Note))
	}
	// Output:
	// next: 2026-03-08T07:00:00Z
	// 2026-03-08T07:00:00Z 2026-03-08 03:00 EDT DST gap: 02:30 does not exist, fired at 03:00 EDT
	// 2026-03-09T06:30:00Z 2026-03-09 02:30 EDT
	// 2026-03-10T06:30:00Z 2026-03-10 02:30 EDT
}

// H spreads jobs over the hour: each job key gets its own stable minute.
func ExampleSchedule_Resolved() {
	for _, key := range []string{"billing/invoice", "reports/daily"} {
		s, err := schedule.Parse(schedule.Spec{Expr: "H H(0-5) * * *", JobKey: key})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s\n", key, s.Resolved())
	}
	// Output:
	// billing/invoice: 27 1 * * *
	// reports/daily: 2 4 * * *
}

// In the repeated hour of November 1 (New York), a fixed 01:30 fires once
// while an hourly job fires at both 01:00s.
func ExampleSchedule_Preview() {
	after := time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC)
	for _, expr := range []string{"30 1 * * *", "0 * * * *"} {
		s, err := schedule.Parse(schedule.Spec{Expr: expr, Zone: "America/New_York"})
		if err != nil {
			panic(err)
		}
		fmt.Println(expr)
		for _, f := range s.Preview(after, 3) {
			fmt.Println(strings.TrimRight("  "+f.At.Format("Jan 2 15:04Z")+"  "+f.Local.Format("15:04 MST")+"  "+f.Note, " "))
		}
	}
	// Output:
	// 30 1 * * *
	//   Nov 1 05:30Z  01:30 EDT  DST overlap: first 01:30 (EDT); the repeated 01:30 EST does not fire
	//   Nov 2 06:30Z  01:30 EST
	//   Nov 3 06:30Z  01:30 EST
	// 0 * * * *
	//   Nov 1 05:00Z  01:00 EDT  DST overlap: 01:00 EDT is the first of two (clocks go back to EST)
	//   Nov 1 06:00Z  01:00 EST  DST overlap: 01:00 EST is the second of two (clocks went back from EDT)
	//   Nov 1 07:00Z  02:00 EST
}

// On March 8 (New York) 02:00-02:59 does not exist. A fixed 02:30 fires
// once at 03:00 EDT; a job every 15 minutes of hour 2 skips the nonexistent
// times, and its next firing says so.
func ExampleSchedule_Preview_springForward() {
	after := time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC)
	for _, expr := range []string{"30 2 * * *", "*/15 2 * * *"} {
		s, err := schedule.Parse(schedule.Spec{Expr: expr, Zone: "America/New_York"})
		if err != nil {
			panic(err)
		}
		fmt.Println(expr)
		for _, f := range s.Preview(after, 2) {
			fmt.Println(strings.TrimRight("  "+f.At.Format("Jan 2 15:04Z")+"  "+f.Local.Format("15:04 MST")+"  "+f.Note, " "))
		}
	}
	// Output:
	// 30 2 * * *
	//   Mar 8 07:00Z  03:00 EDT  DST gap: 02:30 does not exist, fired at 03:00 EDT
	//   Mar 9 06:30Z  02:30 EDT
	// */15 2 * * *
	//   Mar 9 06:00Z  02:00 EDT  DST gap: 4 scheduled times from 02:00 to 02:45 on 2026-03-08 do not exist and are skipped
	//   Mar 9 06:15Z  02:15 EDT
}

func ExamplePlan() {
	s, err := schedule.Parse(schedule.Spec{Expr: "0 * * * *"})
	if err != nil {
		panic(err)
	}
	// The admin was down from 06:30 to 10:05; next_fire_at was 07:00.
	next := time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC)
	now := time.Date(2026, 6, 1, 10, 5, 0, 0, time.UTC)
	for _, p := range []schedule.MisfirePolicy{schedule.MisfireRunOnce, schedule.MisfireSkip, schedule.MisfireCatchUp} {
		d := schedule.Plan(s, next, now, schedule.MisfireConfig{Policy: p})
		fmt.Printf("%-8s fire=%v skipped=%d next=%s\n", p, clock(d.Fire), d.SkippedCount, d.Next.Format("15:04"))
	}
	// Output:
	// run_once fire=[10:00] skipped=3 next=11:00
	// skip     fire=[] skipped=4 next=11:00
	// catch_up fire=[07:00 08:00 09:00 10:00] skipped=0 next=11:00
}

func clock(ts []time.Time) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Format("15:04"))
	}
	return out
}

// A daily job on mainland China's 2026 calendar with the rule shift
// (previous): the firings of the Spring Festival break move back to the
// make-up Saturday, 14 February, and fire there once.
func ExampleWithCalendar() {
	// The break, 15 to 23 February, and its make-up Saturdays 14 and 28.
	entries := []calendar.Entry{
		{Date: calendar.NewDate(2026, time.February, 14), Kind: calendar.KindWorkday},
		{Date: calendar.NewDate(2026, time.February, 28), Kind: calendar.KindWorkday},
	}
	for day := 15; day <= 23; day++ {
		entries = append(entries, calendar.Entry{Date: calendar.NewDate(2026, time.February, day), Kind: calendar.KindHoliday, Name: "Spring Festival"})
	}
	cal, err := calendar.New(calendar.Definition{Name: "cn", Entries: entries})
	if err != nil {
		panic(err)
	}
	s, err := schedule.Parse(schedule.Spec{Expr: "0 9 * * *", Zone: "Asia/Shanghai"})
	if err != nil {
		panic(err)
	}
	cs, err := schedule.WithCalendar(s, cal, calendar.Policy{Rule: calendar.RuleShift, Shift: calendar.ShiftPrevious})
	if err != nil {
		panic(err)
	}
	for _, f := range cs.Preview(time.Date(2026, 2, 13, 2, 0, 0, 0, time.UTC), 2) {
		fmt.Println(f.Local.Format("Mon 2006-01-02 15:04"), "skipped:", f.SkippedCount)
		if len(f.Skipped) > 0 {
			fmt.Println("  first:", f.Skipped[0].Note())
		}
	}
	bd, err := schedule.Parse(schedule.Spec{Expr: "0 9 BDL * *", Zone: "Asia/Shanghai"})
	if err != nil {
		panic(err)
	}
	if _, err := schedule.WithCalendar(bd, nil, calendar.Policy{}); err != nil {
		fmt.Println(err)
	}
	cs, err = schedule.WithCalendar(bd, cal, calendar.Policy{})
	if err != nil {
		panic(err)
	}
	f, err := cs.Next(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	fmt.Println("BDL:", f.Local.Format("Mon 2006-01-02 15:04"))
	// Output:
	// Sat 2026-02-14 09:00 skipped: 9
	//   first: skipped: shifted onto 2026-02-14 09:00:00 CST, which fires already
	// Tue 2026-02-24 09:00 skipped: 0
	// cron field 3 (day of month): BDL needs a calendar: set the job's calendar
	// BDL: Sat 2026-02-28 09:00
}
