package namedsql

import "testing"

func TestDollarNumbersThePlaceholdersOutsideLiteralsAndComments(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT 1":    "SELECT 1",
		"SELECT ?, ?": "SELECT $1, $2",
		"SELECT '?', ? -- ?\n, ? /* ? */ , \"?\"": "SELECT '?', $1 -- ?\n, $2 /* ? */ , \"?\"",
		"SELECT 'it''s ?', ?":                     "SELECT 'it''s ?', $1",
		"SELECT ? /* unended ?":                   "SELECT $1 /* unended ?",
	} {
		if got := Dollar(q); got != want {
			t.Errorf("Dollar(%q) = %q, want %q", q, got, want)
		}
	}
}
