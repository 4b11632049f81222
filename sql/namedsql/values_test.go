package namedsql

import "testing"

func TestMultiRow(t *testing.T) {
	for _, c := range []struct {
		q    string
		n    int
		want string
	}{
		{"INSERT INTO t (a, b) VALUES (?, ?)", 3, "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?)"},
		{"INSERT INTO t (a, b) VALUES (?, ?)", 1, "INSERT INTO t (a, b) VALUES (?, ?)"},
		{"INSERT INTO t (a, b) VALUES (?, COALESCE(?, 0)) ON CONFLICT (a) DO UPDATE SET b = excluded.b", 2,
			"INSERT INTO t (a, b) VALUES (?, COALESCE(?, 0)), (?, COALESCE(?, 0)) ON CONFLICT (a) DO UPDATE SET b = excluded.b"},
		{"INSERT INTO t (a) VALUES ('(')", 2, "INSERT INTO t (a) VALUES ('('), ('(')"},
		{"UPDATE t SET a = ?", 2, "UPDATE t SET a = ?"},
		{"INSERT INTO t (a) VALUES (?", 2, "INSERT INTO t (a) VALUES (?"},
	} {
		if got := MultiRow(c.q, c.n); got != c.want {
			t.Errorf("MultiRow(%q, %d) = %q, want %q", c.q, c.n, got, c.want)
		}
	}
}
