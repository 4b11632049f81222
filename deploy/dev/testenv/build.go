package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BuildBinary builds the main package pkg (an import path such as
// "github.com/shardjob/shardjob/admin/cmd/shardjob-admin", or a path relative
// to the package under test) once per test process and returns the path of
// the executable. When the test binary was built with -race, so is pkg.
// Build errors stop the test and every later test asking for the same pkg.
func BuildBinary(t testing.TB, pkg string) string {
	t.Helper()
	requireMain(t, "testenv.BuildBinary") // the binaries live until Main ends
	builds.mu.Lock()
	l, ok := builds.byPkg[pkg]
	if !ok {
		l = new(lazy[string])
		builds.byPkg[pkg] = l
	}
	builds.mu.Unlock()
	bin, err := l.get(func() (string, error) { return build(t, pkg) })
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

var builds = struct {
	mu    sync.Mutex
	byPkg map[string]*lazy[string]
}{byPkg: map[string]*lazy[string]{}}

func build(t testing.TB, pkg string) (string, error) {
	pdir, err := processDir()
	if err != nil {
		return "", err
	}
	goBin, err := findGo()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(pkg))
	name := path.Base(filepath.ToSlash(pkg)) + "-" + hex.EncodeToString(sum[:4])
	dir := filepath.Join(pdir, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, pkg)
	logPath := out + ".build.log"

	start := time.Now()
	p, err := startProc(procSpec{name: "go build " + pkg, path: goBin, args: args, logPath: logPath})
	if err != nil {
		return "", err
	}
	<-p.done // bounded by the test timeout
	if p.waitErr != nil {
		return "", fmt.Errorf("testenv: go %v failed (%w):\n%s", args, p.waitErr, p.out.tailText(tailLines))
	}
	t.Logf("testenv: built %s in %s", pkg, time.Since(start).Round(time.Millisecond))
	return out, nil
}

// findGo returns the go command: the one in PATH, else $GOROOT/bin/go.
func findGo() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("testenv: the go command is not in PATH and GOROOT is not set; BuildBinary needs it")
}
