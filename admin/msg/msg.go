package msg

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/sdk/names"
)

// Code names a message; Catalog holds its English template.
type Code string

// Msg is one message: a code and its named arguments (each a string or a
// nested Msg). The zero Msg is "no message".
type Msg struct {
	Code Code           `json:"code"`
	Args map[string]any `json:"args,omitempty"`
}

// New returns the message code with the arguments of kv, given as name,
// value pairs. A value is kept as it is when it is a Msg and formatted with
// fmt.Sprint otherwise. New panics when kv has an odd length or a name is
// not a string: a programming error caught by the first test that makes the
// message.
func New(code Code, kv ...any) Msg {
	if len(kv)%2 != 0 {
		panic(fmt.Sprintf("msg.New(%s): odd number of name/value arguments", code))
	}
	m := Msg{Code: code}
	for i := 0; i < len(kv); i += 2 {
		name, ok := kv[i].(string)
		if !ok {
			panic(fmt.Sprintf("msg.New(%s): argument %d is a %T, not a name", code, i, kv[i]))
		}
		if m.Args == nil {
			m.Args = make(map[string]any, len(kv)/2)
		}
		switch v := kv[i+1].(type) {
		case Msg:
			m.Args[name] = v
		default:
			m.Args[name] = fmt.Sprint(v)
		}
	}
	return m
}

// Error is m in English (String): a Msg is also the error of a validator
// whose refusal the console shows in the reader's language (errors.As
// finds it in a wrapped error).
func (m Msg) Error() string { return m.String() }

// Of returns err as a message: the Msg in its chain, or the message of an
// error that has one (a Message method, such as the validation errors of
// admin/schedule), or else its English text as the argument of Text, which
// every language shows as it is.
func Of(err error) Msg {
	var m Msg
	if errors.As(err, &m) {
		return m
	}
	var withMsg interface{ Message() Msg }
	if errors.As(err, &withMsg) {
		return withMsg.Message()
	}
	return New(Text, "text", err.Error())
}

// IsZero reports whether m is no message.
func (m Msg) IsZero() bool { return m.Code == "" }

// String is m in English: its template with the arguments filled in (nested
// messages rendered the same way). A code with no template renders as the
// code followed by its arguments, so that nothing is lost.
func (m Msg) String() string {
	if m.IsZero() {
		return ""
	}
	tmpl, ok := Catalog[m.Code]
	if !ok {
		b, _ := json.Marshal(m.Args)
		return string(m.Code) + " " + string(b)
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			break
		}
		b.WriteString(tmpl[:open])
		name := tmpl[open+1 : open+end]
		if v, ok := m.Args[name]; ok {
			b.WriteString(argText(v))
		} else {
			b.WriteString(tmpl[open : open+end+1])
		}
		tmpl = tmpl[open+end+1:]
	}
	b.WriteString(tmpl)
	return b.String()
}

// argText renders one argument: a string, a Msg, or a Msg as JSON decoding
// leaves it (a map with a code).
func argText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case Msg:
		return v.String()
	case map[string]any:
		if nested, ok := fromMap(v); ok {
			return nested.String()
		}
	}
	return fmt.Sprint(v)
}

// Nested returns argument name of m as a message: one given as a Msg, or
// as JSON decoding leaves it (a message read back from the database).
func (m Msg) Nested(name string) (Msg, bool) {
	switch v := m.Args[name].(type) {
	case Msg:
		return v, true
	case map[string]any:
		return fromMap(v)
	}
	return Msg{}, false
}

// fromMap turns a decoded JSON object back into a Msg.
func fromMap(v map[string]any) (Msg, bool) {
	code, ok := v["code"].(string)
	if !ok || code == "" {
		return Msg{}, false
	}
	m := Msg{Code: Code(code)}
	if args, ok := v["args"].(map[string]any); ok {
		m.Args = args
	}
	return m, true
}

// MaxStored bounds the stored form of a message (the error_msg and
// message_msg columns hold 2048 bytes); longer arguments are cut to fit.
const MaxStored = 2000

// maxArg is what each string argument is cut to when a message is too long
// to store.
const maxArg = 200

// Stored is what Value stores, as a string: comparable, for the store's
// batched updates that group equal values.
func (m Msg) Stored() string {
	v, err := m.Value()
	if err != nil { // arguments are strings and messages: cannot happen
		return ""
	}
	return v.(string)
}

// Value stores m as JSON ("" for no message); driver.Valuer.
func (m Msg) Value() (driver.Value, error) {
	if m.IsZero() {
		return "", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("msg %s: %w", m.Code, err)
	}
	if len(b) > MaxStored {
		b, err = json.Marshal(m.shortened())
		if err != nil {
			return nil, fmt.Errorf("msg %s: %w", m.Code, err)
		}
		if len(b) > MaxStored { // still: keep the code alone
			b, _ = json.Marshal(Msg{Code: m.Code})
		}
	}
	return string(b), nil
}

// shortened is m with every string argument cut to maxArg bytes.
func (m Msg) shortened() Msg {
	out := Msg{Code: m.Code, Args: make(map[string]any, len(m.Args))}
	for k, v := range m.Args {
		switch v := v.(type) {
		case string:
			out.Args[k] = cut(v, maxArg)
		case Msg:
			out.Args[k] = v.shortened()
		default:
			out.Args[k] = cut(argText(v), maxArg)
		}
	}
	return out
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// Scan reads a stored message; sql.Scanner. An empty or NULL column is no
// message, and so is one that is not a message (a row written by hand): its
// English text column still says what happened.
func (m *Msg) Scan(src any) error {
	*m = Msg{}
	var b []byte
	switch v := src.(type) {
	case nil:
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("msg: cannot scan a %T", src)
	}
	if len(b) == 0 {
		return nil
	}
	var raw struct {
		Code Code           `json:"code"`
		Args map[string]any `json:"args"`
	}
	if !json.Valid(b) {
		return nil // not a message: see above
	}
	if err := json.Unmarshal(b, &raw); err != nil || raw.Code == "" {
		return nil //nolint:nilerr // valid JSON of another shape is not a message either
	}
	m.Code, m.Args = raw.Code, raw.Args
	return nil
}

// Name says what is wrong with s as a name of shardjob's objects
// (sdk/names), the zero Msg when it is valid: NameRequired for an
// empty name, NameInvalid (the name quoted) for one that was given.
func Name(s string) Msg {
	switch {
	case names.Valid(s):
		return Msg{}
	case s == "":
		return New(NameRequired, "rule", New(NameRule))
	default:
		return New(NameInvalid, "value", strconv.Quote(s), "rule", New(NameRule))
	}
}
