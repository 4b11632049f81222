package calendar

import (
	"errors"
	"fmt"

	"github.com/shardjob/shardjob/admin/msg"
)

// ErrInvalid is matched (with errors.Is) by every *ValidationError and
// *ImportError of this package, so callers can answer bad input with a 4xx
// without a type assertion.
var ErrInvalid = errors.New("calendar: invalid input")

// ValidationError says why a Definition or a Policy was rejected.
type ValidationError struct {
	// Field names the part that is wrong: "name", "week", "days", "rule" or
	// "shift".
	Field string
	// Date is the offending date for a "days" error, zero otherwise.
	Date Date
	// Msg says what is wrong and how to fix it: Reason in English.
	Msg string
	// Reason is Msg as a message code with arguments (admin/msg), which the
	// console shows in the reader's language.
	Reason msg.Msg
}

// Error renders "calendar days: 2026-02-14 is both a holiday ... and a working day ...".
func (e *ValidationError) Error() string { return "calendar " + e.Field + ": " + e.Msg }

// Message is the whole error (Error) as a message code.
func (e *ValidationError) Message() msg.Msg {
	return msg.New(msg.CalError, "field", e.Field, "error", reasonOr(e.Reason, e.Msg))
}

// Is reports whether target is ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// invalid is the error about field (and date), for the message code with
// the arguments kv (msg.New).
func invalid(field string, date Date, code msg.Code, kv ...any) *ValidationError {
	reason := msg.New(code, kv...)
	return &ValidationError{Field: field, Date: date, Msg: reason.String(), Reason: reason}
}

// ImportError says why an .ics or CSV input was refused, and where.
type ImportError struct {
	// Format is "ics" or "csv".
	Format string
	// Line is the 1-based line of the input the error is about (for an
	// .ics content line folded over several lines, the first), or 0 for the
	// input as a whole.
	Line int
	// Msg says what is wrong and how to fix it: Reason in English.
	Msg string
	// Reason is Msg as a message code with arguments (admin/msg), which the
	// console shows in the reader's language.
	Reason msg.Msg
}

// Error renders "ics line 12: RRULE (a recurrence rule) is not supported ...".
func (e *ImportError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", e.Format, e.Line, e.Msg)
	}
	return e.Format + ": " + e.Msg
}

// Message is the whole error (Error) as a message code.
func (e *ImportError) Message() msg.Msg {
	reason := reasonOr(e.Reason, e.Msg)
	if e.Line > 0 {
		return msg.New(msg.ImportLine, "format", e.Format, "line", e.Line, "error", reason)
	}
	return msg.New(msg.ImportWhole, "format", e.Format, "error", reason)
}

// Is reports whether target is ErrInvalid.
func (e *ImportError) Is(target error) bool { return target == ErrInvalid }

// reasonOr is reason, or the English text as it is for an error made by
// hand with its text only.
func reasonOr(reason msg.Msg, text string) msg.Msg {
	if reason.IsZero() {
		return msg.New(msg.Text, "text", text)
	}
	return reason
}
