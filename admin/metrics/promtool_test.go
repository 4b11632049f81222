package metrics_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// promtoolCheck runs `promtool check metrics` on a scraped exposition. A
// missing promtool skips the check locally and fails it under CI=true
// (deploy/dev/ensure-deps.sh installs it from Debian's prometheus package).
func promtoolCheck(t *testing.T, text []byte) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("promtool not found (CI=true): run deploy/dev/ensure-deps.sh, which installs Debian's prometheus package")
		}
		t.Skip("promtool not found: run deploy/dev/ensure-deps.sh (Debian package prometheus) to check the exposition format")
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
