package builtin_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/sdk"
)

// fakeDNS is a resolver hook: names map to fixed addresses, anything else
// does not exist. It counts lookups.
type fakeDNS struct {
	mu      sync.Mutex
	names   map[string][]string
	lookups map[string]int
}

func (d *fakeDNS) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lookups == nil {
		d.lookups = map[string]int{}
	}
	d.lookups[host]++
	var out []netip.Addr
	for _, a := range d.names[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if out == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

func (d *fakeDNS) count(host string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookups[host]
}

// countingServer is an httptest server that counts requests and answers
// with h.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func newHTTP(t *testing.T, cfg builtin.HTTPConfig) *builtin.HTTP {
	t.Helper()
	h, err := builtin.NewHTTP(cfg)
	require.NoError(t, err)
	return h
}

func port(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	_, p, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	return p
}

func TestHTTPRefusesLoopbackInEveryForm(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "secret") })
	p := port(t, srv)
	dns := &fakeDNS{names: map[string][]string{
		"localhost":     {"127.0.0.1", "::1"},
		"public.test":   {"93.184.215.14"},
		"mixed.test":    {"93.184.215.14", "127.0.0.1"},
		"mapped.test":   {"::ffff:127.0.0.1"},
		"internal.test": {"10.0.0.1"},
	}}
	hosts := []string{
		"127.0.0.1", "127.1", "127.0.1", "0x7f000001", "0x7f.1", "2130706433", "017700000001", "0177.0.0.1",
		"0.0.0.0", "0", "[::1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:127.0.0.1]",
		"localhost", "LOCALHOST.", "mapped.test", "mixed.test", "internal.test", "127.0.0.1.",
	}
	// With any public destination allowed, and with the names allowed by
	// name: a special address stays refused either way.
	for _, allow := range [][]string{nil, {"*"}, {"localhost", "mixed.test", "mapped.test", "internal.test", "*.test"}} {
		h := newHTTP(t, builtin.HTTPConfig{Allow: allow, Resolve: dns.resolve})
		for _, host := range hosts {
			t.Run(fmt.Sprintf("%v/%s", allow, host), func(t *testing.T) {
				task, _ := newTask(fmt.Sprintf(`{"url": "http://%s:%s/"}`, host, p))
				err := h.Handle(context.Background(), task)
				require.ErrorIs(t, err, builtin.ErrRefused)
				require.False(t, builtin.IsRetryable(err), "a refusal is final: %v", err)
			})
		}
	}
	require.Zero(t, hits.Load(), "no request reached the loopback server")
}

func TestHTTPRefusalMessagesSayWhy(t *testing.T) {
	t.Parallel()
	dns := &fakeDNS{names: map[string][]string{"internal.test": {"10.0.0.1"}, "cgnat.test": {"100.64.1.1"}, "ula.test": {"fd12::1"}}}
	h := newHTTP(t, builtin.HTTPConfig{Allow: []string{"*"}, Resolve: dns.resolve})
	for url, want := range map[string]string{
		"http://127.1/":             "127.0.0.1 is a loopback address",
		"http://2130706433/":        "127.0.0.1 is a loopback address",
		"http://internal.test/":     "internal.test (10.0.0.1) is a private address",
		"http://cgnat.test/":        "CGNAT",
		"http://ula.test/":          "unique-local",
		"http://169.254.169.254/":   "link-local",
		"http://[fe80::1%25eth0]/":  "IPv6 zone",
		"http://224.0.0.1/":         "multicast",
		"http://0.0.0.0/":           "unspecified",
		"http://[::ffff:10.1.2.3]/": "10.1.2.3 is a private address",
		"http://[64:ff9b::a00:1]/":  "NAT64",
	} {
		task, _ := newTask(`{"url": "` + url + `"}`)
		err := h.Handle(context.Background(), task)
		require.ErrorContains(t, err, want, url)
	}
	h = newHTTP(t, builtin.HTTPConfig{Resolve: dns.resolve})
	task, _ := newTask(`{"url": "http://93.184.215.14/"}`)
	require.ErrorContains(t, h.Handle(context.Background(), task), "allow-list (--http-allow) is empty")
	h = newHTTP(t, builtin.HTTPConfig{Allow: []string{"api.example.com"}, Resolve: dns.resolve})
	require.ErrorContains(t, h.Handle(context.Background(), task), "is not on the executor's http allow-list (--http-allow api.example.com)")
	task, _ = newTask(`{"url": "http://256.1.1.1/"}`)
	require.ErrorContains(t, h.Handle(context.Background(), task), "not a valid IPv4 address")
}

func TestHTTPAllowListedServerSucceeds(t *testing.T) {
	t.Parallel()
	type seen struct {
		method, path, body, ctype, slot, total string
	}
	got := make(chan seen, 1)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.RequestURI(), string(b), r.Header.Get("Content-Type"), r.Header.Get("X-Shardjob-Slot"), r.Header.Get("X-Shardjob-Total")}
		_, _ = io.WriteString(w, "accepted "+strings.Repeat("x", 2000))
	})
	dns := &fakeDNS{names: map[string][]string{"svc.test": {"127.0.0.1"}}}
	h := newHTTP(t, builtin.HTTPConfig{Allow: []string{"127.0.0.1/32"}, Resolve: dns.resolve, MaxBodyBytes: 100, LogBodyBytes: 20})
	task, log := newTask(`{"url": "http://svc.test:` + port(t, srv) + `/batch?slot={slot}", "method": "post",
		"headers": {"Content-Type": "application/json"}, "body": "{\"slot\": {slot}, \"total\": {total}}", "timeout_ms": 20000}`)
	require.NoError(t, h.Handle(context.Background(), task))
	s := <-got
	require.Equal(t, seen{"POST", "/batch?slot=3", `{"slot": 3, "total": 8}`, "application/json", "3", "8"}, s)
	processed, _, _, _ := task.Counts()
	require.EqualValues(t, 1, processed)
	require.Equal(t, 1, dns.count("svc.test"), "resolved once; the checked address is the one dialled")
	require.Contains(t, log.String(), `body="accepted xxxxxxxxxxx…"`, "a prefix of the body is logged")
	require.Contains(t, log.String(), "body_bytes=100 body_truncated=true")
}

func TestHTTPStatusClassesMapToOutcomes(t *testing.T) {
	t.Parallel()
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		var code int
		_, _ = fmt.Sscanf(r.URL.Path, "/%d", &code)
		w.WriteHeader(code)
	})
	h := newHTTP(t, builtin.HTTPConfig{Allow: []string{"127.0.0.1"}})
	const (
		ok    = "success"
		retry = "retry"
		fail  = "fail"
	)
	for _, tc := range []struct {
		status   int
		outcomes string
		want     string
	}{
		{200, ``, ok}, {204, ``, ok}, {301, `, "max_redirects": 0`, fail}, {400, ``, fail}, {404, ``, fail},
		{408, ``, retry}, {429, ``, retry}, {500, ``, retry}, {503, ``, retry},
		{404, `, "outcomes": {"404": "success"}`, ok},
		{503, `, "outcomes": {"5xx": "fail"}`, fail},
		{503, `, "outcomes": {"5xx": "fail", "503": "retry"}`, retry},
		{409, `, "outcomes": {"4xx": "retry"}`, retry},
		{200, `, "outcomes": {"2xx": "fail"}`, fail},
	} {
		task, _ := newTask(fmt.Sprintf(`{"url": "%s/%d"%s}`, srv.URL, tc.status, tc.outcomes))
		err := h.Handle(context.Background(), task)
		name := fmt.Sprintf("%d%s", tc.status, tc.outcomes)
		switch tc.want {
		case ok:
			require.NoError(t, err, name)
		case retry:
			require.Error(t, err, name)
			require.True(t, builtin.IsRetryable(err), "%s: %v", name, err)
			require.ErrorContains(t, err, fmt.Sprint(tc.status))
		case fail:
			require.Error(t, err, name)
			require.False(t, builtin.IsRetryable(err), "%s: %v", name, err)
			class, _ := classOf(err)
			require.Equal(t, "permanent", class, "%s: %v", name, err)
		}
	}
}

func TestHTTPRedirects(t *testing.T) {
	t.Parallel()
	var target atomic.Value
	srv, hits := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to":
			http.Redirect(w, r, target.Load().(string), http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/final":
			_, _ = io.WriteString(w, "landed")
		}
	})
	p := port(t, srv)
	dns := &fakeDNS{names: map[string][]string{"internal.test": {"10.0.0.1"}, "loop.test": {"127.0.0.1"}}}
	// Only this server's address is allowed: 127.0.0.1, not the rest of 127/8.
	h := newHTTP(t, builtin.HTTPConfig{Allow: []string{"127.0.0.1", "*"}, Resolve: dns.resolve})
	for _, to := range []string{
		"http://10.0.0.1/",
		"http://internal.test:" + p + "/",
		"http://127.0.0.2:" + p + "/final",
		"http://2130706434:" + p + "/final",
		"http://[::ffff:169.254.169.254]/latest/meta-data/",
		"http://169.254.169.254/latest/meta-data/",
	} {
		target.Store(to)
		task, _ := newTask(`{"url": "` + srv.URL + `/to"}`)
		err := h.Handle(context.Background(), task)
		require.ErrorIs(t, err, builtin.ErrRefused, to)
		require.False(t, builtin.IsRetryable(err), to)
	}
	target.Store("ftp://127.0.0.1/")
	task, _ := newTask(`{"url": "` + srv.URL + `/to"}`)
	require.ErrorContains(t, h.Handle(context.Background(), task), "only http and https")

	target.Store("http://loop.test:" + p + "/final")
	task, log := newTask(`{"url": "` + srv.URL + `/to"}`)
	require.NoError(t, h.Handle(context.Background(), task), "a redirect to an allowed address is followed")
	require.Contains(t, log.String(), "http redirect")

	before := hits.Load()
	task, _ = newTask(`{"url": "` + srv.URL + `/loop", "max_redirects": 3}`)
	err := h.Handle(context.Background(), task)
	require.ErrorContains(t, err, "more than 3 redirects")
	require.False(t, builtin.IsRetryable(err))
	require.EqualValues(t, 4, hits.Load()-before, "the first request and 3 hops")
}

func TestHTTPTimeoutIsRetryable(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := countingServer(t, func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	h := newHTTP(t, builtin.HTTPConfig{Allow: []string{"127.0.0.1"}})
	task, _ := newTask(`{"url": "` + srv.URL + `/slow", "timeout_ms": 50}`)
	err := h.Handle(context.Background(), task)
	require.True(t, builtin.IsRetryable(err), "%v", err)
	require.ErrorContains(t, err, "no answer within timeout 50ms")

	// Cancellation by the executor is not the handler's timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	task, _ = newTask(`{"url": "` + srv.URL + `/slow"}`)
	err = h.Handle(ctx, task)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, builtin.IsRetryable(err))
}

func TestHTTPConnectionErrorIsRetryable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	h := newHTTP(t, builtin.HTTPConfig{Allow: []string{"127.0.0.1"}})
	task, _ := newTask(`{"url": "http://` + addr + `/"}`)
	err = h.Handle(context.Background(), task)
	require.True(t, builtin.IsRetryable(err), "%v", err)
	require.False(t, errors.Is(err, builtin.ErrRefused))
}

func TestHTTPConfigErrors(t *testing.T) {
	t.Parallel()
	for entry, want := range map[string]string{
		"127.1":                "four decimal numbers",
		"10.0.0.0/33":          "not a CIDR",
		"http://a.example.com": "no scheme, port or path",
		"a.example.com:443":    "no scheme, port or path",
		"*.exa mple.com":       "want *.domain",
		"fe80::1%eth0":         "zones",
	} {
		_, err := builtin.NewHTTP(builtin.HTTPConfig{Allow: []string{entry}})
		require.ErrorContains(t, err, want, entry)
	}
}

// classOf is the error class the SDK reports for a handler's error, and
// the retry delay it asks for.
func classOf(err error) (class string, retryAfter time.Duration) {
	var pe *sdk.PermanentError
	if errors.As(err, &pe) {
		return "permanent", 0
	}
	var ra *sdk.RetryAfterError
	if errors.As(err, &ra) {
		return "retryable", ra.After
	}
	return "retryable", 0
}

// The error classes of the http handler against a real server
// (docs/failures.md): 4xx other than 408/425/429 permanent; 429 and 503
// retryable after their Retry-After (seconds or an HTTP date, capped at an
// hour); 5xx and a request timeout retryable.
func TestHTTPErrorClasses(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/429-seconds":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/429-date":
			w.Header().Set("Retry-After", time.Now().Add(2*time.Minute).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
		case "/503-long":
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/503-garbage":
			w.Header().Set("Retry-After", "soon")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/500-with-header":
			w.Header().Set("Retry-After", "30") // only 429 and 503 are honoured
			w.WriteHeader(http.StatusInternalServerError)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		default:
			var code int
			_, _ = fmt.Sscanf(r.URL.Path, "/%d", &code)
			w.WriteHeader(code)
		}
	})
	h := newHTTP(t, builtin.HTTPConfig{Allow: []string{"127.0.0.1"}})
	for _, tc := range []struct {
		path  string
		class string
		after time.Duration // -1: between 1 and 2 minutes
	}{
		{"/400", "permanent", 0}, {"/401", "permanent", 0}, {"/404", "permanent", 0}, {"/422", "permanent", 0},
		{"/408", "retryable", 0}, {"/425", "retryable", 0}, {"/429", "retryable", 0},
		{"/429-seconds", "retryable", 7 * time.Second},
		{"/429-date", "retryable", -1},
		{"/503-long", "retryable", time.Hour},
		{"/503-garbage", "retryable", 0},
		{"/500", "retryable", 0}, {"/502", "retryable", 0}, {"/503", "retryable", 0},
		{"/500-with-header", "retryable", 0},
	} {
		task, _ := newTask(`{"url": "` + srv.URL + tc.path + `"}`)
		err := h.Handle(context.Background(), task)
		require.Error(t, err, tc.path)
		class, after := classOf(err)
		require.Equal(t, tc.class, class, "%s: %v", tc.path, err)
		if tc.after == -1 {
			require.True(t, after > time.Minute && after <= 2*time.Minute, "%s: retry after %s", tc.path, after)
		} else {
			require.Equal(t, tc.after, after, tc.path)
		}
	}
	task, _ := newTask(`{"url": "` + srv.URL + `/slow", "timeout_ms": 50}`)
	err := h.Handle(context.Background(), task)
	class, _ := classOf(err)
	require.Equal(t, "retryable", class, "%v", err)
	require.ErrorContains(t, err, "no answer within timeout")
}
