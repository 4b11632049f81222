package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Environment variables read by the package. See the package documentation.
const (
	EnvMySQLDSN    = "SHARDJOB_TEST_MYSQL_DSN"
	EnvPostgresDSN = "SHARDJOB_TEST_POSTGRES_DSN"
	EnvZK          = "SHARDJOB_TEST_ZK"
	EnvKeep        = "SHARDJOB_TEST_KEEP"
	EnvZKClass     = "SHARDJOB_TEST_ZK_CLASSPATH"
	EnvCI          = "CI"
)

// registry is the process-wide state of the package: the processes it
// started (and may therefore stop), the temporary directory holding state
// shared by the tests of this process, and the teardown hooks run by Main.
//
// A test fixture package cannot avoid process-wide state: "one ZooKeeper per
// test process" is the point. All of it lives here, behind one mutex.
type registry struct {
	mu         sync.Mutex
	mainActive bool // Main/Wrap is running m.Run
	tornDown   bool // teardown ran; nothing may be started any more
	dir        string
	procs      map[*proc]struct{}
	ports      map[int]struct{}
	teardowns  []func() error
}

var reg = registry{
	procs: map[*proc]struct{}{},
	ports: map[int]struct{}{},
}

// TestingM is what Wrap returns; it matches goleak.TestingM.
type TestingM interface {
	Run() int
}

// Main runs the tests of the package, stops every process this package
// started, removes the temporary directories and exits. Call it from
// TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M) {
	os.Exit(Wrap(m).Run())
}

// Wrap returns m with a Run that also tears the fixtures down after the
// tests ran. Use it to combine the fixtures with goleak, which then checks
// for leaked goroutines after the servers were stopped:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }
func Wrap(m *testing.M) TestingM {
	return wrappedM{m: m}
}

type wrappedM struct{ m *testing.M }

func (w wrappedM) Run() int {
	reg.mu.Lock()
	reg.mainActive = true
	reg.mu.Unlock()

	code := w.m.Run()
	if err := teardown(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: teardown: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// teardown runs the teardown hooks (newest first), kills every process that
// is still registered and removes the process directory.
func teardown() error {
	reg.mu.Lock()
	reg.tornDown = true
	hooks := reg.teardowns
	reg.teardowns = nil
	reg.mu.Unlock()

	var errs []error
	for i := len(hooks) - 1; i >= 0; i-- {
		if err := hooks[i](); err != nil {
			errs = append(errs, err)
		}
	}

	reg.mu.Lock()
	left := make([]*proc, 0, len(reg.procs))
	for p := range reg.procs {
		left = append(left, p)
	}
	dir := reg.dir
	reg.mu.Unlock()

	for _, p := range left {
		// A test that started a process is responsible for it through
		// t.Cleanup; anything still running here escaped that.
		errs = append(errs, fmt.Errorf("%s (pid %d) was still running after the tests; killed it", p.name, p.pid))
		_ = p.kill(10 * time.Second)
	}
	if dir != "" && !keep() {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// onTeardown registers f to run when Main tears the fixtures down.
func onTeardown(f func() error) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.teardowns = append(reg.teardowns, f)
}

// requireMain stops the test when a fixture that outlives a single test is
// used without Main: nothing would stop the shared server otherwise.
func requireMain(t testing.TB, what string) {
	t.Helper()
	reg.mu.Lock()
	active, tornDown := reg.mainActive, reg.tornDown
	reg.mu.Unlock()
	if tornDown {
		t.Fatalf("testenv: %s called after the tests of this package ended", what)
	}
	if !active {
		t.Fatalf("testenv: %s shares state between the tests of this package and needs testenv.Main "+
			"to stop it when they end; add to a _test.go file of the package:\n\n"+
			"\tfunc TestMain(m *testing.M) { testenv.Main(m) }\n\n"+
			"(or goleak.VerifyTestMain(testenv.Wrap(m)) to also check for leaked goroutines)", what)
	}
}

// mainActive reports whether the tests run under Main or Wrap.
func mainActive() bool {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return reg.mainActive && !reg.tornDown
}

// processDir returns the temporary directory shared by the tests of this
// process, creating it on first use. It is removed by teardown.
func processDir() (string, error) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.tornDown {
		return "", errors.New("testenv: the tests of this package already ended")
	}
	if reg.dir == "" {
		dir, err := os.MkdirTemp("", "sjt-"+packageName()+"-")
		if err != nil {
			return "", fmt.Errorf("testenv: create process directory: %w", err)
		}
		reg.dir = dir
	}
	return reg.dir, nil
}

// packageName guesses the name of the package under test from the test
// binary ("schedule.test" -> "schedule"), lower-cased and reduced to
// [a-z0-9_] so that it can be part of a database name.
func packageName() string {
	name := filepath.Base(os.Args[0])
	name = strings.TrimSuffix(name, ".exe")
	name = strings.TrimSuffix(name, ".test")
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r == '-' || r == '.':
			b.WriteByte('_')
		}
		if b.Len() >= 20 {
			break
		}
	}
	if b.Len() == 0 {
		return "test"
	}
	return b.String()
}

// keep reports whether SHARDJOB_TEST_KEEP asks to keep databases and
// directories for inspection.
func keep() bool {
	return truthy(os.Getenv(EnvKeep))
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// lazy computes a value once and remembers the value or the error, so that
// every test after the first one fails fast with the same error. Unlike
// sync.OnceValues the function is given at the call site and may use the
// calling test for logging.
type lazy[T any] struct {
	mu   sync.Mutex
	done bool
	val  T
	err  error
}

func (l *lazy[T]) get(f func() (T, error)) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.val, l.err = f()
		l.done = true
	}
	return l.val, l.err
}
