package testenv

import (
	"fmt"
	"net"
	"testing"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that no other caller in this process got before. Another process may still
// take it before the caller binds it; the servers of this package retry on a
// new port when that happens.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func freePort() (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("testenv: find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		reg.mu.Lock()
		_, taken := reg.ports[port]
		reg.ports[port] = struct{}{}
		reg.mu.Unlock()
		if !taken {
			return port, nil
		}
	}
	return 0, fmt.Errorf("testenv: find a free port: the kernel kept returning ports already handed out")
}

// WaitFor calls cond until it returns true, backing off from 5ms to 250ms
// between calls. If timeout passes first it stops the test with msg and the
// last error cond returned (errors are treated as "not yet"). Call it from
// the test goroutine.
func WaitFor(t testing.TB, timeout time.Duration, cond func() (bool, error), msg string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	delay := 5 * time.Millisecond
	var lastErr error
	for attempt := 1; ; attempt++ {
		ok, err := cond()
		if ok {
			return
		}
		if err != nil {
			lastErr = err
		}
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("%s: condition still false after %s (%d attempts); last error: %v", msg, timeout, attempt, lastErr)
		}
		time.Sleep(min(delay, left))
		delay = min(2*delay, 250*time.Millisecond)
	}
}
