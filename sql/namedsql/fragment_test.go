package namedsql

import (
	"strings"
	"testing"
)

const fragments = `-- fragment: Def
-- the columns a client sets
a, b,
c;
-- fragment: Cols
id, {{Def}}, created_at;
-- fragment: Lock.mysql
FOR UPDATE;
-- fragment: Lock.sqlite
-- nothing: one writer
 ;
-- name: Insert
INSERT INTO t ({{Def}}, created_at) VALUES ({{named(Def)}}, {{now_ms}});
-- name: Update
UPDATE t SET {{assign(Def)}}, v = v + 1 WHERE id = :id;
-- name: Get
SELECT {{Cols}} FROM t WHERE id = ? {{Lock}} {{upsert(id)}};
`

func TestFragments(t *testing.T) {
	qs, err := Parse(strings.ReplaceAll(fragments, "-- nothing: one writer\n ;", "-- nothing: one writer\n/* none */;"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Names(qs); strings.Join(got, ",") != "Get,Insert,Update" {
		t.Errorf("Names lists fragments: %v", got)
	}
	for dialect, lock := range map[string]string{"mysql": "FOR UPDATE", "sqlite": "/* none */"} {
		got, err := ForDialect(qs, dialect, []string{"mysql", "sqlite"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"Insert": "INSERT INTO t (a, b,\nc, created_at) VALUES (:a, :b, :c, {{now_ms}})",
			"Update": "UPDATE t SET a = :a, b = :b, c = :c, v = v + 1 WHERE id = :id",
			"Get":    "SELECT id, a, b,\nc, created_at FROM t WHERE id = ? " + lock + " {{upsert(id)}}",
		}
		if len(got) != len(want) {
			t.Errorf("%s: %v", dialect, got)
		}
		for n, w := range want {
			if got[n] != w {
				t.Errorf("%s: %s = %q, want %q", dialect, n, got[n], w)
			}
		}
	}
	portable, _ := Parse("-- fragment: C\nx, y;\n-- name: Q\nSELECT {{C}} FROM t;")
	if got, err := Portable(portable); err != nil || len(got) != 1 || got["Q"] != "SELECT x, y FROM t" {
		t.Errorf("Portable: %v, %v", got, err)
	}
}

func TestFragmentsBounded(t *testing.T) {
	// Fragments that double each other are refused before they fill memory.
	var b strings.Builder
	b.WriteString("-- fragment: F0\nxxxxxxxxxxxxxxxx;\n")
	for i := 1; i < 40; i++ {
		b.WriteString("-- fragment: F" + itoa(i) + "\n{{F" + itoa(i-1) + "}}{{F" + itoa(i-1) + "}};\n")
	}
	b.WriteString("-- name: Q\nSELECT 1;")
	qs, err := Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Portable(qs); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("doubling fragments: %v", err)
	}
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

// FuzzForDialect checks that replacing fragments never panics, ends with a
// bounded text, and gives the same answer each time (whatever the order of
// maps).
func FuzzForDialect(f *testing.F) {
	f.Add(fragments)
	f.Add("-- fragment: A\n{{A}};\n-- name: Q\nSELECT {{named(A)}}")
	f.Add("-- fragment: A\na,b;\n-- fragment: B\n{{A}}{{A}};\n-- name: Q\nSELECT {{assign(B)}} {{B}}")
	f.Add("-- fragment: A\n{{B}};\n-- fragment: B\nx;\n-- name: Q\nSELECT {{A}};\n-- name: R\nSELECT {{named(Z)}}")
	f.Fuzz(func(t *testing.T, text string) {
		qs, err := Parse(text)
		if err != nil {
			return
		}
		got, err := ForDialect(qs, "mysql", []string{"mysql", "sqlite"})
		again, errAgain := ForDialect(qs, "mysql", []string{"mysql", "sqlite"})
		if (err == nil) != (errAgain == nil) || err != nil && err.Error() != errAgain.Error() {
			t.Fatalf("two answers: %v, then %v", err, errAgain)
		}
		if err != nil {
			return
		}
		if len(got) != len(Names(qs)) {
			t.Fatalf("%d texts for %d names", len(got), len(Names(qs)))
		}
		for name, q := range got {
			if len(q) > maxExpanded {
				t.Fatalf("query %s: %d bytes", name, len(q))
			}
			if again[name] != q {
				t.Fatalf("query %s: two answers", name)
			}
		}
	})
}
