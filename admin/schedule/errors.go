package schedule

import (
	"errors"

	"github.com/shardjob/shardjob/admin/msg"
)

// ErrInvalid is matched (with errors.Is) by every *ValidationError returned by
// this package, so callers can tell bad user input from other failures without
// a type assertion.
var ErrInvalid = errors.New("schedule: invalid input")

// ErrNeedsCalendar is matched (besides ErrInvalid) by the error WithCalendar
// returns for an expression with a business day (BD3) and no calendar.
var ErrNeedsCalendar = errors.New("schedule: a business day needs a calendar")

// ErrNoFiring is matched by the error a CalendarSchedule returns when no
// firing is left within its look-ahead (about five years): a calendar with
// no working day for years, a business day no month of the window has.
var ErrNoFiring = errors.New("schedule: no firing within the look-ahead")

// ValidationError describes why a schedule, time zone or policy was rejected.
// Its message names the offending part and, where possible, how to fix it.
type ValidationError struct {
	// Field is the 1-based position of the cron field in the expression as
	// written (in a 6-field expression the seconds are field 1), or 0 when the
	// error is not about a single cron field.
	Field int
	// Name names the part that is wrong: "second", "minute", "hour",
	// "day of month", "month", "day of week" for a cron field, otherwise
	// "expression", "time zone", "misfire policy", "misfire threshold",
	// "max catch-up", "overlap policy", "calendar rule", "calendar shift",
	// "start deadline" or "finish deadline".
	Name string
	// Value is the offending text (a field, a list element, a zone name...).
	Value string
	// Msg says what is wrong and how to fix it, without the field prefix:
	// Reason in English.
	Msg string
	// Reason is Msg as a message code with arguments (admin/msg), which the
	// console shows in the reader's language.
	Reason msg.Msg

	// kind is a second sentinel the error matches besides ErrInvalid
	// (ErrNeedsCalendar), or nil.
	kind error
}

// Error renders "cron field 2 (hour): 25 is outside 0-23" for a field error
// and "<name>: <message>" otherwise.
func (e *ValidationError) Error() string { return e.Message().String() }

// Message is the whole error (Error) as a message code: the field or the
// part named, then the reason.
func (e *ValidationError) Message() msg.Msg {
	reason := e.Reason
	if reason.IsZero() { // made by hand, with Msg only
		reason = msg.New(msg.Text, "text", e.Msg)
	}
	if e.Field > 0 {
		return msg.New(msg.CronFieldError, "field", e.Field, "name", partName(e.Name), "error", reason)
	}
	return msg.New(msg.PartError, "name", partName(e.Name), "error", reason)
}

// partCodes are the message codes of the names of ValidationError.Name.
var partCodes = map[string]msg.Code{
	"second": msg.PartSecond, "minute": msg.PartMinute, "hour": msg.PartHour,
	"day of month": msg.PartDayOfMonth, "month": msg.PartMonth, "day of week": msg.PartDayOfWeek,
	"expression": msg.PartExpression, "time zone": msg.PartTimeZone, "time zones": msg.PartTimeZones,
	"misfire policy": msg.PartMisfirePolicy, "misfire threshold": msg.PartMisfireThreshold,
	"max catch-up": msg.PartMaxCatchUp, "overlap policy": msg.PartOverlapPolicy,
	"calendar rule": msg.PartCalendarRule, "calendar shift": msg.PartCalendarShift,
	"start deadline": msg.PartStartDeadline, "finish deadline": msg.PartFinishDeadline,
	"jitter window": msg.PartJitterWindow,
}

// partName is name as a message argument: its code, or the text itself
// for a name without one.
func partName(name string) any {
	if c, ok := partCodes[name]; ok {
		return msg.New(c)
	}
	return name
}

// Is reports whether target is ErrInvalid, or the error's own kind
// (ErrNeedsCalendar).
func (e *ValidationError) Is(target error) bool {
	return target == ErrInvalid || (e.kind != nil && target == e.kind)
}

// invalid is the error about part name (cron field pos when pos > 0) and
// value, for reason; Msg is reason in English. Errors are made only on the
// error path: nothing here costs a valid schedule anything.
func invalid(pos int, name, value string, reason msg.Msg) *ValidationError {
	return &ValidationError{Field: pos, Name: name, Value: value, Msg: reason.String(), Reason: reason}
}

// exprError is an error about the expression as a whole: code with the
// arguments kv (msg.New).
func exprError(value string, code msg.Code, kv ...any) *ValidationError {
	return invalid(0, "expression", value, msg.New(code, kv...))
}
