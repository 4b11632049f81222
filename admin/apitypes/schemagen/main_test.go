package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestGeneratedDocsAreCurrent fails when docs/openapi.yaml or docs/cli.md
// is not what go generate ./admin/apitypes writes from job.go now (a job
// field added, renamed or documented without running it).
func TestGeneratedDocsAreCurrent(t *testing.T) {
	files, err := generate("../job.go", "../../../docs/openapi.yaml", "../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		have, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s is stale: run go generate ./admin/apitypes", path)
		}
	}
}

func TestReplaceBlock(t *testing.T) {
	doc := "a\n  # " + begin + " (x)\n  old\n  old\n  # " + end + "\nb\n"
	got, err := replaceBlock([]byte(doc), "  ", "new\nlines\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\n  # " + begin + " (x)\n  new\n  lines\n  # " + end + "\nb\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"a\nb\n", "# " + begin + "\nold\n"} {
		if _, err := replaceBlock([]byte(bad), "", "x\n"); err == nil || !strings.Contains(err.Error(), "no line") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
