package coord

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestMain stops the ZooKeeper servers after the tests, then checks that
// no goroutine leaked.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// testLogger logs to t until the test ended (the zk client may log from its
// goroutines until Close returned). SHARDJOB_TEST_DEBUG=1 adds Debug.
func testLogger(t testing.TB) *slog.Logger {
	w := &tWriter{t: t}
	t.Cleanup(w.stop) // registered first: runs last
	level := slog.LevelInfo
	if os.Getenv("SHARDJOB_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

type tWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *tWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *tWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// term is one term seen by a recorder.
type term struct {
	id         string
	epoch      int64
	start, end time.Time
	cause      error
	overlapped []string // other replicas leading when this term started
}

// recorder records the terms of the replicas of a test and signals every
// change.
type recorder struct {
	mu      sync.Mutex
	active  map[string]*term
	terms   []*term
	changed chan struct{}
}

func newRecorder() *recorder {
	return &recorder{active: map[string]*term{}, changed: make(chan struct{})}
}

// lead returns a lead func for replica id that holds its term until
// termCtx ends.
func (r *recorder) lead(id string) func(context.Context, int64) {
	return func(ctx context.Context, epoch int64) {
		r.mu.Lock()
		tm := &term{id: id, epoch: epoch, start: time.Now()}
		for other := range r.active {
			tm.overlapped = append(tm.overlapped, other)
		}
		r.active[id] = tm
		r.terms = append(r.terms, tm)
		r.signalLocked()
		r.mu.Unlock()

		<-ctx.Done()

		r.mu.Lock()
		tm.end, tm.cause = time.Now(), context.Cause(ctx)
		delete(r.active, id)
		r.signalLocked()
		r.mu.Unlock()
	}
}

func (r *recorder) signalLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// await waits until cond, evaluated under the lock after every change, is
// true, and fails the test after timeout.
func (r *recorder) await(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok, changed := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("%s: not within %s; terms so far:\n%s", what, timeout, r.String())
		}
	}
}

// awaitLeader waits until some replica leads and returns its term.
func (r *recorder) awaitLeader(t testing.TB, timeout time.Duration, notID string, after int64) *term {
	t.Helper()
	var got *term
	r.await(t, timeout, fmt.Sprintf("a leader other than %q with an epoch above %d", notID, after), func() bool {
		for id, tm := range r.active {
			if id != notID && tm.epoch > after {
				got = tm
				return true
			}
		}
		return false
	})
	return got
}

// termOf returns a copy of the latest term of id.
func (r *recorder) termOf(id string) term {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.terms) - 1; i >= 0; i-- {
		if r.terms[i].id == id {
			return *r.terms[i]
		}
	}
	return term{}
}

func (r *recorder) all() []term {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]term, len(r.terms))
	for i, tm := range r.terms {
		out[i] = *tm
	}
	return out
}

func (r *recorder) String() string {
	var b strings.Builder
	for _, tm := range r.all() {
		fmt.Fprintf(&b, "  %s epoch=%d start=%s end=%s cause=%v overlapped=%v\n", tm.id, tm.epoch,
			tm.start.Format("15:04:05.000"), tm.end.Format("15:04:05.000"), tm.cause, tm.overlapped)
	}
	return b.String()
}

// requireIncreasingEpochs checks that successive terms have strictly
// increasing epochs, and, if exclusive, that no term started while another
// was running.
func requireIncreasingEpochs(t testing.TB, r *recorder, exclusive bool) {
	t.Helper()
	terms := r.all()
	for i, tm := range terms {
		if i > 0 {
			require.Greater(t, tm.epoch, terms[i-1].epoch, "epochs must strictly increase:\n%s", r)
		}
		if exclusive {
			require.Empty(t, tm.overlapped, "two leaders at once:\n%s", r)
		}
	}
}

// replica is an elector campaigning in its own goroutine.
type replica struct {
	id     string
	e      *ZKElector
	cancel context.CancelFunc
	done   chan error // receives Lead's result
	once   sync.Once
	result error
}

// zkConfig returns a config for a replica under root on server.
func zkConfig(t testing.TB, server, root, id string) ZKConfig {
	return ZKConfig{
		Servers: []string{server},
		Root:    root,
		ID:      id,
		Address: "http://" + id + ".test:8080",
		// Long enough not to expire when a loaded machine starves the test
		// for a few seconds; tests of the timing set their own.
		SessionTimeout: 10 * time.Second,
		ConnectTimeout: 20 * time.Second,
		Logger:         testLogger(t).With("test", t.Name()),
	}
}

// startReplica creates an elector and runs Lead with rec's lead func. It
// is stopped when the test ends.
func startReplica(t testing.TB, cfg ZKConfig, rec *recorder) *replica {
	t.Helper()
	e, err := NewZK(cfg)
	require.NoError(t, err)
	return runReplica(t, e, rec)
}

func runReplica(t testing.TB, e *ZKElector, rec *recorder) *replica {
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{id: e.cfg.ID, e: e, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- e.Lead(ctx, rec.lead(r.id)) }()
	t.Cleanup(func() { _ = r.stop(t) }) // the tests that care check stop's result themselves
	return r
}

// stop closes the elector and returns what Lead returned.
func (r *replica) stop(t testing.TB) error {
	t.Helper()
	r.once.Do(func() {
		require.NoError(t, r.e.Close())
		select {
		case r.result = <-r.done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: Lead did not return after Close", r.id)
		}
		r.cancel()
	})
	return r.result
}

// candidates returns the election nodes under root, lowest first, with
// the ID stored in each.
func candidates(t testing.TB, conn *zk.Conn, root string) (names, ids []string) {
	t.Helper()
	children, _, err := conn.Children(root + "/election")
	require.NoError(t, err)
	for _, c := range sortCandidates(children) {
		data, _, err := conn.Get(root + "/election/" + c.name)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		require.NoError(t, err)
		var cd candidateData
		require.NoError(t, json.Unmarshal(data, &cd))
		names = append(names, root+"/election/"+c.name)
		ids = append(ids, cd.ID)
	}
	return names, ids
}

// adminConn is a plain client for inspecting and disturbing the tree.
func adminConn(t testing.TB, server string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{server}, 10*time.Second, zk.WithLogInfo(false),
		zk.WithLogger(zkLogger{testLogger(t)}))
	require.NoError(t, err)
	t.Cleanup(func() {
		conn.Close()
		for range events { //nolint:revive // wait for the client loop to end
		}
	})
	return conn
}

// watchesByPath asks the server which sessions watch which path under
// prefix (four-letter word wchp).
func watchesByPath(t testing.TB, server, prefix string) map[string][]int64 {
	t.Helper()
	conn, err := net.DialTimeout("tcp", server, 2*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
	_, err = io.WriteString(conn, "wchp")
	require.NoError(t, err)
	out, err := io.ReadAll(conn)
	require.NoError(t, err)
	got := map[string][]int64{}
	cur := ""
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "/"):
			cur = strings.TrimSpace(line)
		case strings.HasPrefix(strings.TrimSpace(line), "0x") && strings.HasPrefix(cur, prefix):
			var id int64
			_, err := fmt.Sscanf(strings.TrimSpace(line), "0x%x", &id)
			require.NoError(t, err, "wchp line %q", line)
			got[cur] = append(got[cur], id)
		}
	}
	return got
}

// sessionSpy is a dialer that remembers the session id and password of
// the last ConnectResponse, can cut the connections it made, and can send
// new ones elsewhere.
type sessionSpy struct {
	mu       sync.Mutex
	id       int64
	passwd   []byte
	conns    []net.Conn
	blocked  bool
	diverted string // dial this address instead, if set
}

var errPartitioned = errors.New("test: partitioned from zookeeper")

func (s *sessionSpy) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	s.mu.Lock()
	blocked, diverted := s.blocked, s.diverted
	s.mu.Unlock()
	if blocked {
		return nil, errPartitioned
	}
	if diverted != "" {
		addr = diverted
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	return &spyConn{Conn: c, s: s}, nil
}

// session returns the id and password of the current session.
func (s *sessionSpy) session() (int64, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, s.passwd
}

// partition makes new connections fail (true) or work again (false).
func (s *sessionSpy) partition(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocked = on
}

// divert sends new connections to addr instead of the server asked for;
// "" ends that.
func (s *sessionSpy) divert(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.diverted = addr
}

// cut closes every connection made so far: the client sees EOF and
// reconnects.
func (s *sessionSpy) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

type spyConn struct {
	net.Conn
	s    *sessionSpy
	buf  []byte
	done bool
}

// Read parses the ConnectResponse: int32 length, int32 protocol version,
// int32 timeout, int64 session id, int32 password length, password.
func (c *spyConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.buf = append(c.buf, p[:n]...)
		if len(c.buf) >= 4 && len(c.buf) >= 4+int(binary.BigEndian.Uint32(c.buf)) {
			c.done = true
			b := c.buf[4:]
			if len(b) >= 20 {
				id := int64(binary.BigEndian.Uint64(b[8:16]))
				plen := int(binary.BigEndian.Uint32(b[16:20]))
				if id != 0 && plen >= 0 && len(b) >= 20+plen {
					c.s.mu.Lock()
					c.s.id, c.s.passwd = id, append([]byte(nil), b[20:20+plen]...)
					c.s.mu.Unlock()
				}
			}
			c.buf = nil
		}
	}
	return n, err
}

// muteServer accepts connections and never answers on them, like a
// ZooKeeper 3.8 that got the connection while it was loading its database
// (its close of the connection fails, ZOOKEEPER-5051), or a wedged server.
type muteServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newMuteServer(t testing.TB) *muteServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	m := &muteServer{ln: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			m.mu.Lock()
			m.conns = append(m.conns, c)
			m.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, c := range m.conns {
			c.Close()
		}
	})
	return m
}

func (m *muteServer) addr() string { return m.ln.Addr().String() }

// accepted returns how many connections it accepted so far.
func (m *muteServer) accepted() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.conns)
}

// closeSession attaches to session id with its password on a connection
// of its own and closes the session, the way a second client with the same
// credentials would: the server deletes its ephemeral nodes, and the
// owner's next reconnection is answered with "session expired".
func closeSession(t testing.TB, server string, id int64, passwd []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", server, 2*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))

	// ConnectRequest: protocol version, last zxid seen, timeout, session id, password.
	req := binary.BigEndian.AppendUint32(nil, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, 10000)
	req = binary.BigEndian.AppendUint64(req, uint64(id))
	req = binary.BigEndian.AppendUint32(req, uint32(len(passwd)))
	req = append(req, passwd...)
	writeFrame(t, conn, req)
	resp := readFrame(t, conn)
	require.GreaterOrEqual(t, len(resp), 16)
	require.Equal(t, id, int64(binary.BigEndian.Uint64(resp[8:16])), "the server did not reattach session %#x", id)

	// RequestHeader{xid 1, opcode -11 (closeSession)}.
	req = binary.BigEndian.AppendUint32(nil, 1)
	req = binary.BigEndian.AppendUint32(req, uint32(0xFFFFFFF5)) // -11
	writeFrame(t, conn, req)
	resp = readFrame(t, conn)
	// ReplyHeader{xid, zxid, err}
	require.GreaterOrEqual(t, len(resp), 16)
	require.Equal(t, int32(1), int32(binary.BigEndian.Uint32(resp[0:4])))
	require.Equal(t, int32(0), int32(binary.BigEndian.Uint32(resp[12:16])), "closeSession failed")
}

func writeFrame(t testing.TB, w io.Writer, body []byte) {
	t.Helper()
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	require.NoError(t, err)
}

func readFrame(t testing.TB, r io.Reader) []byte {
	t.Helper()
	var hdr [4]byte
	_, err := io.ReadFull(r, hdr[:])
	require.NoError(t, err)
	body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	_, err = io.ReadFull(r, body)
	require.NoError(t, err)
	return body
}
