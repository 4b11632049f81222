package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// chromiumCandidates are tried in order; the first is Debian's package.
var chromiumCandidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"}

// Chromium returns the path of a Chromium binary. When none is installed the
// test is skipped, except on CI (CI=true), where it fails: a browser test
// that silently skips in CI tests nothing.
//
// As root Chromium needs --no-sandbox; headless tests also want --headless.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, c := range chromiumCandidates {
		if path, err := exec.LookPath(c); err == nil {
			return path
		}
	}
	const msg = "testenv: Chromium not found (tried %v); run deploy/dev/ensure-deps.sh (Debian: apt-get install chromium)"
	if truthy(os.Getenv(EnvCI)) {
		t.Fatalf(msg+"; %s=%s, so this is an error, not a skip", chromiumCandidates, EnvCI, os.Getenv(EnvCI))
	}
	t.Skipf(msg, chromiumCandidates)
	return ""
}
