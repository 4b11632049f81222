package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// waitTimeout bounds every wait in these tests; it only matters when a test
// fails (or the machine is very slow).
const waitTimeout = 15 * time.Second

// fakeAdmin implements the admin side of the protocol on an httptest.Server,
// verifying the signature of every request, recording what it receives, and
// answering with what the test tells it to.
type fakeAdmin struct {
	t        *testing.T
	secret   string
	srv      *httptest.Server
	verifier *protocol.Verifier
	pushHTTP *http.Client

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every event
	down       bool          // answer every request 503
	failResult bool          // answer results requests 503
	heartbeats []protocol.HeartbeatRequest
	calls      map[string]int // path → requests received (including refused ones)
	results    map[int64][]protocol.SlotResult
	batches    [][]protocol.SlotResult
	events     []string // "heartbeat", "heartbeat:draining", "results:<token>…", "deregister"
	deregs     []string
	authErrors []error
	logs       []protocol.LogsRequest // log batches received (logship_test.go)
	failLogs   bool                   // answer logs requests 503
	logGate    chan struct{}          // when set, logs requests wait for it to close
	frozen     chan struct{}          // when set, every request waits for it to close (a SIGSTOPped admin)

	// answers
	assign     []protocol.RunAssignment // put in every heartbeat response
	assignTTL  time.Duration            // their validity after the response is written (negative: expired); 0: no bound
	cancel     []int64                  // put in every heartbeat response
	reject     map[int64]bool           // tokens whose results are rejected as stale
	admins     []string                 // announced replicas
	intervalMS int64
}

func newFakeAdmin(t *testing.T, secret string) *fakeAdmin {
	t.Helper()
	f := &fakeAdmin{
		t:        t,
		secret:   secret,
		verifier: protocol.NewVerifier(secret, 0, nil),
		pushHTTP: &http.Client{Timeout: waitTimeout, Transport: &http.Transport{}},
		changed:  make(chan struct{}),
		calls:    map[string]int{},
		results:  map[int64][]protocol.SlotResult{},
		reject:   map[int64]bool{},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.srv.Close()
		f.pushHTTP.CloseIdleConnections()
	})
	return f
}

func (f *fakeAdmin) URL() string { return f.srv.URL }

func (f *fakeAdmin) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// update changes the fake's answers under its lock.
func (f *fakeAdmin) update(fn func(f *fakeAdmin)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
	f.notifyLocked()
}

// waitFor waits until cond (called under the fake's lock) holds.
func (f *fakeAdmin) waitFor(t *testing.T, what string, cond func(f *fakeAdmin) bool) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		ok, ch := cond(f), f.changed
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			f.mu.Lock()
			defer f.mu.Unlock()
			t.Fatalf("timed out after %s waiting for %s; events %v", waitTimeout, what, f.events)
		}
	}
}

// waitResult waits for the first result of token and returns it.
func (f *fakeAdmin) waitResult(t *testing.T, token int64) protocol.SlotResult {
	t.Helper()
	var r protocol.SlotResult
	f.waitFor(t, "the result of a token", func(f *fakeAdmin) bool {
		if rs := f.results[token]; len(rs) > 0 {
			r = rs[0]
			return true
		}
		return false
	})
	return r
}

func (f *fakeAdmin) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	f.mu.Lock()
	gates := []chan struct{}{f.frozen}
	if r.URL.Path == protocol.PathLogs {
		gates = append(gates, f.logGate)
	}
	f.mu.Unlock()
	for _, gate := range gates { // a slow admin: wait outside the lock
		if gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.notifyLocked()
	f.calls[r.URL.Path]++
	if err := f.verifier.Verify(r.Method, r.URL.Path, r.Header, body); err != nil {
		f.authErrors = append(f.authErrors, err)
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	if f.down || (f.failResult && r.URL.Path == protocol.PathResults) || (f.failLogs && r.URL.Path == protocol.PathLogs) {
		writeError(w, http.StatusServiceUnavailable, "fake admin is down")
		return
	}
	switch r.URL.Path {
	case protocol.PathHeartbeat:
		var req protocol.HeartbeatRequest
		if !decode(w, body, &req) {
			return
		}
		f.heartbeats = append(f.heartbeats, req)
		ev := "heartbeat"
		if req.Draining {
			ev += ":draining"
		}
		f.events = append(f.events, ev)
		resp := protocol.HeartbeatResponse{
			ExecutorID:  42,
			IntervalMS:  f.intervalMS,
			Assignments: f.assign,
			Cancel:      f.cancel,
			Admins:      f.admins,
		}
		if f.assignTTL != 0 {
			resp.AssignmentsValidUntilMS = time.Now().Add(f.assignTTL).UnixMilli()
		}
		writeJSON(w, http.StatusOK, resp)
	case protocol.PathResults:
		var req protocol.ResultsRequest
		if !decode(w, body, &req) {
			return
		}
		f.batches = append(f.batches, req.Results)
		var resp protocol.ResultsResponse
		ev := "results"
		for _, res := range req.Results {
			f.results[res.Token] = append(f.results[res.Token], res)
			if f.reject[res.Token] {
				resp.Rejected = append(resp.Rejected, res.Token)
			} else {
				resp.Accepted = append(resp.Accepted, res.Token)
			}
			ev += ":" + itoa(res.Token)
		}
		f.events = append(f.events, ev)
		writeJSON(w, http.StatusOK, resp)
	case protocol.PathLogs:
		var req protocol.LogsRequest
		if !decode(w, body, &req) {
			return
		}
		f.logs = append(f.logs, req)
		writeJSON(w, http.StatusOK, protocol.LogsResponse{Stored: len(req.Lines)})
	case protocol.PathDeregister:
		var req protocol.DeregisterRequest
		if !decode(w, body, &req) {
			return
		}
		f.deregs = append(f.deregs, req.InstanceID)
		f.events = append(f.events, "deregister")
		writeJSON(w, http.StatusOK, struct{}{})
	default:
		writeError(w, http.StatusNotFound, "fake admin: no "+r.URL.Path)
	}
}

func decode(w http.ResponseWriter, body []byte, v any) bool {
	if err := json.Unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return false
	}
	return true
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// push sends a signed request to the executor at base and decodes a 2xx
// answer into out. It returns the status code and the raw body.
func (f *fakeAdmin) push(t *testing.T, base, path string, in, out any) (int, []byte) {
	t.Helper()
	body := mustJSON(in)
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
	require.NoError(t, err)
	protocol.Sign(req, f.secret, body, time.Now())
	return f.do(t, req, out)
}

func (f *fakeAdmin) do(t *testing.T, req *http.Request, out any) (int, []byte) {
	t.Helper()
	resp, err := f.pushHTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil && resp.StatusCode/100 == 2 {
		require.NoError(t, json.Unmarshal(data, out), string(data))
	}
	return resp.StatusCode, data
}

// assignPush pushes as and returns the accepted tokens.
func (f *fakeAdmin) assignPush(t *testing.T, e *Executor, as ...protocol.RunAssignment) []int64 {
	t.Helper()
	var resp protocol.AssignResponse
	code, body := f.push(t, e.Addr(), protocol.PathAssign, protocol.AssignRequest{Assignments: as}, &resp)
	require.Equal(t, http.StatusOK, code, string(body))
	return resp.Accepted
}

// lastHeartbeat returns the latest heartbeat; call it under f.mu.
func (f *fakeAdmin) lastHeartbeat() (protocol.HeartbeatRequest, bool) {
	if len(f.heartbeats) == 0 {
		return protocol.HeartbeatRequest{}, false
	}
	return f.heartbeats[len(f.heartbeats)-1], true
}

func (f *fakeAdmin) heartbeatCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.heartbeats)
}

func (f *fakeAdmin) eventsCopy() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// run builds a RunAssignment of handler with one slot per token (slot i gets
// tokens[i]) out of len(tokens) slots.
func run(handler string, tokens ...int64) protocol.RunAssignment {
	ra := protocol.RunAssignment{
		RunID: 7, JobID: 3, JobName: "job-" + handler, Handler: handler,
		ScheduledAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli(),
		Params:      `{"p":1}`, SlotCount: len(tokens),
	}
	for i, tok := range tokens {
		ra.Attempts = append(ra.Attempts, protocol.SlotAttempt{Slot: i, Token: tok, Attempt: 1, Param: "param-" + itoa(int64(i))})
	}
	return ra
}

// deadURL returns a loopback URL nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	u := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	return u
}

// testSecret is a fixed secret for tests.
const testSecret = "test-secret-0123456789abcdef"

// newExecutor builds and starts an executor talking to admins, with short
// intervals, the handlers given, and cfg tweaks applied; it is stopped when
// the test ends.
func newExecutor(t *testing.T, admins []string, handlers map[string]Handler, tweak func(*Config)) *Executor {
	t.Helper()
	e := buildExecutor(t, admins, handlers, tweak)
	require.NoError(t, e.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return e
}

func buildExecutor(t *testing.T, admins []string, handlers map[string]Handler, tweak func(*Config)) *Executor {
	t.Helper()
	cfg := Config{
		App:               "billing",
		Admins:            admins,
		Secret:            testSecret,
		InstanceID:        "exec-" + t.Name(),
		HeartbeatInterval: 20 * time.Millisecond,
		DrainTimeout:      5 * time.Second,
		Version:           "v1.2.3",
		Logger:            testLogger(t),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	e, err := New(cfg)
	require.NoError(t, err)
	e.backoffBase, e.backoffMax = 5*time.Millisecond, 50*time.Millisecond
	e.flushInterval = 20 * time.Millisecond
	if e.logs != nil {
		e.logs.flushInterval = 20 * time.Millisecond
	}
	for name, h := range handlers {
		e.Handle(name, h)
	}
	return e
}
