package retention

import (
	"testing"

	"github.com/shardjob/shardjob/sql/namedsql/gen"
)

// TestQueryNames fails when queries_gen.go is stale (run go generate) or a
// query of sql/queries_retention.sql is used by no code. (New loads them in
// every test of the package.)
func TestQueryNames(t *testing.T) {
	t.Parallel()
	if err := gen.Check("."); err != nil {
		t.Fatal(err)
	}
}
