package store

import (
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
