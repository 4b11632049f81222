package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/protocol"
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

// permanent returns a failure no retry can fix (an HTTP 400, an SQL syntax
// error, an exit code not in retry_exit_codes): wrapped in sdk.Permanent,
// the slot fails without retry (docs/failures.md).
func permanent(format string, args ...any) error {
	return sdk.Permanent(fmt.Errorf(format, args...))
}

// maxRetryAfter caps a Retry-After a server asks for (the admin caps it
// at the same bound).
const maxRetryAfter = protocol.MaxRetryAfter

// refused returns an error wrapping ErrRefused with the given explanation.
func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// ParamsError says what is wrong with a built-in handler's params; Field is
// the JSON field at fault ("" for the document as a whole). Problem is the
// English text: Problems[Code] with the Args filled in, each a string or a
// *ParamsError whose Code and Args are a problem nested in this one. The
// admin sends Code and Args to its console, which shows them in the
// reader's language (admin/jobdef).
type ParamsError struct {
	Handler string
	Field   string
	Problem string
	Code    string
	Args    map[string]any
}

func (e *ParamsError) Error() string {
	if e.Field == "" {
		return e.Handler + " handler params: " + e.Problem
	}
	return e.Handler + " handler params: " + e.Field + ": " + e.Problem
}

// paramsErr returns the problem code of Problems, filled with the
// arguments of kv (name, value pairs), as an error of field.
func paramsErr(handler, field, code string, kv ...any) *ParamsError {
	p := newProblem(code, nil, kv...)
	return &ParamsError{Handler: handler, Field: field, Problem: p.Error(), Code: p.code, Args: p.args}
}

// paramsErrFrom returns err, a *problem of checkURL, sqlValue or
// compileStatement, as an error of field.
func paramsErrFrom(handler, field string, err error) *ParamsError {
	var p *problem
	if !errors.As(err, &p) { // not one of ours: its text as it is
		p = newProblem("error", nil, "error", err.Error())
	}
	return &ParamsError{Handler: handler, Field: field, Problem: p.Error(), Code: p.code, Args: p.args}
}

// problem is one text of Problems with its arguments, and the error it
// wraps (ErrRefused for a refusal).
type problem struct {
	code string
	args map[string]any
	wrap error
}

// newProblem fills the template of code with kv, given as name, value
// pairs: a value is kept when it is a *ParamsError and formatted with
// fmt.Sprint otherwise. It panics for a code Problems does not have or an
// odd kv: programming errors the first test that meets them catches.
func newProblem(code string, wrap error, kv ...any) *problem {
	if _, ok := Problems[code]; !ok || len(kv)%2 != 0 {
		panic(fmt.Sprintf("builtin: problem %q: unknown code or odd arguments", code))
	}
	p := &problem{code: code, wrap: wrap}
	for i := 0; i < len(kv); i += 2 {
		if p.args == nil {
			p.args = make(map[string]any, len(kv)/2)
		}
		name := fmt.Sprint(kv[i])
		if nested, ok := kv[i+1].(*ParamsError); ok {
			p.args[name] = nested
		} else {
			p.args[name] = fmt.Sprint(kv[i+1])
		}
	}
	return p
}

// Error is the template with the arguments in place of their {name}s (a
// {name} with no argument stays as it is: "{slot}" in an example URL).
func (p *problem) Error() string {
	pairs := make([]string, 0, 2*len(p.args))
	for name, v := range p.args {
		text, ok := v.(string)
		if !ok {
			text = v.(*ParamsError).Problem
		}
		pairs = append(pairs, "{"+name+"}", text)
	}
	return strings.NewReplacer(pairs...).Replace(Problems[p.code])
}

func (p *problem) Unwrap() error { return p.wrap }

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
		return paramsErr(handler, "", "params.required")
	}
	if len(params) > MaxParamsBytes {
		return paramsErr(handler, "", "params.too_large", "bytes", len(params), "max", MaxParamsBytes)
	}
	dec := json.NewDecoder(strings.NewReader(params))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return paramsErr(handler, te.Field, "params.json_type", "want", jsonKind(te.Type.Kind().String()), "got", te.Value)
		}
		return paramsErr(handler, "", "params.json_invalid", "error", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return paramsErr(handler, "", "params.trailing")
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
		return 0, paramsErr(handler, "timeout_ms", "params.timeout", "value", ms, "max", maxD.Milliseconds(), "default", def)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// expandSlot replaces {slot}, {total}, {run_id}, {job_id}, {attempt} and
// the workflow context's {business_date}, {workflow_run_id} and
// {workflow_node} in s with the task's values (the last three empty for a
// run that is no workflow node's). It reports whether any placeholder was
// present.
func expandSlot(s string, t *sdk.Task) (string, bool) {
	if !strings.Contains(s, "{") {
		return s, false
	}
	w := workflowOf(t)
	r := strings.NewReplacer(
		"{slot}", fmt.Sprint(t.Slot),
		"{total}", fmt.Sprint(t.SlotCount),
		"{run_id}", fmt.Sprint(t.RunID),
		"{job_id}", fmt.Sprint(t.JobID),
		"{attempt}", fmt.Sprint(t.Attempt),
		"{business_date}", w.BusinessDate,
		"{workflow_run_id}", w.runID(),
		"{workflow_node}", w.Node,
	)
	out := r.Replace(s)
	return out, out != s
}

// taskWorkflow is a task's workflow context, the zero value for a run that
// is no workflow node's: what the handlers pass on as placeholders, SQL
// arguments, HTTP headers and environment variables.
type taskWorkflow struct{ sdk.WorkflowContext }

func workflowOf(t *sdk.Task) taskWorkflow {
	if t.Workflow == nil {
		return taskWorkflow{}
	}
	return taskWorkflow{*t.Workflow}
}

// runID is the workflow run's id as text, "" for none.
func (w taskWorkflow) runID() string {
	if w.RunID == 0 {
		return ""
	}
	return strconv.FormatInt(w.RunID, 10)
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
