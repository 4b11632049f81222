package msg

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStringFillsTheTemplate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		m    Msg
		want string
	}{
		{Msg{}, ""},
		{New(RunSlotsPartlyFailed, "failed", 2, "total", 16), "2 of 16 slots failed"},
		{New(RunWaiting, "cause", New(CauseNoHandler, "app", "billing", "handler", "settle", "online", 3)),
			"waiting: no online executor of app billing has handler settle (3 online without it)"},
		{New(RunUnplaceableFailed, "cause", New(CauseNoExecutor, "app", "a"), "timeout", 10*time.Minute),
			"no executor of app a is online for 10m0s (unplaceable timeout): the run failed without starting"},
		{New(RunCancelledByReason, "user", "ops", "reason", "a {user} in braces stays"), "cancelled by ops: a {user} in braces stays"},
		{New(RunSlotsFailed), "{failed} slots failed"}, // a missing argument shows as its placeholder
		{New("no.such_code", "a", 1), `no.such_code {"a":"1"}`},
	}
	for _, c := range cases {
		if got := c.m.String(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.m, got, c.want)
		}
	}
}

func TestNewRefusesBadArguments(t *testing.T) {
	t.Parallel()
	for _, kv := range [][]any{{"a"}, {1, "x"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%v) did not panic", kv)
				}
			}()
			_ = New(RunSlotsFailed, kv...) // a Msg is an error too: errcheck
		}()
	}
}

// TestStoredFormRoundTrips: what Value writes, Scan reads back, nested
// messages included, and renders the same English.
func TestStoredFormRoundTrips(t *testing.T) {
	t.Parallel()
	m := New(AlarmRunFailed, "run", 7, "reason", New(RunSlotsFailed, "failed", 2))
	v, err := m.Value()
	if err != nil {
		t.Fatal(err)
	}
	var back Msg
	if err := back.Scan(v); err != nil {
		t.Fatal(err)
	}
	if back.Code != m.Code || back.String() != "run 7 failed: 2 slots failed" {
		t.Fatalf("read back %+v: %q", back, back.String())
	}
	for _, src := range []any{nil, "", []byte(""), "not json", `{"args":{}}`, `{"code":""}`} {
		var got Msg
		if err := got.Scan(src); err != nil || !got.IsZero() {
			t.Errorf("Scan(%v) = %+v, %v; want no message", src, got, err)
		}
	}
	var bad Msg
	if err := bad.Scan(42); err == nil {
		t.Error("Scan(42): no error")
	}
	if v, _ := (Msg{}).Value(); v != "" {
		t.Errorf("no message stored as %q", v)
	}
}

func TestLongArgumentsAreCutToFit(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 3000)
	m := New(RunCancelledByReason, "user", "ops", "reason", long)
	v, err := m.Value()
	if err != nil {
		t.Fatal(err)
	}
	s := v.(string)
	if len(s) > MaxStored || !json.Valid([]byte(s)) {
		t.Fatalf("stored %d bytes (max %d), valid JSON %v", len(s), MaxStored, json.Valid([]byte(s)))
	}
	var back Msg
	_ = back.Scan(s)
	if back.Code != RunCancelledByReason || !strings.HasSuffix(back.Args["reason"].(string), "…") {
		t.Fatalf("read back %+v", back)
	}
	many := Msg{Code: RunCancelledBy, Args: map[string]any{}}
	for i := range 50 {
		many.Args[strings.Repeat("k", 10)+string(rune('a'+i%26))+string(rune('a'+i/26))] = strings.Repeat("x", 300)
	}
	v, _ = many.Value()
	if s := v.(string); len(s) > MaxStored || !strings.Contains(s, string(RunCancelledBy)) {
		t.Fatalf("too many arguments: stored %d bytes: %.80s", len(s), s)
	}
}

var placeholder = regexp.MustCompile(`\{(\w+)\}`)

func placeholders(s string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestEveryCodeHasATemplate parses catalog.go: every Code constant has an
// English template.
func TestEveryCodeHasATemplate(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "catalog.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				lit := v.(*ast.BasicLit)
				code := Code(strings.Trim(lit.Value, `"`))
				n++
				if Catalog[code] == "" {
					t.Errorf("code %s has no template in Catalog", code)
				}
			}
		}
	}
	builtin := 0 // executor/builtin's problems: no constants (admin/jobdef names them)
	for code := range Catalog {
		if strings.HasPrefix(string(code), "builtin.") {
			builtin++
		}
	}
	if n != len(Catalog)-builtin {
		t.Errorf("%d code constants, %d templates (and %d builtin.*)", n, len(Catalog)-builtin, builtin)
	}
}

// TestConsoleDictionaries: the console's English holds the same templates
// under "srv.<code>", and every other language has each with the same
// placeholders (and no srv key the admin does not send).
func TestConsoleDictionaries(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"en", "zh-CN"} {
		b, err := os.ReadFile("../../web/static/i18n/" + lang + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var dict map[string]string
		if err := json.Unmarshal(b, &dict); err != nil {
			t.Fatal(err)
		}
		for code, tmpl := range Catalog {
			got, ok := dict["srv."+string(code)]
			switch {
			case !ok:
				t.Errorf("%s.json: no srv.%s", lang, code)
			case lang == "en" && got != tmpl:
				t.Errorf("en.json srv.%s = %q, the admin says %q", code, got, tmpl)
			case !slices.Equal(placeholders(got), placeholders(tmpl)):
				t.Errorf("%s.json srv.%s has placeholders %v, want %v", lang, code, placeholders(got), placeholders(tmpl))
			}
		}
		for k := range dict {
			if c, ok := strings.CutPrefix(k, "srv."); ok && Catalog[Code(c)] == "" {
				t.Errorf("%s.json: %s is not a code the admin sends", lang, k)
			}
		}
	}
}

// TestNestedReadsBackAStoredMessage: a nested message argument is found
// whether it was given as a Msg or read back from its stored JSON.
func TestNestedReadsBackAStoredMessage(t *testing.T) {
	m := New(RunWaiting, "cause", New(CauseAppCap, "app", "billing", "running", 4, "max", 4))
	got, ok := m.Nested("cause")
	if !ok || got.Code != CauseAppCap {
		t.Fatalf("given: %v %v", got, ok)
	}
	v, err := m.Value()
	if err != nil {
		t.Fatal(err)
	}
	var back Msg
	if err := back.Scan(v); err != nil {
		t.Fatal(err)
	}
	got, ok = back.Nested("cause")
	if !ok || got.Code != CauseAppCap || got.String() != "app billing runs 4 of its 4 slots (max_running_slots)" {
		t.Fatalf("read back: %v %v", got, ok)
	}
	if _, ok := back.Nested("nothing"); ok {
		t.Fatal("no such argument")
	}
}
