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
	for _, d := range sqlfiles.Dialects {
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

// maxUntyped is how many queries of the store have no kind yet (see
// package gen): typing is done a domain at a time, and this number only
// goes down. The queries that stay untyped for good are built at run time:
// {{filters}}, "set by key" updates (CASE arms and an IN list sized per
// call) and a multi-row upsert with placeholders after its tuples
// (SlotStatsUpsert); each says so at its text.
const maxUntyped = 23

// TestQueriesAreTyped fails when an untyped query is added: give it a kind,
// in and out lines (see sql/namedsql/gen), then go generate.
func TestQueriesAreTyped(t *testing.T) {
	t.Parallel()
	untyped, err := gen.Untyped(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(untyped) > maxUntyped {
		t.Fatalf("%d untyped queries, at most %d: type the new ones (\"-- name: X :one\" with \"-- in:\" and \"-- out:\" lines, see sql/namedsql/gen), then go generate", len(untyped), maxUntyped)
	}
	if len(untyped) < maxUntyped {
		t.Fatalf("%d untyped queries: lower maxUntyped to %d, so that the ratchet holds", len(untyped), len(untyped))
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
