package calendar

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/msg"
)

// The iCalendar (RFC 5545) subset ParseICS reads.
//
// Each VEVENT is one day or a run of days: DTSTART;VALUE=DATE:YYYYMMDD is the
// first day; DTEND;VALUE=DATE (exclusive, as RFC 5545 says) or DURATION (PnD
// or PnW) the end; with neither, the event is the one day. SUMMARY is the
// name. An event is an extra (make-up) working day when its CATEGORIES
// include WORKDAY, a holiday otherwise (CATEGORIES HOLIDAY says it
// explicitly). An event whose SUMMARY reads like a working day (it contains
// 补班, 上班, "make-up", "makeup", "workday" or "working day") but has
// neither category is refused rather than imported as a holiday: feeds that
// mark make-up days only in the summary would otherwise turn working days
// into days off silently. STATUS:CANCELLED events are ignored; so are other
// components (VTIMEZONE, VTODO, VALARM...) and other properties.
//
// Refused, with the line: recurrence (RRULE, RDATE, EXDATE, RECURRENCE-ID),
// a DTSTART or DTEND with a time or a TZID, a malformed or impossible date,
// DTEND not after DTSTART, an event longer than MaxEventDays, a date that is
// both a holiday and a working day, unbalanced BEGIN/END, more than
// MaxEvents events or MaxImportBytes of input.

// workdayWords mark a SUMMARY that reads like a working day.
var workdayWords = []string{"补班", "上班", "make-up", "makeup", "workday", "working day"}

type icsLine struct {
	line   int
	name   string            // upper case
	params map[string]string // upper-case names; first value, unquoted
	value  string
}

type icsEvent struct {
	begin          int // line of BEGIN:VEVENT
	start, end     *icsLine
	duration       *icsLine
	summary        string
	categories     []string // upper case, trimmed
	categoriesLine int
	recurrence     *icsLine // the first RRULE, RDATE...
	cancelled      bool
}

// ParseICS reads holidays and extra working days from an iCalendar file
// (the subset above). The result is sorted by date. Errors are *ImportError
// naming the line.
func ParseICS(data []byte) ([]Entry, error) {
	col := newCollector("ics")
	if len(data) > MaxImportBytes {
		return nil, col.fail(0, msg.ImportTooLarge, "bytes", len(data), "max", MaxImportBytes, "mib", MaxImportBytes>>20)
	}
	lines, err := unfoldICS(col, bytes.TrimPrefix(data, utf8BOM))
	if err != nil {
		return nil, err
	}
	type open struct {
		name string
		line int
	}
	var stack []open
	var ev *icsEvent
	events, calendars := 0, 0
	for i := range lines {
		l := &lines[i]
		switch l.name {
		case "BEGIN":
			comp := strings.ToUpper(l.value)
			switch {
			case len(stack) == 0 && comp != "VCALENDAR":
				return nil, col.fail(l.line, msg.ImportBeginOutside, "component", l.value)
			case len(stack) > 0 && comp == "VCALENDAR":
				return nil, col.fail(l.line, msg.ImportCalendarInside, "component", stack[len(stack)-1].name, "at", stack[len(stack)-1].line)
			case comp == "VEVENT" && ev != nil:
				return nil, col.fail(l.line, msg.ImportEventInside, "at", ev.begin)
			case comp == "VEVENT":
				if events++; events > MaxEvents {
					return nil, col.fail(l.line, msg.ImportTooManyEvents, "max", MaxEvents)
				}
				ev = &icsEvent{begin: l.line}
			case comp == "VCALENDAR":
				calendars++
			}
			if len(stack) >= 8 {
				return nil, col.fail(l.line, msg.ImportTooDeep)
			}
			stack = append(stack, open{comp, l.line})
			continue
		case "END":
			comp := strings.ToUpper(l.value)
			if len(stack) == 0 || stack[len(stack)-1].name != comp {
				if len(stack) == 0 {
					return nil, col.fail(l.line, msg.ImportEndWithoutBegin, "component", l.value)
				}
				top := stack[len(stack)-1]
				return nil, col.fail(l.line, msg.ImportEndMismatch, "component", l.value, "open", top.name, "at", top.line)
			}
			stack = stack[:len(stack)-1]
			if comp == "VEVENT" {
				if err := addEvent(col, ev); err != nil {
					return nil, err
				}
				ev = nil
			}
			continue
		}
		if len(stack) == 0 {
			return nil, col.fail(l.line, msg.ImportPropertyOutside, "name", l.name)
		}
		if ev == nil || stack[len(stack)-1].name != "VEVENT" {
			continue // a property of the calendar or of another component
		}
		if err := eventProperty(col, ev, l); err != nil {
			return nil, err
		}
	}
	if len(stack) > 0 {
		top := stack[len(stack)-1]
		return nil, col.fail(top.line, msg.ImportNotClosed, "component", top.name)
	}
	if calendars == 0 {
		return nil, col.fail(0, msg.ImportNoCalendar)
	}
	return col.result(), nil
}

// unfoldICS splits data into content lines, joining folded lines (a line
// that starts with a space or a tab continues the one before).
func unfoldICS(col *collector, data []byte) ([]icsLine, error) {
	var out []icsLine
	var cur strings.Builder
	curLine := 0
	flush := func() error {
		if curLine == 0 {
			return nil
		}
		l, err := parseContentLine(col, curLine, cur.String())
		if err != nil {
			return err
		}
		out = append(out, l)
		cur.Reset()
		curLine = 0
		return nil
	}
	n := 0
	for len(data) > 0 {
		n++
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		raw = bytes.TrimSuffix(raw, []byte{'\r'})
		if len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t') && curLine > 0 {
			cur.Write(raw[1:])
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		curLine = n
		cur.Write(raw)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseContentLine splits name *(";" param) ":" value.
func parseContentLine(col *collector, line int, s string) (icsLine, error) {
	l := icsLine{line: line}
	i := strings.IndexAny(s, ";:")
	if i <= 0 {
		return l, col.fail(line, msg.ImportContentLine, "value", strconv.Quote(clip(s)))
	}
	l.name = strings.ToUpper(s[:i])
	for s[i] == ';' {
		s = s[i+1:]
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return l, col.fail(line, msg.ImportParamNoValue, "name", l.name)
		}
		pname := strings.ToUpper(s[:eq])
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return l, col.fail(line, msg.ImportQuoteOpen, "name", l.name, "param", pname)
			}
			val, s = s[1:end+1], s[end+2:]
			i = 0
			if s == "" || (s[0] != ';' && s[0] != ':' && s[0] != ',') {
				return l, col.fail(line, msg.ImportQuoteFollowed, "name", l.name, "param", pname, "value", strconv.Quote(clip(s)))
			}
		} else {
			i = strings.IndexAny(s, ";:,")
			if i < 0 {
				return l, col.fail(line, msg.ImportNoColon, "name", l.name)
			}
			val = s[:i]
		}
		// Further values of a multi-valued parameter (a,b) are not needed.
		for inQuote := false; i < len(s) && (inQuote || s[i] != ';' && s[i] != ':'); i++ {
			if s[i] == '"' {
				inQuote = !inQuote
			}
		}
		if i >= len(s) {
			return l, col.fail(line, msg.ImportNoColon, "name", l.name)
		}
		if l.params == nil {
			l.params = make(map[string]string, 2)
		}
		if _, dup := l.params[pname]; !dup {
			l.params[pname] = val
		}
	}
	l.value = s[i+1:]
	return l, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// eventProperty records one property of a VEVENT.
func eventProperty(col *collector, ev *icsEvent, l *icsLine) error {
	switch l.name {
	case "RRULE", "RDATE", "EXDATE", "RECURRENCE-ID", "EXRULE":
		if ev.recurrence == nil {
			ev.recurrence = l
		}
	case "DTSTART", "DTEND", "DURATION":
		slot := map[string]**icsLine{"DTSTART": &ev.start, "DTEND": &ev.end, "DURATION": &ev.duration}[l.name]
		if *slot != nil {
			return col.fail(l.line, msg.ImportSecondProperty, "name", l.name, "event", ev.begin, "first", (*slot).line)
		}
		*slot = l
	case "SUMMARY":
		ev.summary = unescapeText(l.value)
	case "CATEGORIES":
		for c := range strings.SplitSeq(l.value, ",") {
			ev.categories = append(ev.categories, strings.ToUpper(strings.TrimSpace(unescapeText(c))))
		}
		ev.categoriesLine = l.line
	case "STATUS":
		ev.cancelled = strings.EqualFold(strings.TrimSpace(l.value), "CANCELLED")
	}
	return nil
}

// unescapeText undoes RFC 5545 TEXT escapes; an escaped line break becomes a
// space (names are one line).
func unescapeText(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n', 'N':
			b.WriteByte(' ')
		default: // \\ \; \, and anything else: the character itself
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// icsDate reads the date of a DTSTART or DTEND line.
func icsDate(col *collector, l *icsLine) (Date, error) {
	v := strings.TrimSpace(l.value)
	if tz, ok := l.params["TZID"]; ok {
		return Date{}, col.fail(l.line, msg.ImportDateTZ, "name", l.name, "tz", clip(tz))
	}
	if vt, ok := l.params["VALUE"]; ok && !strings.EqualFold(vt, "DATE") {
		return Date{}, col.fail(l.line, msg.ImportDateValue, "name", l.name, "value", clip(vt))
	}
	if strings.ContainsAny(v, "Tt") {
		return Date{}, col.fail(l.line, msg.ImportDateTime, "name", l.name, "value", clip(v))
	}
	if len(v) != 8 {
		return Date{}, col.fail(l.line, msg.ImportDateLength, "name", l.name, "value", strconv.Quote(clip(v)))
	}
	d, err := ParseDate(v[0:4] + "-" + v[4:6] + "-" + v[6:8])
	if err != nil {
		return Date{}, col.fail(l.line, msg.ImportDateError, "name", l.name, "error", msg.Of(err))
	}
	return d, nil
}

// icsDays reads a DURATION of whole days: PnD or PnW (with an optional +).
func icsDays(col *collector, l *icsLine) (int, error) {
	v := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(l.value)), "+")
	body, ok := strings.CutPrefix(v, "P")
	if ok && len(body) >= 2 && len(body) <= 4 {
		n, isNum := digits(body[:len(body)-1])
		switch {
		case isNum && body[len(body)-1] == 'D':
			return n, nil
		case isNum && body[len(body)-1] == 'W':
			return 7 * n, nil
		}
	}
	return 0, col.fail(l.line, msg.ImportDuration, "value", strconv.Quote(clip(l.value)))
}

// addEvent turns a finished VEVENT into days.
func addEvent(col *collector, ev *icsEvent) error {
	if ev.cancelled {
		return nil
	}
	if r := ev.recurrence; r != nil {
		return col.fail(r.line, msg.ImportRecurrence, "name", r.name, "event", ev.begin)
	}
	if ev.start == nil {
		return col.fail(ev.begin, msg.ImportNoStart)
	}
	start, err := icsDate(col, ev.start)
	if err != nil {
		return err
	}
	days := 1
	switch {
	case ev.end != nil && ev.duration != nil:
		return col.fail(ev.duration.line, msg.ImportEndAndDuration, "at", ev.end.line)
	case ev.end != nil:
		end, err := icsDate(col, ev.end)
		if err != nil {
			return err
		}
		if !end.After(start) {
			return col.fail(ev.end.line, msg.ImportEndNotAfter, "end", end, "start", start, "next", start.AddDays(1))
		}
		days = int(end.days() - start.days())
		if days > MaxEventDays {
			return col.fail(ev.end.line, msg.ImportEventTooLong, "days", days, "max", MaxEventDays)
		}
	case ev.duration != nil:
		if days, err = icsDays(col, ev.duration); err != nil {
			return err
		}
		if days < 1 || days > MaxEventDays {
			return col.fail(ev.duration.line, msg.ImportEventDays, "days", days, "max", MaxEventDays)
		}
	}
	kind, err := eventKind(col, ev)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(ev.summary)
	if problem := dayNameProblem(name); !problem.IsZero() {
		return col.fail(ev.begin, msg.ImportSummaryName, "error", problem)
	}
	for i := range days {
		d := start.AddDays(i)
		if !d.Valid() {
			return col.fail(ev.start.line, msg.ImportPastYear, "max", MaxYear)
		}
		if err := col.add(ev.start.line, d, kind, name); err != nil {
			return err
		}
	}
	return nil
}

func eventKind(col *collector, ev *icsEvent) (Kind, error) {
	var work, hol bool
	for _, c := range ev.categories {
		work = work || c == "WORKDAY"
		hol = hol || c == "HOLIDAY"
	}
	switch {
	case work && hol:
		return "", col.fail(ev.categoriesLine, msg.ImportCategoriesBoth)
	case work:
		return KindWorkday, nil
	case hol:
		return KindHoliday, nil
	}
	low := strings.ToLower(ev.summary)
	for _, w := range workdayWords {
		if strings.Contains(low, w) {
			return "", col.fail(ev.begin, msg.ImportSummaryWorkday, "summary", strconv.Quote(clip(ev.summary)))
		}
	}
	return KindHoliday, nil
}
