package metrics

import (
	"testing"

	"github.com/shardjob/shardjob/sql/namedsql/gen"
)

// TestQueryNames fails when queries_gen.go is stale (run go generate), a
// query of queries.sql is used by no code, or the file does not load.
func TestQueryNames(t *testing.T) {
	t.Parallel()
	if err := gen.Check("."); err != nil {
		t.Fatal(err)
	}
	if queriesErr != nil {
		t.Fatal(queriesErr)
	}
}
