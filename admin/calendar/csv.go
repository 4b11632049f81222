package calendar

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Limits of an import (ParseICS, ParseCSV).
const (
	// MaxImportBytes is the largest input accepted: 2 MiB, about ten times a
	// calendar of MaxEntries days.
	MaxImportBytes = 2 << 20
	// MaxEvents is the most VEVENTs of an .ics, or rows of a CSV.
	MaxEvents = 10000
	// MaxEventDays is the longest .ics event, in days (DTEND - DTSTART).
	MaxEventDays = 366
)

// collector gathers imported days: one entry a date, holidays and working
// days never on the same date, same-kind repeats merged.
type collector struct {
	format  string
	entries []Entry
	at      map[Date]int // index in entries
	lines   []int        // line of entries[i]
}

func newCollector(format string) *collector {
	return &collector{format: format, at: make(map[Date]int)}
}

func (c *collector) fail(line int, format string, args ...any) *ImportError {
	return &ImportError{Format: c.format, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func kindWord(k Kind) string {
	if k == KindWorkday {
		return "a working day"
	}
	return "a holiday"
}

// add records date as kind; a date seen before with the same kind keeps one
// entry with both names ("A / B"), with the other kind it is an error naming
// both lines.
func (c *collector) add(line int, date Date, kind Kind, name string) error {
	if i, seen := c.at[date]; seen {
		prev := &c.entries[i]
		if prev.Kind != kind {
			return c.fail(line, "%s is %s here but %s at line %d: a date cannot be both a holiday and a working day",
				date, kindWord(kind), kindWord(prev.Kind), c.lines[i])
		}
		switch {
		case name == "" || slices.Contains(strings.Split(prev.Name, " / "), name):
		case prev.Name == "":
			prev.Name = name
		default:
			merged := prev.Name + " / " + name
			if msg := checkDayName(merged); msg != "" {
				return c.fail(line, "%s: the names of the events on this date, joined, %s", date, msg)
			}
			prev.Name = merged
		}
		return nil
	}
	if len(c.entries) >= MaxEntries {
		return c.fail(line, "more than %d special days: split the calendar", MaxEntries)
	}
	c.at[date] = len(c.entries)
	c.entries = append(c.entries, Entry{Date: date, Kind: kind, Name: name})
	c.lines = append(c.lines, line)
	return nil
}

func (c *collector) result() []Entry { return sortedEntries(c.entries) }

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseCSV reads special days from CSV: one row a day, "date,kind[,name]",
// with date YYYY-MM-DD, kind holiday or workday (any letter case) and an
// optional name; fields are trimmed and may be quoted. A first row whose
// first field is "date" is a header and skipped; so are empty lines and
// lines starting with '#'. A date listed twice with one kind counts once
// (names joined with " / "); with both kinds it is an error. The result is
// sorted by date. Errors are *ImportError naming the line.
//
// The CSV holds days only: the calendar's name and base week are set
// separately (Definition).
func ParseCSV(data []byte) ([]Entry, error) {
	col := newCollector("csv")
	if len(data) > MaxImportBytes {
		return nil, col.fail(0, "the input is %d bytes, more than the limit of %d (%d MiB)", len(data), MaxImportBytes, MaxImportBytes>>20)
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, utf8BOM)))
	r.FieldsPerRecord = -1
	r.Comment = '#'
	header, rows := true, 0
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, col.fail(pe.StartLine, "%v", pe.Err)
			}
			return nil, col.fail(0, "%v", err)
		}
		line, _ := r.FieldPos(0)
		if header && strings.EqualFold(strings.TrimSpace(rec[0]), "date") {
			header = false
			continue
		}
		header = false
		if rows++; rows > MaxEvents {
			return nil, col.fail(line, "more than %d rows: split the calendar", MaxEvents)
		}
		if len(rec) < 2 || len(rec) > 3 {
			return nil, col.fail(line, "%d fields: want date,kind or date,kind,name (for example 2026-02-14,workday,Spring Festival make-up day)", len(rec))
		}
		date, err := ParseDate(strings.TrimSpace(rec[0]))
		if err != nil {
			return nil, col.fail(line, "%v", err)
		}
		kind := Kind(strings.ToLower(strings.TrimSpace(rec[1])))
		if kind != KindHoliday && kind != KindWorkday {
			return nil, col.fail(line, "kind %q: want %s or %s", strings.TrimSpace(rec[1]), KindHoliday, KindWorkday)
		}
		name := ""
		if len(rec) == 3 {
			name = strings.TrimSpace(rec[2])
		}
		if msg := checkDayName(name); msg != "" {
			return nil, col.fail(line, "the name %s", msg)
		}
		if err := col.add(line, date, kind, name); err != nil {
			return nil, err
		}
	}
	return col.result(), nil
}

// FormatCSV writes entries as CSV that ParseCSV reads back to the same
// entries: a header "date,kind,name", then one row a day sorted by date.
func FormatCSV(entries []Entry) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"date", "kind", "name"}) // a bytes.Buffer does not fail
	for _, e := range sortedEntries(entries) {
		_ = w.Write([]string{e.Date.String(), string(e.Kind), e.Name})
	}
	w.Flush()
	return b.Bytes()
}

// ExportCSV returns the calendar's special days as CSV (FormatCSV).
func (c *Calendar) ExportCSV() []byte { return FormatCSV(c.def.Entries) }
