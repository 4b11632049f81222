package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// PromtoolCheck runs `promtool check metrics` on a scraped Prometheus
// exposition and fails t with promtool's complaints. A missing promtool
// skips the check locally and fails it under CI=true
// (deploy/dev/ensure-deps.sh installs Debian's prometheus package).
func PromtoolCheck(t testing.TB, text []byte) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if truthy(os.Getenv(EnvCI)) {
			t.Fatalf("promtool not found (CI=true): run deploy/dev/ensure-deps.sh, which installs Debian's prometheus package")
		}
		t.Skip("promtool not found: run deploy/dev/ensure-deps.sh (Debian package prometheus)")
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
