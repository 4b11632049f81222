package calendar

import (
	"strconv"
	"testing"
	"time"
)

var (
	sinkBool bool
	sinkDate Date
	sinkDec  Decision
)

func BenchmarkIsWorkday(b *testing.B) {
	c := china2026(b)
	for _, year := range []int{2026, 2030} { // with special days (a table), base week only
		days := make([]Date, 366)
		for i := range days {
			days[i] = d(year, 1, 1).AddDays(i)
		}
		b.Run(strconv.Itoa(year), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				sinkBool = c.IsWorkday(days[i%len(days)])
			}
		})
	}
}

func BenchmarkNthWorkday(b *testing.B) {
	c := china2026(b)
	for _, n := range []BusinessDay{3, -1, -2, 25} {
		b.Run(n.String(), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				sinkDate, sinkBool = c.NthWorkday(2026, time.Month(i%12+1), n)
			}
		})
	}
}

func BenchmarkNextWorkday(b *testing.B) {
	c := china2026(b)
	for i := 0; b.Loop(); i++ {
		sinkDate, sinkBool = c.NextWorkday(d(2026, 2, 14+i%10)) // up to the Spring Festival break
	}
}

func BenchmarkApplyShift(b *testing.B) {
	c := china2026(b)
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		b.Fatal(err)
	}
	t := time.Date(2026, 2, 16, 9, 0, 0, 0, sh) // a holiday: shifted nine days
	p := Policy{Rule: RuleShift}
	for b.Loop() {
		sinkDec = c.Apply(p, t)
	}
}
