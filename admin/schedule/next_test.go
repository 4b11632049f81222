package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type nextCase struct {
	name  string
	expr  string
	zone  string
	after string   // RFC 3339, UTC
	want  []string // the next firings, RFC 3339 UTC
}

func runNextCases(t *testing.T, tests []nextCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, Spec{Expr: tc.expr, Zone: tc.zone, JobKey: "app/job"})
			require.Equal(t, tc.want, nextN(s, utc(t, tc.after), len(tc.want)))
		})
	}
}

func TestNextBasics(t *testing.T) {
	t.Parallel()
	runNextCases(t, []nextCase{
		{"every 5 minutes", "*/5 * * * *", "UTC", "2026-01-01T10:02:30Z",
			[]string{"2026-01-01T10:05:00Z", "2026-01-01T10:10:00Z", "2026-01-01T10:15:00Z"}},
		{"strictly after", "*/5 * * * *", "UTC", "2026-01-01T10:05:00Z",
			[]string{"2026-01-01T10:10:00Z"}},
		{"daily 03:00", "0 3 * * *", "UTC", "2026-01-31T03:00:00Z",
			[]string{"2026-02-01T03:00:00Z", "2026-02-02T03:00:00Z"}},
		{"year wrap", "0 0 1 1 *", "UTC", "2026-06-15T00:00:00Z",
			[]string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{"31st skips short months", "0 12 31 * *", "UTC", "2026-01-31T12:00:00Z",
			[]string{"2026-03-31T12:00:00Z", "2026-05-31T12:00:00Z", "2026-07-31T12:00:00Z", "2026-08-31T12:00:00Z"}},
		{"leap day", "0 0 29 2 *", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"leap day New York", "0 0 29 2 *", "America/New_York", "2026-01-01T00:00:00Z",
			[]string{"2028-02-29T05:00:00Z"}},
		{"no leap day in 2100", "0 0 29 2 *", "UTC", "2096-03-01T00:00:00Z",
			[]string{}}, // 2104 is beyond the ~5 year horizon
		{"names", "0 8 * JAN,jul mon", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2026-01-05T08:00:00Z", "2026-01-12T08:00:00Z", "2026-01-19T08:00:00Z", "2026-01-26T08:00:00Z", "2026-07-06T08:00:00Z"}},
		{"weekdays range", "30 9 * * MON-FRI", "UTC", "2026-01-02T10:00:00Z", // a Friday
			[]string{"2026-01-05T09:30:00Z", "2026-01-06T09:30:00Z"}},
		{"Sunday as 7", "0 0 * * 7", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
		// Day of month and day of week both restricted: either matches (OR).
		{"dom OR dow", "0 0 13 * FRI", "UTC", "2026-02-01T00:00:00Z",
			[]string{"2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z", "2026-02-20T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z"}},
		// One of them '*' (or '?'): both must match (AND), i.e. the other decides.
		{"dom with star dow", "0 0 13 * *", "UTC", "2026-02-01T00:00:00Z",
			[]string{"2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z"}},
		{"dow with ? dom", "0 0 ? * FRI", "UTC", "2026-02-01T00:00:00Z",
			[]string{"2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z"}},
		// */1 (and ?/1) is '*', not a restriction; a range over the whole
		// field (1-31, 0-6) is a restriction.
		{"dom */1 is a star", "0 0 */1 * FRI", "UTC", "2026-02-01T00:00:00Z",
			[]string{"2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z"}},
		{"dom ?/1 is a star", "0 0 ?/1 * FRI", "UTC", "2026-02-01T00:00:00Z",
			[]string{"2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z"}},
		{"dow */1 is a star", "0 0 13 * */1", "UTC", "2026-02-01T00:00:00Z",
			[]string{"2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z"}},
		{"dom 1-31 is a restriction", "0 0 1-31 * FRI", "UTC", "2026-02-01T00:00:00Z",
			[]string{"2026-02-02T00:00:00Z", "2026-02-03T00:00:00Z"}},
		{"dow 0-6 is a restriction", "0 0 13 * 0-6", "UTC", "2026-02-01T00:00:00Z",
			[]string{"2026-02-02T00:00:00Z", "2026-02-03T00:00:00Z"}},
		{"seconds", "*/20 * * * * *", "UTC", "2026-01-01T00:00:50Z",
			[]string{"2026-01-01T00:01:00Z", "2026-01-01T00:01:20Z", "2026-01-01T00:01:40Z"}},
		{"step from value", "5/20 * * * *", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2026-01-01T00:05:00Z", "2026-01-01T00:25:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:05:00Z"}},
		{"@yearly", "@yearly", "UTC", "2026-03-01T00:00:00Z", []string{"2027-01-01T00:00:00Z"}},
		{"@monthly", "@monthly", "UTC", "2026-03-01T00:00:00Z", []string{"2026-04-01T00:00:00Z"}},
		{"@weekly", "@weekly", "UTC", "2026-03-01T00:00:00Z", []string{"2026-03-08T00:00:00Z"}}, // Sundays
		{"@daily", "@daily", "UTC", "2026-03-01T00:00:00Z", []string{"2026-03-02T00:00:00Z"}},
		{"@hourly", "@hourly", "UTC", "2026-03-01T00:59:59Z", []string{"2026-03-01T01:00:00Z"}},
		{"@daily in Kolkata", "@daily", "Asia/Kolkata", "2026-03-01T00:00:00Z", []string{"2026-03-01T18:30:00Z", "2026-03-02T18:30:00Z"}},
		{"Kolkata 09:00", "0 9 * * *", "Asia/Kolkata", "2026-07-01T00:00:00Z", []string{"2026-07-01T03:30:00Z", "2026-07-02T03:30:00Z"}},
		{"Kolkata half hour", "*/30 * * * *", "Asia/Kolkata", "2026-07-01T00:10:00Z", []string{"2026-07-01T00:30:00Z", "2026-07-01T01:00:00Z"}},
	})
}

// The daylight-saving rules, with instants checked against tzdata (Go's
// time package):
//
//	America/New_York 2026-03-08 07:00Z: 02:00 EST -> 03:00 EDT (gap 02:00-03:00)
//	America/New_York 2026-11-01 06:00Z: 02:00 EDT -> 01:00 EST (01:00-02:00 twice)
//	Europe/Berlin    2026-03-29 01:00Z: 02:00 CET -> 03:00 CEST
//	Europe/Berlin    2026-10-25 01:00Z: 03:00 CEST -> 02:00 CET (02:00-03:00 twice)
//	Europe/London    2014-03-30 01:00Z: 01:00 GMT -> 02:00 BST (gap 01:00-02:00)
//	Europe/London    2014-10-26 01:00Z: 02:00 BST -> 01:00 GMT (01:00-02:00 twice)
//	Australia/Lord_Howe 2026-10-03 15:30Z: 02:00 +1030 -> 02:30 +11 (30-minute gap)
//	Australia/Lord_Howe 2026-04-04 15:00Z: 02:00 +11 -> 01:30 +1030 (01:30-02:00 twice)
//	America/Sao_Paulo 2018-11-04 03:00Z: 00:00 -03 -> 01:00 -02 (midnight does not exist)
//	America/Sao_Paulo 2019-02-17 02:00Z: 00:00 -02 -> 23:00 -03 (23:00-24:00 on the 16th twice)
//
// Spring forward: a fixed schedule (one hour and one minute) whose time does
// not exist fires once at the transition instant; any other schedule skips
// the nonexistent times. Fall back: a fixed schedule fires at the first
// occurrence of a repeated time only; any other at every real instant.
func TestNextDST(t *testing.T) {
	t.Parallel()
	runNextCases(t, []nextCase{
		// New York, spring forward.
		{"NY gap fixed", "30 2 * * *", "America/New_York", "2026-03-08T05:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"NY gap fixed 02:00", "0 2 * * *", "America/New_York", "2026-03-08T05:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z"}},
		{"NY gap fixed from inside the EST hour", "30 2 * * *", "America/New_York", "2026-03-08T06:59:59Z",
			[]string{"2026-03-08T07:00:00Z"}},
		{"NY just after the gap firing", "30 2 * * *", "America/New_York", "2026-03-08T07:00:00Z",
			[]string{"2026-03-09T06:30:00Z"}},
		{"NY 03:00 not doubled by the gap", "0 3 * * *", "America/New_York", "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T07:00:00Z"}},
		{"NY gap minute step skips the day", "*/15 2 * * *", "America/New_York", "2026-03-08T05:00:00Z",
			[]string{"2026-03-09T06:00:00Z", "2026-03-09T06:15:00Z", "2026-03-09T06:30:00Z"}},
		{"NY gap hourly", "0 * * * *", "America/New_York", "2026-03-08T05:30:00Z",
			[]string{"2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"}},
		{"NY gap hourly at :30", "30 * * * *", "America/New_York", "2026-03-08T05:45:00Z",
			[]string{"2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z", "2026-03-08T08:30:00Z"}},
		{"NY gap hour range", "0 1-2 * * *", "America/New_York", "2026-03-08T05:00:00Z",
			[]string{"2026-03-08T06:00:00Z", "2026-03-09T05:00:00Z", "2026-03-09T06:00:00Z"}},
		{"NY gap hour list", "30 2,14 * * *", "America/New_York", "2026-03-08T05:00:00Z",
			[]string{"2026-03-08T18:30:00Z", "2026-03-09T06:30:00Z"}},
		// New York, fall back.
		{"NY overlap fixed", "30 1 * * *", "America/New_York", "2026-11-01T04:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"NY overlap fixed, asked between the two", "30 1 * * *", "America/New_York", "2026-11-01T05:45:00Z",
			[]string{"2026-11-02T06:30:00Z"}},
		{"NY overlap @daily-like 01:00", "0 1 * * *", "America/New_York", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-02T06:00:00Z"}},
		{"NY overlap hourly", "0 * * * *", "America/New_York", "2026-11-01T04:30:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"}},
		{"NY overlap minute step", "*/30 1 * * *", "America/New_York", "2026-11-01T04:00:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z", "2026-11-02T06:00:00Z"}},
		{"NY overlap hour list", "30 1,3 * * *", "America/New_York", "2026-11-01T04:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-01T08:30:00Z"}},
		// Berlin.
		{"Berlin gap fixed", "30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		{"Berlin gap every 10 min in hour 2", "*/10 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-30T00:00:00Z", "2026-03-30T00:10:00Z"}},
		{"Berlin gap hourly at :30", "30 * * * *", "Europe/Berlin", "2026-03-29T00:00:00Z",
			[]string{"2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z", "2026-03-29T02:30:00Z"}},
		{"Berlin gap hour list", "0 1,2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T00:00:00Z", "2026-03-29T23:00:00Z", "2026-03-30T00:00:00Z"}},
		{"Berlin overlap fixed", "30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		{"Berlin overlap 02:00 fixed", "0 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-26T01:00:00Z"}},
		{"Berlin overlap every 20 min", "*/20 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T00:20:00Z", "2026-10-25T00:40:00Z", "2026-10-25T01:00:00Z", "2026-10-25T01:20:00Z", "2026-10-25T01:40:00Z", "2026-10-26T01:00:00Z"}},
		// London (the example of issue 21).
		{"London gap hourly at :30", "30 * * * *", "Europe/London", "2014-03-30T00:00:00Z",
			[]string{"2014-03-30T00:30:00Z", "2014-03-30T01:30:00Z", "2014-03-30T02:30:00Z"}},
		{"London gap fixed", "30 1 * * *", "Europe/London", "2014-03-29T12:00:00Z",
			[]string{"2014-03-30T01:00:00Z", "2014-03-31T00:30:00Z"}},
		{"London gap fixed 01:00", "0 1 * * *", "Europe/London", "2014-03-29T12:00:00Z",
			[]string{"2014-03-30T01:00:00Z", "2014-03-31T00:00:00Z"}},
		{"London gap half hours in hour 1", "*/30 1 * * *", "Europe/London", "2014-03-29T12:00:00Z",
			[]string{"2014-03-31T00:00:00Z", "2014-03-31T00:30:00Z"}},
		{"London overlap fixed", "30 1 * * *", "Europe/London", "2014-10-25T12:00:00Z",
			[]string{"2014-10-26T00:30:00Z", "2014-10-27T01:30:00Z"}},
		{"London overlap hourly at :30", "30 * * * *", "Europe/London", "2014-10-26T00:00:00Z",
			[]string{"2014-10-26T00:30:00Z", "2014-10-26T01:30:00Z", "2014-10-26T02:30:00Z"}},
		// Lord Howe: 30-minute shifts.
		{"Lord Howe gap fixed", "15 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z",
			[]string{"2026-10-03T15:30:00Z", "2026-10-04T15:15:00Z"}},
		{"Lord Howe after gap", "45 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z",
			[]string{"2026-10-03T15:45:00Z"}},
		{"Lord Howe gap quarter hours", "*/15 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z",
			[]string{"2026-10-03T15:30:00Z", "2026-10-03T15:45:00Z", "2026-10-04T15:00:00Z"}},
		{"Lord Howe gap hourly at :15", "15 * * * *", "Australia/Lord_Howe", "2026-10-03T14:00:00Z",
			[]string{"2026-10-03T14:45:00Z", "2026-10-03T16:15:00Z"}},
		{"Lord Howe gap hourly", "0 * * * *", "Australia/Lord_Howe", "2026-10-03T14:00:00Z",
			[]string{"2026-10-03T14:30:00Z", "2026-10-03T16:00:00Z"}},
		{"Lord Howe overlap fixed", "45 1 * * *", "Australia/Lord_Howe", "2026-04-04T12:00:00Z",
			[]string{"2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"}},
		{"Lord Howe overlap fixed 01:30", "30 1 * * *", "Australia/Lord_Howe", "2026-04-04T12:00:00Z",
			[]string{"2026-04-04T14:30:00Z", "2026-04-05T15:00:00Z"}},
		{"Lord Howe overlap quarter hours", "*/15 1 * * *", "Australia/Lord_Howe", "2026-04-04T12:00:00Z",
			[]string{"2026-04-04T14:00:00Z", "2026-04-04T14:15:00Z", "2026-04-04T14:30:00Z", "2026-04-04T14:45:00Z", "2026-04-04T15:00:00Z", "2026-04-04T15:15:00Z", "2026-04-05T14:30:00Z"}},
		{"Lord Howe overlap hourly at :30", "30 * * * *", "Australia/Lord_Howe", "2026-04-04T14:00:00Z",
			[]string{"2026-04-04T14:30:00Z", "2026-04-04T15:00:00Z", "2026-04-04T16:00:00Z"}},
		// Sao Paulo's historic midnight transitions.
		{"Sao Paulo midnight gap fixed", "0 0 * * *", "America/Sao_Paulo", "2018-11-03T12:00:00Z",
			[]string{"2018-11-04T03:00:00Z", "2018-11-05T02:00:00Z"}},
		{"Sao Paulo midnight gap @daily", "@daily", "America/Sao_Paulo", "2018-11-03T12:00:00Z",
			[]string{"2018-11-04T03:00:00Z"}},
		{"Sao Paulo midnight gap fixed 00:30", "30 0 * * *", "America/Sao_Paulo", "2018-11-03T12:00:00Z",
			[]string{"2018-11-04T03:00:00Z", "2018-11-05T02:30:00Z"}},
		{"Sao Paulo midnight gap half hours", "*/30 0 * * *", "America/Sao_Paulo", "2018-11-03T12:00:00Z",
			[]string{"2018-11-05T02:00:00Z", "2018-11-05T02:30:00Z"}},
		{"Sao Paulo midnight gap hourly", "0 * * * *", "America/Sao_Paulo", "2018-11-04T01:30:00Z",
			[]string{"2018-11-04T02:00:00Z", "2018-11-04T03:00:00Z", "2018-11-04T04:00:00Z"}},
		{"Sao Paulo midnight gap hour list", "0 0,12 * * *", "America/Sao_Paulo", "2018-11-03T16:00:00Z",
			[]string{"2018-11-04T14:00:00Z", "2018-11-05T02:00:00Z"}},
		{"Sao Paulo overlap fixed", "30 23 * * *", "America/Sao_Paulo", "2019-02-15T12:00:00Z",
			[]string{"2019-02-16T01:30:00Z", "2019-02-17T01:30:00Z", "2019-02-18T02:30:00Z"}},
		{"Sao Paulo overlap hourly", "0 * * * *", "America/Sao_Paulo", "2019-02-17T00:30:00Z",
			[]string{"2019-02-17T01:00:00Z", "2019-02-17T02:00:00Z", "2019-02-17T03:00:00Z"}},
		// Seconds across transitions: the seconds field does not make a
		// schedule non-fixed.
		{"seconds in gap, minute not fixed", "*/20 * 2 * * *", "America/New_York", "2026-03-08T06:59:00Z",
			[]string{"2026-03-09T06:00:00Z", "2026-03-09T06:00:20Z"}},
		{"seconds in gap, fixed", "*/20 30 2 * * *", "America/New_York", "2026-03-08T06:59:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-09T06:30:20Z"}},
		{"seconds fixed in gap", "10 30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:10Z"}},
		{"seconds fixed overlap", "*/20 59 1 * * *", "America/New_York", "2026-11-01T05:58:00Z",
			[]string{"2026-11-01T05:59:00Z", "2026-11-01T05:59:20Z", "2026-11-01T05:59:40Z", "2026-11-02T06:59:00Z"}},
		{"seconds wildcard minute overlap", "30 * 1 * * *", "America/New_York", "2026-11-01T05:58:00Z",
			[]string{"2026-11-01T05:58:30Z", "2026-11-01T05:59:30Z", "2026-11-01T06:00:30Z", "2026-11-01T06:01:30Z"}},
		{"seconds every second over the gap", "* * * * * *", "America/New_York", "2026-03-08T06:59:58Z",
			[]string{"2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z", "2026-03-08T07:00:01Z"}},
		{"seconds every second over the overlap", "* * * * * *", "America/New_York", "2026-11-01T05:59:58Z",
			[]string{"2026-11-01T05:59:59Z", "2026-11-01T06:00:00Z", "2026-11-01T06:00:01Z"}},
		// */1 in day of month or day of week is '*', so the other field
		// alone decides the day, on a gap day as on any other.
		{"*/1 day of month is a star", "30 2 */1 * SUN", "America/New_York", "2026-03-01T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-15T06:30:00Z"}},
		{"*/1 day of week is a star", "*/30 2 8 * */1", "America/New_York", "2026-03-01T12:00:00Z",
			[]string{"2026-04-08T06:00:00Z", "2026-04-08T06:30:00Z"}},
	})
}

func TestNextEvery(t *testing.T) {
	t.Parallel()
	anchor := utc(t, "2026-01-01T00:00:10Z")
	s := mustParse(t, Spec{Expr: "@every 90m", Zone: "America/New_York", Anchor: anchor})
	require.Equal(t, []string{"2026-01-01T01:30:10Z", "2026-01-01T03:00:10Z"}, nextN(s, anchor.Add(-time.Hour), 2))
	require.Equal(t, []string{"2026-01-01T03:00:10Z"}, nextN(s, utc(t, "2026-01-01T01:30:10Z"), 1))
	// No drift over a DST transition or a long time: always anchor + k*90m.
	got := s.Next(utc(t, "2026-03-08T06:59:00Z"))
	require.Zero(t, got.Sub(anchor)%(90*time.Minute))
	require.Equal(t, "2026-03-08T07:30:10Z", got.Format(time.RFC3339))
	far := s.Next(utc(t, "2030-06-01T00:00:00Z"))
	require.Zero(t, far.Sub(anchor)%(90*time.Minute))
	require.True(t, far.After(utc(t, "2030-06-01T00:00:00Z")))
	require.LessOrEqual(t, far.Sub(utc(t, "2030-06-01T00:00:00Z")), 90*time.Minute)

	// Sub-second anchors are truncated to the second; a zero anchor is the epoch.
	s = mustParse(t, Spec{Expr: "@every 1h", Anchor: anchor.Add(700 * time.Millisecond)})
	require.Equal(t, []string{"2026-01-01T01:00:10Z"}, nextN(s, anchor, 1))
	s = mustParse(t, Spec{Expr: "@every 1h"})
	require.Equal(t, []string{"2026-01-01T01:00:00Z"}, nextN(s, utc(t, "2026-01-01T00:00:10Z"), 1))
}

func TestNextAcceptsAnyZoneAndSubSecond(t *testing.T) {
	t.Parallel()
	s := mustParse(t, Spec{Expr: "0 3 * * *", Zone: "Europe/Berlin"})
	berlin := s.Location()
	a := time.Date(2026, 6, 1, 3, 0, 0, 0, berlin) // exactly a firing: strictly after
	require.Equal(t, utc(t, "2026-06-02T01:00:00Z"), s.Next(a))
	require.Equal(t, utc(t, "2026-06-01T01:00:00Z"), s.Next(a.Add(-time.Nanosecond)))
	require.Equal(t, utc(t, "2026-06-02T01:00:00Z"), s.Next(a.Add(time.Nanosecond)))
	require.Equal(t, time.UTC, s.Next(a).Location())
}

func TestPreviewNotes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr, zone, after string
		n                 int
		want              []Firing // Local compared through its string
	}{
		{"30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 3, []Firing{
			{At: utc(t, "2026-03-08T07:00:00Z"), Note: "DST gap: 02:30 does not exist, fired at 03:00 EDT"},
			{At: utc(t, "2026-03-09T06:30:00Z")},
			{At: utc(t, "2026-03-10T06:30:00Z")},
		}},
		// Non-fixed schedules skip nonexistent times: they are no firing,
		// and the next firing says what was skipped.
		{"*/15 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 2, []Firing{
			{At: utc(t, "2026-03-09T06:00:00Z"), Note: "DST gap: 4 scheduled times from 02:00 to 02:45 on 2026-03-08 do not exist and are skipped"},
			{At: utc(t, "2026-03-09T06:15:00Z")},
		}},
		{"0 * * * *", "America/New_York", "2026-03-08T05:30:00Z", 3, []Firing{
			{At: utc(t, "2026-03-08T06:00:00Z")},
			{At: utc(t, "2026-03-08T07:00:00Z"), Note: "DST gap: 02:00 on 2026-03-08 does not exist and is skipped"},
			{At: utc(t, "2026-03-08T08:00:00Z")},
		}},
		{"30 * * * *", "Europe/London", "2014-03-30T00:00:00Z", 3, []Firing{
			{At: utc(t, "2014-03-30T00:30:00Z")},
			{At: utc(t, "2014-03-30T01:30:00Z"), Note: "DST gap: 01:30 on 2014-03-30 does not exist and is skipped"},
			{At: utc(t, "2014-03-30T02:30:00Z")},
		}},
		{"*/15 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z", 2, []Firing{
			{At: utc(t, "2026-10-03T15:30:00Z"), Note: "DST gap: 2 scheduled times from 02:00 to 02:15 on 2026-10-04 do not exist and are skipped"},
			{At: utc(t, "2026-10-03T15:45:00Z")},
		}},
		{"*/30 0 * * *", "America/Sao_Paulo", "2018-11-03T12:00:00Z", 1, []Firing{
			{At: utc(t, "2018-11-05T02:00:00Z"), Note: "DST gap: 2 scheduled times from 00:00 to 00:30 on 2018-11-04 do not exist and are skipped"},
		}},
		{"*/20 * 2 * * *", "Europe/Berlin", "2026-03-29T00:59:00Z", 1, []Firing{
			{At: utc(t, "2026-03-30T00:00:00Z"), Note: "DST gap: 180 scheduled times from 02:00:00 to 02:59:40 on 2026-03-29 do not exist and are skipped"},
		}},
		// A non-fixed schedule in the repeated hour of the fall back.
		{"*/30 1 * * *", "Europe/London", "2014-10-26T00:00:00Z", 4, []Firing{
			{At: utc(t, "2014-10-26T00:30:00Z"), Note: "DST overlap: 01:30 BST is the first of two (clocks go back to GMT)"},
			{At: utc(t, "2014-10-26T01:00:00Z"), Note: "DST overlap: 01:00 GMT is the second of two (clocks went back from BST)"},
			{At: utc(t, "2014-10-26T01:30:00Z"), Note: "DST overlap: 01:30 GMT is the second of two (clocks went back from BST)"},
			{At: utc(t, "2014-10-27T01:00:00Z")},
		}},
		{"30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 2, []Firing{
			{At: utc(t, "2026-11-01T05:30:00Z"), Note: "DST overlap: first 01:30 (EDT); the repeated 01:30 EST does not fire"},
			{At: utc(t, "2026-11-02T06:30:00Z")},
		}},
		{"0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", 3, []Firing{
			{At: utc(t, "2026-11-01T05:00:00Z"), Note: "DST overlap: 01:00 EDT is the first of two (clocks go back to EST)"},
			{At: utc(t, "2026-11-01T06:00:00Z"), Note: "DST overlap: 01:00 EST is the second of two (clocks went back from EDT)"},
			{At: utc(t, "2026-11-01T07:00:00Z")},
		}},
		{"15 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z", 1, []Firing{
			{At: utc(t, "2026-10-03T15:30:00Z"), Note: "DST gap: 02:15 does not exist, fired at 02:30 +11"},
		}},
		{"30 1 * * *", "Europe/London", "2014-03-29T12:00:00Z", 2, []Firing{
			{At: utc(t, "2014-03-30T01:00:00Z"), Note: "DST gap: 01:30 does not exist, fired at 02:00 BST"},
			{At: utc(t, "2014-03-31T00:30:00Z")},
		}},
		{"*/20 30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 1, []Firing{
			{At: utc(t, "2026-03-08T07:00:00Z"), Note: "DST gap: 3 scheduled times from 02:30:00 to 02:30:40 do not exist, fired once at 03:00:00 EDT"},
		}},
		{"0 0 * * *", "America/Sao_Paulo", "2018-11-03T12:00:00Z", 1, []Firing{
			{At: utc(t, "2018-11-04T03:00:00Z"), Note: "DST gap: 00:00 does not exist, fired at 01:00 -02"},
		}},
		{"10 30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 1, []Firing{
			{At: utc(t, "2026-03-29T01:00:00Z"), Note: "DST gap: 02:30:10 does not exist, fired at 03:00:00 CEST"},
		}},
		{"@every 1h", "America/New_York", "2026-03-08T05:30:00Z", 2, []Firing{
			{At: utc(t, "2026-03-08T06:00:00Z")},
			{At: utc(t, "2026-03-08T07:00:00Z")},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.zone+" "+tc.expr, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, Spec{Expr: tc.expr, Zone: tc.zone})
			got := s.Preview(utc(t, tc.after), tc.n)
			require.Len(t, got, len(tc.want))
			for i, f := range got {
				require.Equal(t, tc.want[i].At, f.At, "firing %d", i)
				require.Equal(t, tc.want[i].Note, f.Note, "firing %d", i)
				require.Equal(t, time.UTC, f.At.Location())
				require.Equal(t, s.Location(), f.Local.Location())
				require.True(t, f.At.Equal(f.Local))
			}
		})
	}
}

func TestPreviewBounds(t *testing.T) {
	t.Parallel()
	s := mustParse(t, Spec{Expr: "* * * * * *"})
	after := utc(t, "2026-01-01T00:00:00Z")
	require.Nil(t, s.Preview(after, 0))
	require.Nil(t, s.Preview(after, -3))
	require.Len(t, s.Preview(after, 5000), maxPreview)
	// Nothing within the horizon: an empty preview.
	s = mustParse(t, Spec{Expr: "0 0 29 2 *"})
	require.Empty(t, s.Preview(utc(t, "2096-03-01T00:00:00Z"), 3))
}

func TestNextExtremeInstants(t *testing.T) {
	t.Parallel()
	s := mustParse(t, Spec{Expr: "0 0 * * *", Zone: "America/New_York"})
	require.False(t, s.Next(time.Time{}).IsZero())
	require.True(t, s.Next(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero())
	e := mustParse(t, Spec{Expr: "@every 1h"})
	require.True(t, e.Next(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero())
	require.True(t, e.Next(time.Time{}).IsZero()) // the first firing (epoch+1h) is far beyond the horizon
	require.Equal(t, utc(t, "1970-01-01T01:00:00Z"), e.Next(utc(t, "1969-12-31T00:00:00Z")))
}
