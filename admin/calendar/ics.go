package calendar

import (
	"bytes"
	"strings"
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
		return nil, col.fail(0, "the input is %d bytes, more than the limit of %d (%d MiB)", len(data), MaxImportBytes, MaxImportBytes>>20)
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
				return nil, col.fail(l.line, "BEGIN:%s outside a VCALENDAR: an .ics file starts with BEGIN:VCALENDAR", l.value)
			case len(stack) > 0 && comp == "VCALENDAR":
				return nil, col.fail(l.line, "BEGIN:VCALENDAR inside %s (line %d)", stack[len(stack)-1].name, stack[len(stack)-1].line)
			case comp == "VEVENT" && ev != nil:
				return nil, col.fail(l.line, "BEGIN:VEVENT inside the VEVENT of line %d", ev.begin)
			case comp == "VEVENT":
				if events++; events > MaxEvents {
					return nil, col.fail(l.line, "more than %d events: split the calendar", MaxEvents)
				}
				ev = &icsEvent{begin: l.line}
			case comp == "VCALENDAR":
				calendars++
			}
			if len(stack) >= 8 {
				return nil, col.fail(l.line, "components nested more than 8 deep")
			}
			stack = append(stack, open{comp, l.line})
			continue
		case "END":
			comp := strings.ToUpper(l.value)
			if len(stack) == 0 || stack[len(stack)-1].name != comp {
				if len(stack) == 0 {
					return nil, col.fail(l.line, "END:%s without a BEGIN", l.value)
				}
				top := stack[len(stack)-1]
				return nil, col.fail(l.line, "END:%s, but the open component is %s (line %d)", l.value, top.name, top.line)
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
			return nil, col.fail(l.line, "%s outside a VCALENDAR: an .ics file starts with BEGIN:VCALENDAR", l.name)
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
		return nil, col.fail(top.line, "BEGIN:%s is never closed (END:%s is missing)", top.name, top.name)
	}
	if calendars == 0 {
		return nil, col.fail(0, "no BEGIN:VCALENDAR: not an iCalendar file")
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
		return l, col.fail(line, "%q is not a content line (NAME:value)", clip(s))
	}
	l.name = strings.ToUpper(s[:i])
	for s[i] == ';' {
		s = s[i+1:]
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return l, col.fail(line, "%s: a parameter without a value (want NAME=value)", l.name)
		}
		pname := strings.ToUpper(s[:eq])
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return l, col.fail(line, "%s: the quoted value of %s is not closed", l.name, pname)
			}
			val, s = s[1:end+1], s[end+2:]
			i = 0
			if s == "" || (s[0] != ';' && s[0] != ':' && s[0] != ',') {
				return l, col.fail(line, "%s: the quoted value of %s is followed by %q", l.name, pname, clip(s))
			}
		} else {
			i = strings.IndexAny(s, ";:,")
			if i < 0 {
				return l, col.fail(line, "%s: no ':' before the value", l.name)
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
			return l, col.fail(line, "%s: no ':' before the value", l.name)
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
			return col.fail(l.line, "a second %s in the VEVENT of line %d (the first is at line %d)", l.name, ev.begin, (*slot).line)
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
		return Date{}, col.fail(l.line, "%s with a time zone (TZID=%s): holidays are whole days, write %s;VALUE=DATE:YYYYMMDD", l.name, clip(tz), l.name)
	}
	if vt, ok := l.params["VALUE"]; ok && !strings.EqualFold(vt, "DATE") {
		return Date{}, col.fail(l.line, "%s;VALUE=%s: holidays are whole days, write %s;VALUE=DATE:YYYYMMDD", l.name, clip(vt), l.name)
	}
	if strings.ContainsAny(v, "Tt") {
		return Date{}, col.fail(l.line, "%s with a time (%s): holidays are whole days, write %s;VALUE=DATE:YYYYMMDD", l.name, clip(v), l.name)
	}
	if len(v) != 8 {
		return Date{}, col.fail(l.line, "%s %q: want a date YYYYMMDD", l.name, clip(v))
	}
	d, err := ParseDate(v[0:4] + "-" + v[4:6] + "-" + v[6:8])
	if err != nil {
		return Date{}, col.fail(l.line, "%s: %v", l.name, err)
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
	return 0, col.fail(l.line, "DURATION %q: want whole days or weeks (P3D, P1W); or use DTEND;VALUE=DATE", clip(l.value))
}

// addEvent turns a finished VEVENT into days.
func addEvent(col *collector, ev *icsEvent) error {
	if ev.cancelled {
		return nil
	}
	if r := ev.recurrence; r != nil {
		return col.fail(r.line, "%s (recurrence) is not supported: list every holiday as its own event with its own dates (the VEVENT of line %d)", r.name, ev.begin)
	}
	if ev.start == nil {
		return col.fail(ev.begin, "a VEVENT without DTSTART: add DTSTART;VALUE=DATE:YYYYMMDD")
	}
	start, err := icsDate(col, ev.start)
	if err != nil {
		return err
	}
	days := 1
	switch {
	case ev.end != nil && ev.duration != nil:
		return col.fail(ev.duration.line, "both DTEND (line %d) and DURATION: keep one", ev.end.line)
	case ev.end != nil:
		end, err := icsDate(col, ev.end)
		if err != nil {
			return err
		}
		if !end.After(start) {
			return col.fail(ev.end.line, "DTEND %s is not after DTSTART %s (DTEND is exclusive: a one-day event on %s ends on %s)", end, start, start, start.AddDays(1))
		}
		days = int(end.days() - start.days())
		if days > MaxEventDays {
			return col.fail(ev.end.line, "an event of %d days, longer than %d", days, MaxEventDays)
		}
	case ev.duration != nil:
		if days, err = icsDays(col, ev.duration); err != nil {
			return err
		}
		if days < 1 || days > MaxEventDays {
			return col.fail(ev.duration.line, "an event of %d days: want 1 to %d", days, MaxEventDays)
		}
	}
	kind, err := eventKind(col, ev)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(ev.summary)
	if msg := checkDayName(name); msg != "" {
		return col.fail(ev.begin, "the SUMMARY of this VEVENT %s", msg)
	}
	for i := range days {
		d := start.AddDays(i)
		if !d.Valid() {
			return col.fail(ev.start.line, "the event runs past year %d", MaxYear)
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
		return "", col.fail(ev.categoriesLine, "CATEGORIES has both WORKDAY and HOLIDAY: keep one")
	case work:
		return KindWorkday, nil
	case hol:
		return KindHoliday, nil
	}
	low := strings.ToLower(ev.summary)
	for _, w := range workdayWords {
		if strings.Contains(low, w) {
			return "", col.fail(ev.begin, "the SUMMARY %q reads like a working day, but CATEGORIES has neither WORKDAY nor HOLIDAY: add CATEGORIES:WORKDAY for a make-up working day (or CATEGORIES:HOLIDAY for a day off)", clip(ev.summary))
		}
	}
	return KindHoliday, nil
}
