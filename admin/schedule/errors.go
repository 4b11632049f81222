package schedule

import (
	"errors"
	"fmt"
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
	// "expression", "time zone", "job key", "misfire policy", "misfire
	// threshold", "max catch-up", "overlap policy", "calendar rule" or
	// "calendar shift".
	Name string
	// Value is the offending text (a field, a list element, a zone name...).
	Value string
	// Msg says what is wrong and how to fix it, without the field prefix.
	Msg string

	// kind is a second sentinel the error matches besides ErrInvalid
	// (ErrNeedsCalendar), or nil.
	kind error
}

// Error renders "cron field 2 (hour): 25 is outside 0-23" for a field error
// and "<name>: <message>" otherwise.
func (e *ValidationError) Error() string {
	if e.Field > 0 {
		return fmt.Sprintf("cron field %d (%s): %s", e.Field, e.Name, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Name, e.Msg)
}

// Is reports whether target is ErrInvalid, or the error's own kind
// (ErrNeedsCalendar).
func (e *ValidationError) Is(target error) bool {
	return target == ErrInvalid || (e.kind != nil && target == e.kind)
}

func exprError(value, format string, args ...any) *ValidationError {
	return &ValidationError{Name: "expression", Value: value, Msg: fmt.Sprintf(format, args...)}
}
