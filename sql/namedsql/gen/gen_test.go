package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck writes a package with a go:generate line and checks what
// Check says of it: current, stale, a query used by no code.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("q.sql", "-- name: One\nSELECT 1;\n-- name: Two\nSELECT 2;\n-- name: Two.sqlite\nSELECT 'two';\n")
	write("other.sql", "-- name: Three\nSELECT 3;\n")
	write("p.go", "package p\n\n//go:generate "+Command+" -pkg p -exclude other.sql *.sql\n\nvar _ = []query{qOne, qTwo}\n")
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("no generated file: %v", err)
	}
	out, src, err := Generate(dir, strings.Fields("-pkg p -exclude other.sql *.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if out != "queries_gen.go" || !strings.Contains(string(src), "qOne query = iota\n\tqTwo\n)") || strings.Contains(string(src), "Three") {
		t.Errorf("generated %s:\n%s", out, src)
	}
	write(out, string(src))
	if err := Check(dir); err != nil {
		t.Errorf("current: %v", err)
	}
	write("q.sql", "-- name: One\nSELECT 1;\n")
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("a query removed: %v", err)
	}
	write("q.sql", "-- name: One\nSELECT 1;\n-- name: Two\nSELECT 2;\n-- name: Dead\nSELECT 0;\n")
	_, src, _ = Generate(dir, strings.Fields("-pkg p -exclude other.sql *.sql"))
	write(out, string(src))
	if err := Check(dir); err == nil || !strings.Contains(err.Error(), "used by no code") || !strings.Contains(err.Error(), "Dead") {
		t.Errorf("a dead query: %v", err)
	}
	if _, _, err := Generate(dir, []string{"-pkg", "p"}); err == nil {
		t.Error("no files: no error")
	}
}
