package store

import (
	"fmt"
	"testing"

	sqlfiles "github.com/shardjob/shardjob/sql"
	"github.com/shardjob/shardjob/sql/namedsql/gen"
)

// TestQueryNames fails when queries_gen.go is stale (run go generate) or a
// query of sql/queries*.sql is used by no code, and checks that every
// query loads, macros expanded, in every dialect.
func TestQueryNames(t *testing.T) {
	t.Parallel()
	if err := gen.Check("."); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{sqlfiles.MySQL, sqlfiles.SQLite} {
		q, err := loadQueries(d)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		for n := range query(len(queryNames)) {
			if q.get(n) == "" {
				t.Errorf("%s: query %s is empty", d, n)
			}
		}
	}
}

func TestFilters(t *testing.T) {
	t.Parallel()
	const q = "SELECT id FROM t {{filters}} ORDER BY id LIMIT ?"
	var none filters
	if got, args := none.query(q, 10); got != "SELECT id FROM t  ORDER BY id LIMIT ?" || len(args) != 1 || args[0] != 10 {
		t.Errorf("no filter: %q %v", got, args)
	}
	var f filters
	f.add("a = ?", 1)
	f.in("b", []string{"x", "y"})
	got, args := f.query(q, 10)
	if got != "SELECT id FROM t WHERE a = ? AND b IN (?, ?) ORDER BY id LIMIT ?" || fmt.Sprint(args) != "[1 x y 10]" {
		t.Errorf("filters: %q %v", got, args)
	}
	// query leaves f as it was: it can serve again.
	if _, again := f.query(q, 20); fmt.Sprint(again) != "[1 x y 20]" {
		t.Errorf("again: %v", again)
	}
}
