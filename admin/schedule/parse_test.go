package schedule

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"
)

func TestParseValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr     string
		resolved string
		fixed    bool
	}{
		{"*/5 * * * *", "*/5 * * * *", false},
		{"0 3 * * *", "0 3 * * *", true},
		{"  0   3 * * *  ", "0 3 * * *", true},
		{"30 0 3 * * *", "30 0 3 * * *", true},
		{"0 9-17 * * MON-FRI", "0 9-17 * * MON-FRI", false},
		{"0 0 1,15 jan,Jul *", "0 0 1,15 jan,Jul *", true},
		{"15 10 ? * sun", "15 10 ? * sun", true},
		{"0 0 * * 7", "0 0 * * 7", true},
		{"0 0 * * 5-7", "0 0 * * 5-7", true},
		{"0 0 29 2 *", "0 0 29 2 *", true},
		{"0 0 31 * *", "0 0 31 * *", true},
		{"0 0 30 2 1", "0 0 30 2 1", true}, // OR rule: every Monday of February
		{"5/15 * * * *", "5/15 * * * *", false},
		{"0 0,0 * * *", "0 0,0 * * *", true}, // one value, written twice
		{"@yearly", "@yearly", true},
		{"@Annually", "@annually", true},
		{"@monthly", "@monthly", true},
		{"@weekly", "@weekly", true},
		{"@daily", "@daily", true},
		{"@midnight", "@midnight", true},
		{"@hourly", "@hourly", false},
		{"@every 90m", "@every 1h30m0s", false},
		{"@EVERY 1s", "@every 1s", false},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, Spec{Expr: tc.expr, JobKey: "app/job"})
			require.Equal(t, tc.resolved, s.Resolved())
			require.Equal(t, tc.fixed, s.Fixed())
			require.Equal(t, time.UTC, s.Location())
		})
	}
}

// The bitmasks come from robfig's parser; check a few against robfig
// directly so the hand-off (6 fields, Sunday as 7) is right.
func TestParseMasksMatchRobfig(t *testing.T) {
	t.Parallel()
	p := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	tests := []struct{ ours, robfig string }{
		{"*/5 * * * *", "*/5 * * * *"},
		{"0 9-17 * * MON-FRI", "0 9-17 * * 1-5"},
		{"0 0 * * 7", "0 0 * * 0"},
		{"0 0 * * 5-7", "0 0 * * 5,6,0"},
		{"0 0 * * 1-7/2", "0 0 * * 1,3,5,0"},
		{"10 0 0 1,15 * ?", "10 0 0 1,15 * ?"},
		{"@weekly", "@weekly"},
		{"@hourly", "@hourly"},
	}
	for _, tc := range tests {
		s := mustParse(t, Spec{Expr: tc.ours})
		r, err := p.Parse(tc.robfig)
		require.NoError(t, err)
		rs := r.(*cron.SpecSchedule)
		require.Equal(t, rs.Second&^starBit, s.second, tc.ours)
		require.Equal(t, rs.Minute&^starBit, s.minute, tc.ours)
		require.Equal(t, rs.Hour&^starBit, s.hour, tc.ours)
		require.Equal(t, rs.Dom&^starBit, s.dom, tc.ours)
		require.Equal(t, rs.Month&^starBit, s.month, tc.ours)
		require.Equal(t, rs.Dow&^starBit, s.dow, tc.ours)
		require.Equal(t, rs.Dom&starBit != 0, s.domStar, tc.ours)
		require.Equal(t, rs.Dow&starBit != 0, s.dowStar, tc.ours)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr  string
		key   string
		field int
		name  string
		msg   string // the full Error() text
	}{
		{"0 25 * * *", "", 2, "hour", "cron field 2 (hour): 25 is outside 0-23"},
		{"0 0 25 * * *", "", 3, "hour", "cron field 3 (hour): 25 is outside 0-23"},
		{"60 * * * *", "", 1, "minute", "cron field 1 (minute): 60 is outside 0-59"},
		{"* * * * * *", "", 0, "", ""}, // valid: every second
		{"61 * * * * *", "", 1, "second", "cron field 1 (second): 61 is outside 0-59"},
		{"0 0 0 * *", "", 3, "day of month", "cron field 3 (day of month): 0 is outside 1-31"},
		{"0 0 * 13 *", "", 4, "month", "cron field 4 (month): 13 is outside 1-12"},
		{"0 0 * * 8", "", 5, "day of week", "cron field 5 (day of week): 8 is outside 0-7"},
		{"0 0 * FOO *", "", 4, "month", `cron field 4 (month): "FOO" is not a number or a month name (JAN-DEC)`},
		{"0 0 * * MONDAY", "", 5, "day of week", `cron field 5 (day of week): "MONDAY" is not a number or a day name (SUN-SAT)`},
		{"x * * * *", "", 1, "minute", `cron field 1 (minute): "x" is not a number`},
		{"5-1 * * * *", "", 1, "minute", `cron field 1 (minute): range "5-1" goes backwards; write it as 1-5`},
		{"0 0 * * FRI-MON", "", 5, "day of week", `cron field 5 (day of week): range "FRI-MON" goes backwards; wrap-around ranges are not supported, write e.g. FRI-SAT,SUN or 0,5-6`},
		{"*/0 * * * *", "", 1, "minute", `cron field 1 (minute): step 0 in "*/0" is not allowed; use a step of 1 or more`},
		{"*/90 * * * *", "", 1, "minute", `cron field 1 (minute): step 90 in "*/90" is larger than the field's range 0-59; steps restart every hour, so use a smaller step or @every`},
		{"*/x * * * *", "", 1, "minute", `cron field 1 (minute): step "x" in "*/x" is not a whole number`},
		{"1/2/3 * * * *", "", 1, "minute", `cron field 1 (minute): "1/2/3" has more than one '/'; write start-end/step`},
		{"1-2-3 * * * *", "", 1, "minute", `cron field 1 (minute): "1-2-3" has more than one '-'; write a range as start-end`},
		{"0 0 */40 * *", "", 3, "day of month", `cron field 3 (day of month): step 40 in "*/40" is larger than the field's range 1-31; steps restart every month, so use a smaller step or @every`},
		{"1,,2 * * * *", "", 1, "minute", `cron field 1 (minute): empty element in the list "1,,2"; remove the extra comma`},
		{"? * * * *", "", 1, "minute", `cron field 1 (minute): '?' is only allowed in the day-of-month and day-of-week fields; use '*'`},
		{"0 0 L * *", "", 3, "day of month", `cron field 3 (day of month): "L" uses a Quartz extension (L, W or #) that is not supported; use plain values, ranges, lists and steps`},
		{"0 0 * * 5#3", "", 5, "day of week", `cron field 5 (day of week): "5#3" uses a Quartz extension (L, W or #) that is not supported; use plain values, ranges, lists and steps`},
		{"0 0 15W * *", "", 3, "day of month", `cron field 3 (day of month): "15W" uses a Quartz extension (L, W or #) that is not supported; use plain values, ranges, lists and steps`},
		{"0 0 30 2 *", "", 3, "day of month", "cron field 3 (day of month): day 30 never occurs in FEB, so this expression would never fire; pick a day that exists in those months (or use a day of week)"},
		{"0 0 31 4 *", "", 3, "day of month", "cron field 3 (day of month): day 31 never occurs in APR, so this expression would never fire; pick a day that exists in those months (or use a day of week)"},
		{"0 0 0 30,31 2 *", "", 4, "day of month", "cron field 4 (day of month): days 30,31 never occur in FEB, so this expression would never fire; pick a day that exists in those months (or use a day of week)"},
		{"H(5-1) * * * *", "a/b", 1, "minute", `cron field 1 (minute): H range "H(5-1)" goes backwards; write H(1-5)`},
		{"H/0 * * * *", "a/b", 1, "minute", `cron field 1 (minute): step 0 in "H/0" is not allowed; use a step of 1 or more`},
		{"H(0-99) * * * *", "a/b", 1, "minute", `cron field 1 (minute): 99 is outside 0-59`},
		{"0 0 * * 7/1", "", 5, "day of week", `cron field 5 (day of week): "7/1" starts after the end of the field (6)`},
		{"H(0-10 * * * *", "a/b", 1, "minute", `cron field 1 (minute): malformed H "H(0-10"; write H, H(a-b), H/n or H(a-b)/n`},
		{"H5 * * * *", "a/b", 1, "minute", `cron field 1 (minute): malformed H "H5"; write H, H(a-b), H/n or H(a-b)/n`},
		{"H(3) * * * *", "a/b", 1, "minute", `cron field 1 (minute): malformed H "H(3)"; write H, H(a-b), H/n or H(a-b)/n`},
		{"0 0 H(0-32) * *", "a/b", 3, "day of month", `cron field 3 (day of month): 0 is outside 1-31`},
		{"H * * * *", "", 1, "minute", `cron field 1 (minute): H needs the job's identity to pick a stable value; set the job key (e.g. "app/name")`},
		{"* * * *", "", 0, "expression", "expression: 4 fields given; write 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first"},
		{"0 0 0 1 1 * 2030", "", 0, "expression", "expression: 7 fields given; a year field is not supported (write 5 fields, or 6 with seconds first)"},
		{"", "", 0, "expression", "expression: the expression is empty; write 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or a descriptor such as @daily"},
		{"@fortnightly", "", 0, "expression", `expression: unknown descriptor "@fortnightly"; use one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>`},
		{"@daily 3", "", 0, "expression", "expression: @daily takes no arguments"},
		{"@every", "", 0, "expression", `expression: @every takes exactly one duration, e.g. "@every 90s", "@every 15m" or "@every 1h30m"`},
		{"@every soon", "", 0, "expression", `expression: "soon" is not a duration; write e.g. 90s, 15m or 1h30m`},
		{"@every 500ms", "", 0, "expression", "expression: @every 500ms is shorter than the minimum of 1s"},
		{"@every 1.5s", "", 0, "expression", "expression: @every 1.5s has a fraction of a second; use whole seconds"},
		{"@every 9000h", "", 0, "expression", "expression: @every 9000h is longer than the maximum of 366 days; use a cron expression for longer cycles"},
		{"TZ=Europe/Berlin 0 3 * * *", "", 0, "expression", "expression: a TZ= prefix is not accepted; set the job's time zone in its own setting instead"},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(Spec{Expr: tc.expr, JobKey: tc.key})
			if tc.msg == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.ErrorIs(t, err, ErrInvalid)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, tc.field, ve.Field)
			require.Equal(t, tc.name, ve.Name)
			require.Equal(t, tc.msg, err.Error())
		})
	}
}

func TestValidateZone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		want    string // location name, "" when rejected
		errPart string
	}{
		{"", "UTC", ""},
		{"UTC", "UTC", ""},
		{"Etc/UTC", "Etc/UTC", ""},
		{"America/New_York", "America/New_York", ""},
		{"Asia/Kolkata", "Asia/Kolkata", ""},
		{"Australia/Lord_Howe", "Australia/Lord_Howe", ""},
		{"Local", "", `"Local" would follow the admin server's own zone`},
		{"+08:00", "", "fixed UTC offsets are not accepted"},
		{"-0500", "", "fixed UTC offsets are not accepted"},
		{"UTC+8", "", "fixed UTC offsets are not accepted"},
		{"GMT+8", "", "fixed UTC offsets are not accepted"},
		{"GMT-05:00", "", "fixed UTC offsets are not accepted"},
		{"GMT0", "", "fixed UTC offsets are not accepted"},
		{"Etc/GMT+8", "", "the sign is inverted"},
		{"Etc/GMT-14", "", "the sign is inverted"},
		{"Mars/Olympus_Mons", "", "unknown IANA time zone name"},
		{"america/new_york", "", "unknown IANA time zone name"},
		{" Europe/Berlin", "", "remove the surrounding spaces"},
		{"localtime", "", "unknown IANA time zone name"},
		{"posixrules", "", "unknown IANA time zone name"},
		{"right/Europe/Berlin", "", "unknown IANA time zone name"},
		{"zone1970.tab", "", "unknown IANA time zone name"},
		{"America/New York", "", "unknown IANA time zone name"},
		{"../etc/passwd", "", "not a file path"},
		{"/usr/share/zoneinfo/UTC", "", "not a file path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc, err := ValidateZone(tc.name)
			if tc.want != "" {
				require.NoError(t, err)
				require.Equal(t, tc.want, loc.String())
				return
			}
			require.ErrorIs(t, err, ErrInvalid)
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, "time zone", ve.Name)
			require.Contains(t, err.Error(), tc.errPart)
		})
	}
}

func TestParseRejectsBadZone(t *testing.T) {
	t.Parallel()
	_, err := Parse(Spec{Expr: "0 3 * * *", Zone: "UTC+8"})
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), `time zone: "UTC+8": fixed UTC offsets are not accepted`)
}

func TestHashIsPinned(t *testing.T) {
	t.Parallel()
	// These values are a compatibility contract: if they change, every job
	// using H moves to another minute. Do not update them casually.
	tests := []struct{ expr, key, resolved string }{
		{"H * * * *", "billing/invoice", "27 * * * *"},
		{"H H * * *", "billing/invoice", "27 7 * * *"},
		{"H H(0-5) H * *", "reports/daily", "2 4 19 * *"},
		{"H/15 * * * *", "reports/daily", "2-59/15 * * * *"},
		{"H H/6 * * H", "etl/load", "31 0-23/6 * * 1"},
		{"H H H * * *", "etl/load", "9 31 12 * * *"},
	}
	for _, tc := range tests {
		s := mustParse(t, Spec{Expr: tc.expr, JobKey: tc.key})
		t.Logf("%s %s -> %s", tc.expr, tc.key, s.Resolved())
		require.Equal(t, tc.resolved, s.Resolved(), "%s for %s", tc.expr, tc.key)
	}
}
