package testenv_test

import (
	"os/exec"
	"strings"
	"testing"
)

// testSupport are the packages made of test helpers only, which may import
// the fixtures in their non-test files.
var testSupport = map[string]bool{
	"github.com/shardjob/shardjob/admin/store/storetest":      true, // runs a store test on both dialects
	"github.com/shardjob/shardjob/deploy/dev/testenv/cluster": true, // the harness of the tests that run the binaries as a cluster
}

// TestOnlyTestsImportTestenv: no production package of the module imports
// the test fixtures, testenv or a package under it such as the cluster
// harness (go list: the imports of every package's non-test files).
func TestOnlyTestsImportTestenv(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "github.com/shardjob/shardjob/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const fixtures = "github.com/shardjob/shardjob/deploy/dev/testenv"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ": ")
		if pkg == fixtures || testSupport[pkg] {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if imp == fixtures || strings.HasPrefix(imp, fixtures+"/") {
				t.Errorf("%s imports %s in a non-test file", pkg, imp)
			}
		}
	}
}
