package calendar

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardjob/shardjob/admin/msg"
)

// checkImported is what every successful import must satisfy: a valid
// calendar, and a CSV export that reads back to the same days and version.
func checkImported(t *testing.T, entries []Entry, err error) {
	t.Helper()
	if err != nil {
		var ie *ImportError
		if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v (%T) is not an *ImportError matching ErrInvalid", err, err)
		}
		if ie.Msg == "" {
			t.Fatal("empty error message")
		}
		// every refusal is a code of the catalog rendering its English
		m := msg.Of(err)
		if err := catalogCodes(m, nil); err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if m.String() != err.Error() {
			t.Fatalf("the code renders %q, the error says %q", m.String(), err.Error())
		}
		return
	}
	c, err := New(Definition{Name: "fuzz", Entries: entries})
	if err != nil {
		t.Fatalf("imported days are not a valid calendar: %v", err)
	}
	again, err := ParseCSV(c.ExportCSV())
	if err != nil {
		t.Fatalf("the export does not read back: %v\n%s", err, c.ExportCSV())
	}
	if len(again) != len(entries) {
		t.Fatalf("read back %d days, want %d", len(again), len(entries))
	}
	for i := range entries {
		if again[i] != entries[i] {
			t.Fatalf("day %d read back as %+v, want %+v", i, again[i], entries[i])
		}
	}
	if v := (Definition{Entries: again}).Version(); v != c.Version() {
		t.Fatalf("version %s after the round trip, want %s", v, c.Version())
	}
}

func addFixture(f *testing.F, name string) {
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
}

func FuzzParseCSV(f *testing.F) {
	addFixture(f, "cn-2026.csv")
	for _, seed := range []string{
		"", "date,kind,name\n", "2026-02-14,workday\n2026-02-14,holiday\n",
		"2026-01-01,HOLIDAY,\"a, \"\"b\"\"\"\n2026-01-01,holiday,c\n", "\ufeff#x\r\n2026-12-31 , workday , y \r\n",
		"2026-02-30,holiday\n", "2026-01-01,holiday,\"a\nb\"\n", "a,b,c,d\n", "\"open\n",
		"2026-01-01,holiday,=1+1\n2026-01-02,holiday,'=x\n2026-01-03,holiday,''@y\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseCSV(data)
		checkImported(t, entries, err)
	})
}

func FuzzParseICS(f *testing.F) {
	addFixture(f, "cn-2026.ics")
	for _, seed := range []string{
		"", "BEGIN:VCALENDAR\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\nDTEND;VALUE=DATE:20260104\r\nSUMMARY:New\r\n  Year\\, \\nday\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260214\nCATEGORIES:x,WORKDAY\nSUMMARY:补班\nEND:VEVENT\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20260101\nRRULE:FREQ=YEARLY\nEND:VEVENT\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;X=\"a;b:c\",d;VALUE=DATE:20260101\nDURATION:P2W\nEND:VEVENT\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;TZID=Asia/Shanghai:20260101T090000\nEND:VEVENT\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VEVENT\nBEGIN:VALARM\nEND:VEVENT\nEND:VCALENDAR\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseICS(data)
		checkImported(t, entries, err)
	})
}

func FuzzParseBusinessDay(f *testing.F) {
	for _, seed := range []string{"BD3", "BDL", "BD-2", "bd31", "BD0", "BD-", "BD+1", "BD007", "BDLL", ""} {
		f.Add(seed)
	}
	c := mustNew(f, Definition{Name: "f", Entries: []Entry{{Date: d(2026, 2, 2), Kind: KindHoliday}}})
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBusinessDay(s)
		if err != nil {
			if n != 0 {
				t.Fatalf("%q: error %v with n = %d", s, err, n)
			}
			return
		}
		if n == 0 || n > MaxBusinessDay || n < -MaxBusinessDay {
			t.Fatalf("%q parsed to %d", s, n)
		}
		if back, err := ParseBusinessDay(n.String()); err != nil || back != n {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, n, n.String(), back, err)
		}
		if date, ok := c.NthWorkday(2026, 2, n); ok && !c.IsWorkday(date) {
			t.Fatalf("%s of February 2026 is %s, not a working day", n, date)
		}
	})
}
