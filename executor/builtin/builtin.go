package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shardjob/shardjob/sdk"
)

// The names the built-in handlers are registered under.
const (
	NameHTTP  = "http"
	NameSQL   = "sql"
	NameShell = "shell"
)

// MaxParamsBytes bounds the params of a built-in handler (the admin allows
// 64 KiB for any job; the built-ins need far less).
const MaxParamsBytes = 32 << 10

// ErrRetryable marks a failure that may succeed when tried again (a 5xx or
// 429 answer, a connection reset, a deadlock); test with errors.Is or
// IsRetryable.
var ErrRetryable = errors.New("retryable failure")

// ErrRefused is wrapped by every refusal of the executor's security policy:
// an address outside the HTTP allow-list, the shell handler disabled, a
// command not on the shell allow-list, an unknown data source.
var ErrRefused = errors.New("refused by the executor's policy")

// RetryableError wraps a failure the handler classified as retryable. Its
// text ends in "(retryable)" so that the slot's error in the console says so.
type RetryableError struct{ Err error }

func (e *RetryableError) Error() string { return e.Err.Error() + " (retryable)" }

// Unwrap returns the wrapped failure.
func (e *RetryableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRetryable) true.
func (e *RetryableError) Is(target error) bool { return target == ErrRetryable }

// IsRetryable reports whether err is, or wraps, a RetryableError.
func IsRetryable(err error) bool { return errors.Is(err, ErrRetryable) }

func retryable(format string, args ...any) error {
	return &RetryableError{Err: fmt.Errorf(format, args...)}
}

// refused returns an error wrapping ErrRefused with the given explanation.
func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// ParamsError says what is wrong with a built-in handler's params; Field is
// the JSON field at fault ("" for the document as a whole).
type ParamsError struct {
	Handler string
	Field   string
	Problem string
}

func (e *ParamsError) Error() string {
	if e.Field == "" {
		return e.Handler + " handler params: " + e.Problem
	}
	return e.Handler + " handler params: " + e.Field + ": " + e.Problem
}

func paramsErr(handler, field, format string, args ...any) *ParamsError {
	return &ParamsError{Handler: handler, Field: field, Problem: fmt.Sprintf(format, args...)}
}

// ValidateParams checks the params of a job whose handler is one of the
// built-ins (http, sql, shell, dedup-archive) the way the handler will parse them, and
// returns a *ParamsError saying what is wrong. It returns nil for any other
// handler name, whose params only its own code understands. It is pure: no
// I/O, no DNS, no look at an executor's configuration (whether a host is
// allow-listed or a data source exists is decided by the executor that
// runs the job, which may be configured differently from another one).
func ValidateParams(handler, params string) error {
	var err error
	switch handler {
	case NameHTTP:
		_, err = parseHTTPParams(params)
	case NameSQL:
		err = validateSQLParams(params)
	case NameShell:
		_, err = parseShellParams(params)
	case NameDedupArchive:
		_, err = parseDedupArchiveParams(params)
	}
	return err
}

// decodeParams decodes one JSON object into v, refusing unknown fields and
// trailing data.
func decodeParams(handler, params string, v any) error {
	if strings.TrimSpace(params) == "" {
		return paramsErr(handler, "", "required: a JSON object, see docs/builtin-handlers.md")
	}
	if len(params) > MaxParamsBytes {
		return paramsErr(handler, "", "%d bytes, at most %d", len(params), MaxParamsBytes)
	}
	dec := json.NewDecoder(strings.NewReader(params))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return paramsErr(handler, te.Field, "want a JSON %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)
		}
		return paramsErr(handler, "", "not a valid JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return paramsErr(handler, "", "unexpected data after the JSON object")
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	case "bool":
		return "boolean"
	default:
		return "number"
	}
}

// timeoutParam turns a timeout_ms param into a duration: def when 0, an
// error when negative or above maxD.
func timeoutParam(handler string, ms int64, def, maxD time.Duration) (time.Duration, error) {
	if ms == 0 {
		return def, nil
	}
	if ms < 0 || time.Duration(ms) > maxD/time.Millisecond {
		return 0, paramsErr(handler, "timeout_ms", "%d: want 1 to %d milliseconds (0 or absent: %s)", ms, maxD.Milliseconds(), def)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// expandSlot replaces {slot}, {total}, {run_id}, {job_id} and {attempt} in s
// with the task's values. It reports whether any placeholder was present.
func expandSlot(s string, t *sdk.Task) (string, bool) {
	if !strings.Contains(s, "{") {
		return s, false
	}
	r := strings.NewReplacer(
		"{slot}", fmt.Sprint(t.Slot),
		"{total}", fmt.Sprint(t.Total),
		"{run_id}", fmt.Sprint(t.RunID),
		"{job_id}", fmt.Sprint(t.JobID),
		"{attempt}", fmt.Sprint(t.Attempt),
	)
	out := r.Replace(s)
	return out, out != s
}

// Config configures the built-in handlers of an executor. The zero value is
// the safe default: http refuses every destination (empty allow-list), sql
// has no data source, shell is disabled.
type Config struct {
	HTTP  HTTPConfig
	SQL   SQLConfig
	Shell ShellConfig
}

// Handlers are the built-in handlers of one executor, built from a Config.
type Handlers struct {
	HTTP  *HTTP
	SQL   *SQL
	Shell *Shell
}

// New checks cfg and builds the handlers. Close the result to close the SQL
// data sources' connection pools.
func New(cfg Config) (*Handlers, error) {
	h, err := NewHTTP(cfg.HTTP)
	if err != nil {
		return nil, err
	}
	s, err := NewSQL(cfg.SQL)
	if err != nil {
		return nil, err
	}
	sh, err := NewShell(cfg.Shell)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return &Handlers{HTTP: h, SQL: s, Shell: sh}, nil
}

// Register adds the handlers to an executor under the names http, sql,
// shell and dedup-archive (which uses the sql data sources). The shell handler is registered even when disabled, so that a job
// naming it fails with "disabled on this executor" rather than "no handler".
func (h *Handlers) Register(e *sdk.Executor) {
	e.Handle(NameHTTP, h.HTTP.Handle)
	e.Handle(NameSQL, h.SQL.Handle)
	e.Handle(NameShell, h.Shell.Handle)
	e.Handle(NameDedupArchive, NewDedupArchive(h.SQL).Handle)
}

// Close closes the SQL data sources.
func (h *Handlers) Close() error { return h.SQL.Close() }

// cappedPrefix returns at most n bytes of b for a log line, valid UTF-8
// replaced where cut, with "…" when cut.
func cappedPrefix(b []byte, n int) string {
	if len(b) <= n {
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	}
	return string(bytes.ToValidUTF8(b[:n], []byte("\uFFFD"))) + "…"
}
