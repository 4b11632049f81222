package calendar_test

import (
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/calendar"
)

func Example() {
	entries, err := calendar.ParseCSV([]byte(`date,kind,name
2026-02-14,workday,Spring Festival make-up day
2026-02-15,holiday,Spring Festival
2026-02-16,holiday,Spring Festival
2026-02-17,holiday,Spring Festival
2026-02-18,holiday,Spring Festival
2026-02-19,holiday,Spring Festival
2026-02-20,holiday,Spring Festival
2026-02-21,holiday,Spring Festival
2026-02-22,holiday,Spring Festival
2026-02-23,holiday,Spring Festival
2026-02-28,workday,Spring Festival make-up day
`))
	if err != nil {
		panic(err)
	}
	cal, err := calendar.New(calendar.Definition{Name: "cn", Entries: entries})
	if err != nil {
		panic(err)
	}
	for _, n := range []calendar.BusinessDay{3, -1, -2, 25} {
		if day, ok := cal.NthWorkday(2026, time.February, n); ok {
			fmt.Printf("%s of February 2026: %s (%s)\n", n, day, day.Weekday())
		} else {
			fmt.Printf("%s of February 2026: none, the month has %d working days\n", n, cal.WorkdaysIn(2026, time.February))
		}
	}

	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		panic(err)
	}
	firing := time.Date(2026, 2, 17, 9, 0, 0, 0, shanghai)
	for _, p := range []calendar.Policy{
		{Rule: calendar.RuleBusinessDaysOnly},
		{Rule: calendar.RuleShift, Shift: calendar.ShiftNext},
		{Rule: calendar.RuleShift, Shift: calendar.ShiftPrevious},
	} {
		dec := cal.Apply(p, firing)
		if dec.Fire {
			fmt.Printf("%s %s: fires at %s (%s UTC); %s\n", p.Rule, p.Shift,
				dec.At.Format("2006-01-02 15:04"), dec.At.UTC().Format("15:04"), dec.Note())
		} else {
			fmt.Printf("%s: %s (reason %s)\n", p.Rule, dec.Note(), dec.Reason)
		}
	}
	// Output:
	// BD3 of February 2026: 2026-02-04 (Wednesday)
	// BDL of February 2026: 2026-02-28 (Saturday)
	// BD-2 of February 2026: 2026-02-27 (Friday)
	// BD25 of February 2026: none, the month has 16 working days
	// business_days_only: skipped: 2026-02-17 is a holiday (Spring Festival) (reason holiday)
	// shift next: fires at 2026-02-24 09:00 (01:00 UTC); shifted to 2026-02-24: 2026-02-17 is a holiday (Spring Festival)
	// shift previous: fires at 2026-02-14 09:00 (01:00 UTC); shifted to 2026-02-14: 2026-02-17 is a holiday (Spring Festival)
}
