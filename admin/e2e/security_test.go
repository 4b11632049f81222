package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// loginMax is how many failed logins per user name and client address the
// admin allows within a minute.
const loginMax = 5

// startLoneAdmin runs one `shardjob-admin serve` with args on a database of
// its own and the in-process coordinator, and returns a client whose
// requests may wait for bcrypt in a race build on a busy machine, and the
// generated password of the user admin.
func startLoneAdmin(t *testing.T, args ...string) (*cli.Client, string) {
	t.Helper()
	p := serveAdmin(t, protocol.NewSecret(), append([]string{"--db-driver", "mysql", "--db-dsn", testenv.MySQL(t)}, args...)...)
	c := harness.NewClient(p.URL)
	c.HTTP = &http.Client{Timeout: 2 * time.Minute}
	return c, p.Password(t)
}

// tryLogin logs in with extra headers and returns the status.
func tryLogin(c *cli.Client, user, password string, header http.Header) (int, error) {
	body, err := json.Marshal(map[string]string{"username": user, "password": password})
	if err != nil {
		return 0, err
	}
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	res, err := c.Send(context.Background(), http.MethodPost, "/api/v1/login", bytes.NewReader(body), h)
	if err != nil {
		return 0, err
	}
	return res.Status, nil
}

func requireLogin(t *testing.T, c *cli.Client, password string, header http.Header, want int, msg string) {
	t.Helper()
	code, err := tryLogin(c, "admin", password, header)
	require.NoError(t, err)
	require.Equal(t, want, code, msg)
}

// TestLoginThrottleIgnoresSpoofedClientAddresses: by default the admin
// trusts no proxy, so a client that names another address in
// X-Forwarded-For or X-Real-IP on every attempt is still counted as
// itself. (gin believed both headers from anyone, which made the throttle
// useless.)
func TestLoginThrottleIgnoresSpoofedClientAddresses(t *testing.T) {
	t.Parallel()
	c, _ := startLoneAdmin(t)
	for i := 1; i <= loginMax+2; i++ {
		spoofed := http.Header{"X-Forwarded-For": {fmt.Sprintf("203.0.113.%d", i)}, "X-Real-Ip": {fmt.Sprintf("198.51.100.%d", i)}}
		want := http.StatusUnauthorized
		if i > loginMax {
			want = http.StatusTooManyRequests
		}
		requireLogin(t, c, "wrong password", spoofed, want, fmt.Sprintf("attempt %d, claiming to come from 203.0.113.%d", i, i))
	}
}

// TestLoginThrottleBelievesTrustedProxies: with --trusted-proxies the
// client address of a request from the proxy is the last address the proxy
// appended to X-Forwarded-For; what a client wrote into the header itself
// comes before it and changes nothing.
func TestLoginThrottleBelievesTrustedProxies(t *testing.T) {
	t.Parallel()
	c, _ := startLoneAdmin(t, "--trusted-proxies", "127.0.0.1/32")
	behind := func(xff string) http.Header { return http.Header{"X-Forwarded-For": {xff}} }
	for i := range loginMax {
		requireLogin(t, c, "wrong password", behind("203.0.113.7"), http.StatusUnauthorized, fmt.Sprintf("attempt %d of client 203.0.113.7", i+1))
	}
	requireLogin(t, c, "wrong password", behind("203.0.113.7"), http.StatusTooManyRequests, "client 203.0.113.7 is throttled")
	requireLogin(t, c, "wrong password", behind("198.51.100.1, 203.0.113.7"), http.StatusTooManyRequests,
		"a forged address before the one the proxy appended does not help")
	requireLogin(t, c, "wrong password", http.Header{"X-Forwarded-For": {"203.0.113.7"}, "X-Real-Ip": {"198.51.100.2"}}, http.StatusTooManyRequests,
		"X-Real-IP is not believed, even from a trusted proxy")
	requireLogin(t, c, "wrong password", behind("203.0.113.8"), http.StatusUnauthorized, "another client behind the proxy has its own count")
}

// TestLoginThrottleHoldsUnderParallelAttempts: 30 wrong logins sent at
// once; each attempt is counted before its password is checked, so exactly
// as many as the throttle allows are checked (401) and the rest refused
// (429). (Counting after bcrypt let all 30 through.)
func TestLoginThrottleHoldsUnderParallelAttempts(t *testing.T) {
	t.Parallel()
	c, password := startLoneAdmin(t)
	const attempts = 30
	type answer struct {
		code int
		err  error
	}
	answers := make(chan answer, attempts)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Go(func() {
			<-start
			code, err := tryLogin(c, "admin", "wrong password "+strconv.Itoa(i), nil)
			answers <- answer{code, err}
		})
	}
	close(start)
	wg.Wait()
	close(answers)
	counts := map[int]int{}
	for a := range answers {
		require.NoError(t, a.err)
		counts[a.code]++
	}
	require.Equal(t, map[int]int{http.StatusUnauthorized: loginMax, http.StatusTooManyRequests: attempts - loginMax}, counts)
	requireLogin(t, c, password, nil, http.StatusTooManyRequests, "still throttled: even the right password is refused")
}

// rawConn is a client connection to the admin from a chosen local address,
// for what net/http's client hides: keep-alives, slow bodies, refusals.
type rawConn struct {
	net.Conn
	br *bufio.Reader
}

func dialFrom(addr, local string) (*rawConn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &rawConn{Conn: c, br: bufio.NewReader(c)}, nil
}

func mustDial(t *testing.T, addr, local string) *rawConn {
	t.Helper()
	c, err := dialFrom(addr, local)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// get sends GET path on the connection (keep-alive) and returns the status
// and the body.
func (c *rawConn) get(path string) (int, string, error) {
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: admin\r\n\r\n"); err != nil {
		return 0, "", err
	}
	return c.response()
}

func (c *rawConn) response() (int, string, error) {
	if err := c.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return 0, "", err
	}
	res, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, string(body), err
}

func (c *rawConn) requireGet(t *testing.T, path string, want int, msg string) {
	t.Helper()
	code, body, err := c.get(path)
	require.NoError(t, err, msg)
	require.Equal(t, want, code, "%s: %s", msg, body)
}

// waitClosed reads until the admin closes the connection and fails when it
// is still open after d. It returns what was read.
func (c *rawConn) waitClosed(t *testing.T, d time.Duration) string {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(d)))
	data, err := io.ReadAll(c.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the admin kept the connection open for %s (read so far: %q)", d, data)
	}
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("reading until the admin closes the connection: %v", err)
	}
	return string(data)
}

// TestAdminClosesSlowAndIdleConnections: a request whose body trickles in
// is cut off at --read-timeout, and a keep-alive connection without a next
// request is closed at --idle-timeout. (Without these timeouts both stayed
// open as long as the client liked.)
func TestAdminClosesSlowAndIdleConnections(t *testing.T) {
	t.Parallel()
	c, _ := startLoneAdmin(t, "--read-timeout", "1s", "--idle-timeout", "1s")
	addr := strings.TrimPrefix(c.Base, "http://")

	t.Run("body trickling in", func(t *testing.T) {
		conn := mustDial(t, addr, "127.0.0.1")
		_, err := io.WriteString(conn, "POST /api/v1/login HTTP/1.1\r\nHost: admin\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
		require.NoError(t, err)
		// The attacker: white space (valid inside JSON) every 100ms, for as
		// long as the admin takes it.
		stop := make(chan struct{})
		var trickler sync.WaitGroup
		trickler.Go(func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := io.WriteString(conn, " "); err != nil {
						return
					}
				}
			}
		})
		got := conn.waitClosed(t, 30*time.Second)
		close(stop)
		trickler.Wait()
		if got != "" { // the answer may be lost to a reset while the trickler writes
			require.True(t, strings.HasPrefix(got, "HTTP/1.1 408 "), "answer: %q", got)
			require.Contains(t, got, "read timeout")
		}
	})

	t.Run("idle keep-alive", func(t *testing.T) {
		conn := mustDial(t, addr, "127.0.0.1")
		conn.requireGet(t, "/healthz", http.StatusOK, "first request")
		require.Empty(t, conn.waitClosed(t, 30*time.Second), "closed without another answer")
	})
}

// TestAdminCapsConnectionsPerClientAddress: with --max-conns-per-ip 4 the
// fifth open connection from one address is answered 429 and closed, while
// the four keep working, another address connects as usual, and a closed
// connection frees its place.
func TestAdminCapsConnectionsPerClientAddress(t *testing.T) {
	t.Parallel()
	const maxConns = 4
	c, _ := startLoneAdmin(t, "--max-conns-per-ip", strconv.Itoa(maxConns))
	addr := strings.TrimPrefix(c.Base, "http://")
	held := make([]*rawConn, maxConns)
	for i := range held {
		held[i] = mustDial(t, addr, "127.0.0.1")
		held[i].requireGet(t, "/healthz", http.StatusOK, fmt.Sprintf("connection %d", i+1))
	}

	extra := mustDial(t, addr, "127.0.0.1")
	code, body, err := extra.response() // answered before it sends anything
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, code, body)
	require.Contains(t, body, "at most 4, --max-conns-per-ip")
	extra.waitClosed(t, 30*time.Second)

	for i, h := range held {
		h.requireGet(t, "/healthz", http.StatusOK, fmt.Sprintf("held connection %d still works", i+1))
	}
	mustDial(t, addr, "127.0.0.2").requireGet(t, "/healthz", http.StatusOK, "another client address is not affected")

	require.NoError(t, held[0].Close())
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		conn, err := dialFrom(addr, "127.0.0.1")
		if err != nil {
			return false, err
		}
		defer conn.Close()
		code, _, err := conn.get("/healthz")
		return code == http.StatusOK, err
	}, "a connection from 127.0.0.1 after one of the held ones was closed")
}
