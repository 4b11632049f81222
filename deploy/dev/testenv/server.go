package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// DBServer is the life cycle of a private database server (MariaDB,
// PostgreSQL), for failure tests that kill, stop and restart the database
// whatever its dialect.
type DBServer interface {
	Addr() string // 127.0.0.1:port
	PID() int     // of the running server, 0 when it is not running
	Stop() error
	Kill() error
	Start() error
}

var (
	_ DBServer = (*MariaDB)(nil)
	_ DBServer = (*PostgreSQL)(nil)
)

// StartError is returned (and reported through t.Fatal) when a server does
// not come up. It carries the end of the server's log.
type StartError struct {
	Server  string // "mariadbd", "zookeeper"
	Addr    string // host:port it was supposed to listen on
	LogPath string // the whole log
	Tail    string // its last lines
	Err     error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("testenv: %s on %s did not start: %v\n--- last lines of %s ---\n%s",
		e.Server, e.Addr, e.Err, e.LogPath, e.Tail)
}

func (e *StartError) Unwrap() error { return e.Err }

// addrInUse reports whether the server lost the race for its port (see
// FreePort), which is worth another try on a new port.
func (e *StartError) addrInUse() bool {
	return strings.Contains(e.Tail, "Address already in use")
}

// server is the start/stop/kill life cycle shared by MariaDB and ZK: one
// process at a time, restartable with the same arguments.
type server struct {
	name         string
	addr         func() string
	logPath      string
	startTimeout time.Duration
	stopTimeout  time.Duration
	spec         func() procSpec
	ready        func(ctx context.Context) error // one readiness probe

	mu   sync.Mutex // serializes start, stop and kill
	proc *proc
}

// start starts the server and waits until ready succeeds.
func (s *server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil && !s.proc.exited() {
		return fmt.Errorf("testenv: %s on %s is already running (pid %d)", s.name, s.addr(), s.proc.pid)
	}
	p, err := startProc(s.spec())
	if err != nil {
		return err
	}
	s.proc = p

	ctx, cancel := context.WithTimeout(context.Background(), s.startTimeout)
	defer cancel()
	fail := func(err error) error {
		return &StartError{Server: s.name, Addr: s.addr(), LogPath: s.logPath, Tail: p.out.tailText(tailLines), Err: err}
	}
	delay := 10 * time.Millisecond
	for {
		probeErr := s.ready(ctx)
		if probeErr == nil {
			return nil
		}
		timer := time.NewTimer(delay)
		select {
		case <-p.done:
			timer.Stop()
			return fail(fmt.Errorf("exited (%s) during startup; last readiness probe: %w", p.exitText(), probeErr))
		case <-ctx.Done():
			timer.Stop()
			killErr := p.kill(10 * time.Second)
			return fail(errors.Join(
				fmt.Errorf("not ready within %s, killed it; last readiness probe: %w", s.startTimeout, probeErr),
				killErr))
		case <-timer.C:
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// stop stops the server gracefully; it is a no-op when it is not running.
func (s *server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	return s.proc.stop(s.stopTimeout)
}

// kill sends SIGKILL and waits until the process was reaped.
func (s *server) kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.exited() {
		return fmt.Errorf("testenv: kill %s on %s: not running", s.name, s.addr())
	}
	return s.proc.kill(10 * time.Second)
}

// pid returns the pid of the running server or 0.
func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.exited() {
		return 0
	}
	return s.proc.pid
}

// tail returns the last lines of the current or last run.
func (s *server) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return "(not started)"
	}
	return s.proc.out.tailText(tailLines)
}

// startPrivate starts a private server of the calling test in a new
// directory (prefix: its name pattern, short, as a socket path below it must
// stay under 108 bytes): newServer starts it there. When the test ends the
// server is stopped, the end of its log is shown if the test failed, and the
// directory is removed (kept with SHARDJOB_TEST_KEEP=1). name is the
// server's name in messages ("MariaDB").
func startPrivate[T any](t testing.TB, name, prefix string, newServer func(dir string) (T, *server, error)) T {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatalf("testenv: create %s directory: %v", name, err)
	}
	v, srv, err := newServer(dir)
	t.Cleanup(func() {
		if srv != nil {
			if err := srv.stop(); err != nil {
				t.Errorf("testenv: stop %s: %v", name, err)
			}
			if t.Failed() {
				t.Logf("testenv: last lines of %s on %s (log %s):\n%s", name, srv.addr(), srv.logPath, srv.tail())
			}
		}
		if keep() {
			t.Logf("testenv: %s=1: keeping %s directory %s", EnvKeep, name, dir)
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("testenv: remove %s directory: %v", name, err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
