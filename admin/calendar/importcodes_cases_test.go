package calendar

import (
	"fmt"
	"strings"
)

// importCase is a calendar file with one thing wrong.
type importCase struct {
	name, format string
	in           []byte
}

// importCases meet every refusal of ParseCSV and ParseICS.
func importCases() []importCase {
	ev := func(props ...string) []byte {
		return ics(append(append([]string{"BEGIN:VEVENT"}, props...), "END:VEVENT")...)
	}
	var rows, events, long strings.Builder
	rows.WriteString("date,kind\n")
	var evLines, longLines []string
	start := d(2000, 1, 1)
	for i := range MaxEvents + 1 {
		v := start.AddDays(i)
		fmt.Fprintf(&rows, "%s,holiday\n", v)
		evLines = append(evLines, "BEGIN:VEVENT", fmt.Sprintf("DTSTART;VALUE=DATE:%04d%02d%02d", v.Year, v.Month, v.Day), "END:VEVENT")
	}
	for i := range 30 {
		v := start.AddDays(i * 366)
		longLines = append(longLines, "BEGIN:VEVENT", fmt.Sprintf("DTSTART;VALUE=DATE:%04d%02d%02d", v.Year, v.Month, v.Day), "DURATION:P366D", "END:VEVENT")
	}
	events.Write(ics(evLines...))
	long.Write(ics(longLines...))
	csvCases := []importCase{
		{"csv both kinds", "csv", []byte("2026-02-14,workday\n2026-02-14,holiday\n")},
		{"csv joined name", "csv", []byte("2026-01-01,holiday," + strings.Repeat("x", 150) + "\n2026-01-01,holiday," + strings.Repeat("y", 100) + "\n")},
		{"csv too large", "csv", make([]byte, MaxImportBytes+1)},
		{"csv syntax", "csv", []byte("2026-02-14,holiday,\"open\n")},
		{"csv too many rows", "csv", []byte(rows.String())},
		{"csv field count", "csv", []byte("2026-02-14\n")},
		{"csv bad date", "csv", []byte("date,kind\n2026-02-30,holiday\n")},
		{"csv date format", "csv", []byte("20260214,holiday\n")},
		{"csv kind", "csv", []byte("2026-02-14, Off \n")},
		{"csv name", "csv", []byte("2026-02-14,holiday,\"a\nb\"\n")},
	}
	icsCases := []importCase{
		{"ics too large", "ics", make([]byte, MaxImportBytes+1)},
		{"ics begin outside", "ics", []byte("BEGIN:VEVENT\r\nEND:VEVENT\r\n")},
		{"ics calendar inside", "ics", ics("BEGIN:VCALENDAR", "END:VCALENDAR")},
		{"ics event inside", "ics", ev("BEGIN:VEVENT")},
		{"ics too many events", "ics", []byte(events.String())},
		{"ics too many days", "ics", []byte(long.String())},
		{"ics too deep", "ics", ics("BEGIN:A", "BEGIN:B", "BEGIN:C", "BEGIN:D", "BEGIN:E", "BEGIN:F", "BEGIN:G", "BEGIN:H")},
		{"ics end without begin", "ics", []byte("END:VCALENDAR\r\n")},
		{"ics end mismatch", "ics", []byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nEND:VCALENDAR\r\n")},
		{"ics property outside", "ics", []byte("VERSION:2.0\r\n")},
		{"ics not closed", "ics", []byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\n")},
		{"ics no calendar", "ics", nil},
		{"ics content line", "ics", []byte("2026-01-01,holiday\n")},
		{"ics param no value", "ics", ev("DTSTART;VALUE:20260101")},
		{"ics quote open", "ics", ev(`DTSTART;X="a:20260101`)},
		{"ics quote followed", "ics", ev(`DTSTART;X="a"b:20260101`)},
		{"ics no colon", "ics", ev("DTSTART;X=a")},
		{"ics no colon after values", "ics", ev(`DTSTART;X=a,"b`)},
		{"ics second property", "ics", ev("DTSTART;VALUE=DATE:20260101", "DTSTART;VALUE=DATE:20260102")},
		{"ics date tz", "ics", ev("DTSTART;TZID=Asia/Shanghai:20260101T090000")},
		{"ics date value", "ics", ev("DTSTART;VALUE=DATE-TIME:20260101")},
		{"ics date time", "ics", ev("DTSTART:20260101T090000Z")},
		{"ics date length", "ics", ev("DTSTART;VALUE=DATE:2026011")},
		{"ics date error", "ics", ev("DTSTART;VALUE=DATE:20260230")},
		{"ics date year", "ics", ev("DTSTART;VALUE=DATE:00000101")},
		{"ics duration", "ics", ev("DTSTART;VALUE=DATE:20260101", "DURATION:PT12H")},
		{"ics recurrence", "ics", ev("DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=YEARLY")},
		{"ics no start", "ics", ev("SUMMARY:x")},
		{"ics end and duration", "ics", ev("DTSTART;VALUE=DATE:20260101", "DTEND;VALUE=DATE:20260102", "DURATION:P1D")},
		{"ics end not after", "ics", ev("DTSTART;VALUE=DATE:20260105", "DTEND;VALUE=DATE:20260105")},
		{"ics event too long", "ics", ev("DTSTART;VALUE=DATE:20260101", "DTEND;VALUE=DATE:20270201")},
		{"ics event days", "ics", ev("DTSTART;VALUE=DATE:20260101", "DURATION:P0D")},
		{"ics summary name", "ics", ev("DTSTART;VALUE=DATE:20260101", "SUMMARY:"+strings.Repeat("x", 201))},
		{"ics past year", "ics", ev("DTSTART;VALUE=DATE:99991231", "DURATION:P2D")},
		{"ics categories both", "ics", ev("DTSTART;VALUE=DATE:20260101", "CATEGORIES:WORKDAY,HOLIDAY")},
		{"ics summary workday", "ics", ev("DTSTART;VALUE=DATE:20260214", "SUMMARY:春节补班")},
		{"ics both kinds", "ics", ics("BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260213", "DTEND;VALUE=DATE:20260216", "END:VEVENT",
			"BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260214", "CATEGORIES:WORKDAY", "END:VEVENT")},
		{"ics joined name", "ics", ics("BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260101", "SUMMARY:"+strings.Repeat("x", 150), "END:VEVENT",
			"BEGIN:VEVENT", "DTSTART;VALUE=DATE:20260101", "SUMMARY:"+strings.Repeat("y", 100), "END:VEVENT")},
	}
	return append(csvCases, icsCases...)
}

// parseImport reads c's input in its format.
func parseImport(c importCase) error {
	var err error
	if c.format == "csv" {
		_, err = ParseCSV(c.in)
	} else {
		_, err = ParseICS(c.in)
	}
	return err
}
