package namedsql

import (
	"strings"
	"testing"
)

const sample = `-- A header: ignored.
-- name: One
SELECT 1
-- a comment inside: dropped
FROM t;

-- name: Two
SELECT 2;
-- name: Two.sqlite
SELECT 'two';
`

func TestParse(t *testing.T) {
	qs, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	want := []Query{
		{Name: "One", Text: "SELECT 1\nFROM t", Line: 2},
		{Name: "Two", Text: "SELECT 2", Line: 7},
		{Name: "Two", Dialect: "sqlite", Text: "SELECT 'two'", Line: 9},
	}
	if len(qs) != len(want) {
		t.Fatalf("got %+v, want %+v", qs, want)
	}
	for i := range want {
		if qs[i] != want[i] {
			t.Errorf("query %d: got %+v, want %+v", i, qs[i], want[i])
		}
	}
	if got := Names(qs); strings.Join(got, ",") != "One,Two" {
		t.Errorf("Names: %v", got)
	}
	typed, err := Parse("-- name: Get.sqlite :one\n-- A comment.\n-- in: id int64\n-- out: a string, b int\nSELECT a, b FROM t WHERE id = ?;")
	if err != nil || len(typed) != 1 || typed[0] != (Query{Name: "Get", Dialect: "sqlite", Kind: "one", In: "id int64", Out: "a string, b int", Text: "SELECT a, b FROM t WHERE id = ?", Line: 1}) {
		t.Errorf("typed: %+v, %v", typed, err)
	}
	crlf, err := Parse(strings.ReplaceAll(sample, "\n", "\r\n"))
	if err != nil || len(crlf) != 3 || crlf[0].Text != "SELECT 1\nFROM t" {
		t.Errorf("CRLF: %+v, %v", crlf, err)
	}
}

// TestParseErrors: errors of Parse, and of ForDialect replacing fragments.
func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"-- name: X\nSELECT 1;\n-- name: X\nSELECT 2;":                             "defined twice",
		"-- name: X.a\nSELECT 1;\n-- name: X.a\nSELECT 2;":                         "defined twice",
		"-- name: X\n-- only a comment\n;":                                         "has no SQL",
		"-- name: \nSELECT 1;":                                                     "not a query name",
		"-- name: 1X\nSELECT 1;":                                                   "not a query name",
		"-- name: X Y\nSELECT 1;":                                                  "not a kind",
		"-- name: X :one\n-- in: a int\n-- in: b int\nSELECT ?;":                   "given twice",
		"-- fragment: F\n-- out: a int\nx":                                         "cannot be typed",
		"-- name: X.\nSELECT 1;":                                                   "not a query name",
		"-- name: X.a.b\nSELECT 1;":                                                "not a query name",
		"-- fragment: A\nx;\n-- name: A\nSELECT 1;":                                "defined twice",
		"-- fragment: A\n-- nothing\n;":                                            "fragment A has no SQL",
		"-- fragment: 1A\nx;":                                                      "not a fragment name",
		"-- fragment: A\n{{B}};\n-- fragment: B\n{{A}};\n-- name: Q\nSELECT 1":     "uses itself",
		"-- fragment: A\n{{A}};\n-- name: Q\nSELECT 1":                             "uses itself",
		"-- name: Q\nINSERT INTO t VALUES ({{named(Nope)}})":                       `no fragment named "Nope"`,
		"-- fragment: A\nx + 1;\n-- name: Q\nUPDATE t SET {{assign(A)}}":           "not a list of column names",
		"-- fragment: A\nx, , y;\n-- name: Q\nINSERT INTO t VALUES ({{named(A)}})": "not a list of column names",
		"-- fragment: A.mysql\nx;\n-- name: Q\nSELECT 1":                           "fragment A has no text for dialect sqlite",
	} {
		qs, err := Parse(text)
		if err == nil { // the errors of fragments' uses
			_, err = ForDialect(qs, "sqlite", []string{"mysql", "sqlite"})
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", text, err, want)
		}
	}
}

func TestForDialect(t *testing.T) {
	qs, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	dialects := []string{"mysql", "sqlite"}
	my, err := ForDialect(qs, "mysql", dialects)
	if err != nil || my["One"] != "SELECT 1\nFROM t" || my["Two"] != "SELECT 2" || len(my) != 2 {
		t.Errorf("mysql: %v, %v", my, err)
	}
	lite, err := ForDialect(qs, "sqlite", dialects)
	if err != nil || lite["Two"] != "SELECT 'two'" || len(lite) != 2 {
		t.Errorf("sqlite: %v, %v", lite, err)
	}
	// The dialect's own block wins whatever the order.
	rev, _ := Parse("-- name: A.sqlite\nSELECT 'a';\n-- name: A\nSELECT 1;")
	if got, err := ForDialect(rev, "sqlite", dialects); err != nil || got["A"] != "SELECT 'a'" {
		t.Errorf("own block first: %v, %v", got, err)
	}
	if _, err := ForDialect(qs, "oracle", dialects); err == nil {
		t.Error("an unknown dialect was accepted")
	}
	odd, _ := Parse("-- name: A.oracle\nSELECT 1;")
	if _, err := ForDialect(odd, "mysql", dialects); err == nil || !strings.Contains(err.Error(), "unknown dialect") {
		t.Errorf("a block of an unknown dialect: %v", err)
	}
	only, _ := Parse("-- name: A.mysql\nSELECT 1;")
	if _, err := ForDialect(only, "sqlite", dialects); err == nil || !strings.Contains(err.Error(), "no text for dialect sqlite") {
		t.Errorf("a name missing in a dialect: %v", err)
	}
}

func TestPortable(t *testing.T) {
	qs, _ := Parse("-- name: A\nSELECT 1;\n-- name: B\nSELECT 2;")
	if got, err := Portable(qs); err != nil || len(got) != 2 || got["B"] != "SELECT 2" {
		t.Errorf("Portable: %v, %v", got, err)
	}
	qs, _ = Parse(sample)
	if _, err := Portable(qs); err == nil {
		t.Error("Portable accepted a dialect block")
	}
}

func TestSelect(t *testing.T) {
	got, err := Select(map[string]string{"A": "SELECT 1", "B": "SELECT 2"}, []string{"B", "A"})
	if err != nil || strings.Join(got, ";") != "SELECT 2;SELECT 1" {
		t.Errorf("Select: %v, %v", got, err)
	}
	if _, err := Select(map[string]string{"A": "SELECT 1"}, []string{"A", "C"}); err == nil || !strings.Contains(err.Error(), "no query named C") {
		t.Errorf("a missing name: %v", err)
	}
}

// FuzzParse checks that Parse never panics and that what it returns is
// what it reads back: the queries written out again parse to the same.
func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("-- name: X\nSELECT 1;\n-- name: X\nSELECT 2;")
	f.Add("  -- name:A.b\r\nSELECT ';'\n;\n")
	f.Add(fragments)
	f.Add("-- name: A\n0\r\r\n0") // found by the fuzzer: a line ending "\r\r"
	f.Fuzz(func(t *testing.T, text string) {
		qs, err := Parse(text)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, q := range qs {
			if !identifier(q.Name) || q.Dialect != "" && !identifier(q.Dialect) {
				t.Fatalf("bad name %q.%q", q.Name, q.Dialect)
			}
			if strings.TrimSpace(q.Text) == "" {
				t.Fatalf("query %s: empty text", q.full())
			}
			prefix := namePrefix
			if q.Fragment {
				prefix = fragmentPrefix
			}
			b.WriteString(prefix + " " + q.full() + "\n" + q.Text + ";\n")
		}
		again, err := Parse(b.String())
		if err != nil {
			t.Fatalf("written back: %v\n%s", err, b.String())
		}
		if len(again) != len(qs) {
			t.Fatalf("written back: %d queries, want %d", len(again), len(qs))
		}
		for i := range qs {
			if again[i].Name != qs[i].Name || again[i].Dialect != qs[i].Dialect || again[i].Text != qs[i].Text || again[i].Fragment != qs[i].Fragment {
				t.Fatalf("written back: %+v, want %+v", again[i], qs[i])
			}
		}
	})
}
