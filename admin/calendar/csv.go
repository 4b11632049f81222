package calendar

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/msg"
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

// fail is the error at line (0: the input as a whole) for the message code
// with the arguments kv (msg.New).
func (c *collector) fail(line int, code msg.Code, kv ...any) *ImportError {
	return c.failWith(line, msg.New(code, kv...))
}

// failWith is the error at line for the message reason.
func (c *collector) failWith(line int, reason msg.Msg) *ImportError {
	return &ImportError{Format: c.format, Line: line, Msg: reason.String(), Reason: reason}
}

// kindWord is "a holiday" or "a working day" as a message argument.
func kindWord(k Kind) msg.Msg {
	if k == KindWorkday {
		return msg.New(msg.ImportAWorkday)
	}
	return msg.New(msg.ImportAHoliday)
}

// add records date as kind; a date seen before with the same kind keeps one
// entry with both names ("A / B"), with the other kind it is an error naming
// both lines.
func (c *collector) add(line int, date Date, kind Kind, name string) error {
	if i, seen := c.at[date]; seen {
		prev := &c.entries[i]
		if prev.Kind != kind {
			return c.fail(line, msg.ImportBothKinds, "date", date, "kind", kindWord(kind), "other", kindWord(prev.Kind), "at", c.lines[i])
		}
		switch {
		case name == "" || slices.Contains(strings.Split(prev.Name, " / "), name):
		case prev.Name == "":
			prev.Name = name
		default:
			merged := prev.Name + " / " + name
			if problem := dayNameProblem(merged); !problem.IsZero() {
				return c.fail(line, msg.ImportJoinedName, "date", date, "error", problem)
			}
			prev.Name = merged
		}
		return nil
	}
	if len(c.entries) >= MaxEntries {
		return c.fail(line, msg.ImportTooManyDays, "max", MaxEntries)
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
		return nil, col.fail(0, msg.ImportTooLarge, "bytes", len(data), "max", MaxImportBytes, "mib", MaxImportBytes>>20)
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
				return nil, col.fail(pe.StartLine, msg.Text, "text", pe.Err) // Go's CSV reader's words
			}
			return nil, col.fail(0, msg.Text, "text", err)
		}
		line, _ := r.FieldPos(0)
		if header && strings.EqualFold(strings.TrimSpace(rec[0]), "date") {
			header = false
			continue
		}
		header = false
		if rows++; rows > MaxEvents {
			return nil, col.fail(line, msg.ImportTooManyRows, "max", MaxEvents)
		}
		if len(rec) < 2 || len(rec) > 3 {
			return nil, col.fail(line, msg.ImportFieldCount, "count", len(rec))
		}
		date, err := ParseDate(strings.TrimSpace(rec[0]))
		if err != nil {
			return nil, col.failWith(line, msg.Of(err))
		}
		kind := Kind(strings.ToLower(strings.TrimSpace(rec[1])))
		if kind != KindHoliday && kind != KindWorkday {
			return nil, col.fail(line, msg.ImportKind, "value", strconv.Quote(strings.TrimSpace(rec[1])))
		}
		name := ""
		if len(rec) == 3 {
			name = fromCell(strings.TrimSpace(rec[2]))
		}
		if problem := dayNameProblem(name); !problem.IsZero() {
			return nil, col.fail(line, msg.ImportName, "error", problem)
		}
		if err := col.add(line, date, kind, name); err != nil {
			return nil, err
		}
	}
	return col.result(), nil
}

// A spreadsheet reads a cell that starts with '=', '+', '-' or '@' as a
// formula: a day named "=HYPERLINK(…)" in an exported calendar would run
// in the spreadsheet of whoever opens the file. toCell writes such a name
// behind a "'" (what spreadsheets show as text), and a name that starts
// with "'" too, so that fromCell, which takes one "'" off a cell that
// starts with "'" and one of those characters, reads every name back.
const formulaStarts = "=+-@'"

func toCell(name string) string {
	if name != "" && strings.ContainsRune(formulaStarts, rune(name[0])) {
		return "'" + name
	}
	return name
}

func fromCell(cell string) string {
	if len(cell) >= 2 && cell[0] == '\'' && strings.ContainsRune(formulaStarts, rune(cell[1])) {
		return cell[1:]
	}
	return cell
}

// FormatCSV writes entries as CSV that ParseCSV reads back to the same
// entries: a header "date,kind,name", then one row a day sorted by date.
func FormatCSV(entries []Entry) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"date", "kind", "name"}) // a bytes.Buffer does not fail
	for _, e := range sortedEntries(entries) {
		_ = w.Write([]string{e.Date.String(), string(e.Kind), toCell(e.Name)})
	}
	w.Flush()
	return b.Bytes()
}

// ExportCSV returns the calendar's special days as CSV (FormatCSV).
func (c *Calendar) ExportCSV() []byte { return FormatCSV(c.def.Entries) }
