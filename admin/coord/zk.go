package coord

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// ZKConfig configures NewZK. The zero value of every optional field means
// its default; WithDefaults fills them in.
type ZKConfig struct {
	// Servers are the ZooKeeper servers, "host:port" (port 2181 when
	// missing). Required.
	Servers []string
	// Root is the path under which the elector keeps its nodes:
	// Root+"/election" and Root+"/members". Created when missing.
	// Default "/shardjob".
	Root string
	// ID identifies this replica among the admins. Required; it is a node
	// name, so it must not contain "/".
	ID string
	// Address is the URL other replicas and operators reach this replica
	// at. Informational: it is shown by Members.
	Address string
	// Features are stored in this replica's member node for the leader to
	// read (Board.WatchMembers): what this version can do, so that during
	// a rolling upgrade work goes only to replicas that do it. Default
	// none.
	Features []string
	// SessionTimeout is the ZooKeeper session timeout asked for. The
	// server may negotiate another one within its minSessionTimeout and
	// maxSessionTimeout (2 and 20 ticks by default). Default 6s.
	SessionTimeout time.Duration
	// MaybeLostAfter is the local trust window: when the connection to
	// ZooKeeper drops, a leader keeps leading for at most this long,
	// counted from the last time it heard from a server, and then its term
	// is cancelled even if ZooKeeper did not say anything yet. It must be
	// shorter than the session timeout so that the leader stops before
	// ZooKeeper expires its session and elects another one. If the server
	// negotiates a shorter session timeout, 2/3 of that is used instead.
	// Default SessionTimeout*2/3.
	MaybeLostAfter time.Duration
	// ConnectTimeout bounds how long NewZK waits for a first session.
	// Default 5s.
	ConnectTimeout time.Duration
	// Logger receives state changes (Info/Warn) and the ZooKeeper
	// client's own messages (Debug). Default slog.Default().
	Logger *slog.Logger

	hooks zkHooks // tests only
}

// zkHooks lets the tests of this package observe and disturb the elector.
type zkHooks struct {
	// dial replaces net.DialTimeout.
	dial zk.Dialer
	// watching is called when a candidate armed its watch on pred.
	watching func(node, pred string)
	// event is called with every session event, before it is handled.
	event func(ev zk.Event)
}

// Defaults of ZKConfig.
const (
	DefaultZKRoot           = "/shardjob"
	DefaultSessionTimeout   = 6 * time.Second
	DefaultZKConnectTimeout = 5 * time.Second
)

// WithDefaults returns a copy of c with every unset optional field set to
// its default.
func (c ZKConfig) WithDefaults() ZKConfig {
	if c.Root == "" {
		c.Root = DefaultZKRoot
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = DefaultSessionTimeout
	}
	if c.MaybeLostAfter == 0 {
		c.MaybeLostAfter = c.SessionTimeout * 2 / 3
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultZKConnectTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Servers = append([]string(nil), c.Servers...)
	return c
}

func (c ZKConfig) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if len(c.Servers) == 0 {
		return bad("ZKConfig.Servers is empty; give at least one ZooKeeper server as host:port")
	}
	for i, s := range c.Servers {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, ", ") {
			return bad("ZKConfig.Servers[%d] = %q is not a host:port", i, s)
		}
	}
	if !strings.HasPrefix(c.Root, "/") || strings.HasSuffix(c.Root, "/") || strings.Contains(c.Root, "//") {
		return bad("ZKConfig.Root = %q must be an absolute ZooKeeper path without a trailing slash, like %q", c.Root, DefaultZKRoot)
	}
	if c.ID == "" || c.ID == "." || c.ID == ".." || strings.ContainsAny(c.ID, "/\x00") {
		return bad("ZKConfig.ID = %q must be a non-empty node name without '/' (the replica id)", c.ID)
	}
	if c.SessionTimeout <= 0 {
		return bad("ZKConfig.SessionTimeout = %s must be positive", c.SessionTimeout)
	}
	if c.MaybeLostAfter <= 0 || c.MaybeLostAfter >= c.SessionTimeout {
		return bad("ZKConfig.MaybeLostAfter = %s must be positive and shorter than SessionTimeout (%s), "+
			"or the leader could still act after ZooKeeper expired its session", c.MaybeLostAfter, c.SessionTimeout)
	}
	if c.ConnectTimeout <= 0 {
		return bad("ZKConfig.ConnectTimeout = %s must be positive", c.ConnectTimeout)
	}
	return nil
}

// ConnectError is returned by NewZK when no server gave it a session in
// time. errors.Is(err, zk.ErrNoServer) holds.
type ConnectError struct {
	Servers []string
	Timeout time.Duration
	Last    error // the last dial error, if any
}

func (e *ConnectError) Error() string {
	msg := fmt.Sprintf("zookeeper %s: no server answered within %s", strings.Join(e.Servers, ","), e.Timeout)
	if e.Last != nil {
		msg += " (last error: " + strings.ReplaceAll(e.Last.Error(), "\n", " ") + ")"
	}
	return msg
}

func (e *ConnectError) Unwrap() error { return zk.ErrNoServer }

// ZKElector is the ZooKeeper Elector. See the package documentation for
// the algorithm and its state machine. Create it with NewZK and end it with
// Close.
type ZKElector struct {
	cfg          ZKConfig
	log          *slog.Logger
	conn         *zk.Conn
	events       <-chan zk.Event
	acl          []zk.ACL
	electionPath string
	membersPath  string
	memberNode   string
	// partitionsPath holds the partition assignment the leader publishes.
	partitionsPath string
	since          time.Time

	clockBase  time.Time    // monotonic origin of lastHeard
	lastHeard  atomic.Int64 // ns since clockBase of the last byte read from a server
	negotiated atomic.Int64 // session timeout the server granted, ns; 0 = not known yet
	dialMu     sync.Mutex
	dialErr    error         // last dial error, for ConnectError
	dials      atomic.Uint64 // numbers the connections

	closeCtx    context.Context // cancelled by Close
	closeCancel context.CancelCauseFunc
	bg          sync.WaitGroup // the membership keeper

	mu          sync.Mutex
	closed      bool
	connClosing bool
	sessionID   int64  // current session; 0 = none (yet, or after expiry)
	gen         uint64 // incremented on every session expiry
	hasSession  bool   // connected with a live session
	restoring   bool   // reconnected within the session; the client has not re-sent its watches yet
	restoreConn uint64 // the connection that must re-send them
	trusted     bool   // a term may run: has a session, or lost it less than MaybeLostAfter ago
	reconnects  uint64 // reconnections within the same session
	lostTimer   *time.Timer
	timerSeq    uint64
	restoreT    *time.Timer
	term        *zkTerm       // the running term, if leading
	changed     chan struct{} // closed and replaced on every change of the above
	leadDone    chan struct{} // non-nil while Lead runs; closed when it returned
	assignment  []byte        // the partition assignment as last read
}

type zkTerm struct {
	cancel context.CancelCauseFunc
	node   string
	epoch  int64
}

var (
	_ Elector = (*ZKElector)(nil)
	_ Board   = (*ZKElector)(nil)
)

// NewZK connects to ZooKeeper, waits for a session (at most
// cfg.ConnectTimeout), creates the paths under cfg.Root and registers this
// replica as a member. It does not campaign: call Lead for that.
func NewZK(cfg ZKConfig) (*ZKElector, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	closeCtx, closeCancel := context.WithCancelCause(context.Background())
	e := &ZKElector{
		cfg:            cfg,
		log:            cfg.Logger.With("component", "coord", "replica", cfg.ID),
		acl:            zk.WorldACL(zk.PermAll),
		electionPath:   cfg.Root + "/election",
		membersPath:    cfg.Root + "/members",
		memberNode:     cfg.Root + "/members/" + cfg.ID,
		partitionsPath: cfg.Root + "/partitions",
		since:          time.Now().UTC().Truncate(time.Millisecond),
		clockBase:      time.Now(),
		closeCtx:       closeCtx,
		closeCancel:    closeCancel,
		changed:        make(chan struct{}),
	}

	// The event callback may run before zk.Connect returns; holding mu
	// makes it wait until e.conn is set.
	e.mu.Lock()
	conn, events, err := zk.Connect(cfg.Servers, cfg.SessionTimeout,
		zk.WithEventCallback(e.onEvent), // the event channel drops events when full
		zk.WithDialer(e.dial),
		zk.WithLogger(zkLogger{e.log}),
	)
	if err != nil {
		e.mu.Unlock()
		closeCancel(nil)
		return nil, fmt.Errorf("coord: zookeeper %s: %w", strings.Join(cfg.Servers, ","), err)
	}
	e.conn, e.events = conn, events
	e.mu.Unlock()

	fail := func(err error) (*ZKElector, error) {
		e.mu.Lock()
		e.closed = true
		e.mu.Unlock()
		e.closeConn()
		closeCancel(ErrClosed)
		return nil, err
	}
	if err := e.setup(); err != nil {
		return fail(err)
	}
	gen, registered := e.sessionGen(), false
	if err := e.register(); err != nil {
		e.log.Warn("coord: cannot register as a member yet; will retry", "node", e.memberNode, "err", err)
	} else {
		registered = true
	}
	e.bg.Add(1)
	go e.keepMember(gen, registered)
	e.log.Info("coord: connected to zookeeper", "servers", cfg.Servers, "session", fmt.Sprintf("%#x", conn.SessionID()),
		"root", cfg.Root)
	return e, nil
}

// setup waits for a session and creates the paths, retrying what a
// broken connection made fail, all within ConnectTimeout.
func (e *ZKElector) setup() error {
	ctx, cancel := context.WithTimeout(e.closeCtx, e.cfg.ConnectTimeout)
	defer cancel()
	servers := strings.Join(e.cfg.Servers, ",")
	var delay time.Duration
	for {
		if err := e.awaitReady(ctx, -1); err != nil {
			e.mu.Lock()
			everUp := e.sessionID != 0 || e.gen > 0
			e.mu.Unlock()
			if everUp {
				return fmt.Errorf("coord: zookeeper %s: lost the connection while setting up within %s", servers, e.cfg.ConnectTimeout)
			}
			e.dialMu.Lock()
			last := e.dialErr
			e.dialMu.Unlock()
			return &ConnectError{Servers: e.cfg.Servers, Timeout: e.cfg.ConnectTimeout, Last: last}
		}
		var err error
		for _, p := range []string{e.electionPath, e.membersPath, e.partitionsPath} {
			if err = e.ensurePath(p); err != nil {
				err = fmt.Errorf("coord: zookeeper %s: create %s: %w", servers, p, err)
				break
			}
		}
		if err == nil {
			return nil
		}
		if isFatal(err) {
			return err
		}
		e.log.Debug("coord: setup failed; retrying", "err", err)
		delay = backoff(delay, time.Second)
		if !waitTimer(ctx, delay, nil) {
			return err
		}
	}
}

// ensurePath creates p and its missing parents as persistent nodes.
func (e *ZKElector) ensurePath(p string) error {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := ""
	for _, part := range parts {
		cur += "/" + part
		_, err := e.conn.Create(cur, nil, 0, e.acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// Close ends the campaign (a running term is cancelled with ErrClosed and
// Close waits up to SessionTimeout for Lead to return), deletes this
// replica's nodes (best effort; the session close removes them anyway),
// closes the connection and waits for the client's goroutines. Do not call
// it from inside lead. Close is idempotent.
func (e *ZKElector) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	leadDone := e.leadDone
	e.mu.Unlock()

	e.closeCancel(ErrClosed)
	if leadDone != nil {
		t := time.NewTimer(e.cfg.SessionTimeout)
		select {
		case <-leadDone:
		case <-t.C:
			e.log.Warn("coord: Close: lead did not return in time; closing the session anyway", "waited", e.cfg.SessionTimeout)
		}
		t.Stop()
	}
	e.bg.Wait()
	e.unregister()
	e.closeConn()
	e.log.Info("coord: closed")
	return nil
}

// closeConn closes the ZooKeeper connection and waits until its loop ended
// (it closes the event channel last).
func (e *ZKElector) closeConn() {
	e.mu.Lock()
	e.connClosing = true
	e.stopLostTimerLocked()
	e.stopRestoreLocked()
	e.mu.Unlock()
	e.conn.Close()
	t := time.NewTimer(2 * e.cfg.SessionTimeout)
	defer t.Stop()
	for {
		select {
		case _, ok := <-e.events:
			if !ok {
				return
			}
		case <-t.C:
			e.log.Warn("coord: zookeeper client did not stop in time")
			return
		}
	}
}

// dial is the zk.Dialer: it wraps connections to note when the client last
// heard from a server and which session timeout the server granted, and to
// bound the handshake (see heardConn).
func (e *ZKElector) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	d := e.cfg.hooks.dial
	if d == nil {
		d = net.DialTimeout
	}
	c, err := d(network, address, timeout)
	e.dialMu.Lock()
	e.dialErr = err
	e.dialMu.Unlock()
	if err != nil {
		return nil, err
	}
	hc := &heardConn{Conn: c, e: e, id: e.dials.Add(1), answerBy: time.Now().Add(e.handshakeTimeout())}
	if err := c.SetReadDeadline(hc.answerBy); err != nil {
		c.Close()
		return nil, err
	}
	return hc, nil
}

// handshakeTimeout bounds how long a new connection may wait for the
// server's ConnectResponse: 2/3 of the session timeout, the silence after
// which the client gives up an established connection too. go-zookeeper
// v1.0.4 waits 10 times that (40s for a 6s session) and is deaf to Close
// meanwhile; a server that accepts connections without answering them (a
// ZooKeeper 3.8 loading its database when the connection came, see
// ZOOKEEPER-5051; a wedged server) would keep the replica away from
// ZooKeeper, and from the election, long after its session expired.
func (e *ZKElector) handshakeTimeout() time.Duration { return e.cfg.SessionTimeout * 2 / 3 }

// heardConn records reads. The first 12 bytes a server sends are the length
// and the start of the ConnectResponse: protocol version, then the
// negotiated session timeout in milliseconds. It also notices when the
// client re-sends its watches after a reconnection (see ready), and bounds
// the handshake: until the whole ConnectResponse was read, the read
// deadline is never later than answerBy (the client would set 10 times its
// read timeout, and none at all while reading the body).
//
// The client uses a connection from one goroutine during the handshake,
// then reads in one goroutine and writes in another, which it starts after
// the handshake: the fields need no lock.
type heardConn struct {
	net.Conn
	e         *ZKElector
	id        uint64
	hdr       [12]byte
	n         int
	handshook bool // the ConnectRequest was written

	answerBy time.Time // the ConnectResponse must be read by then
	got      int       // bytes of the ConnectResponse read so far
	answered bool      // the whole ConnectResponse was read
	asked    time.Time // the read deadline the client last asked for
}

// opSetWatches is the opcode of SetWatches in the ZooKeeper protocol.
const opSetWatches = 101

// Write is called by one goroutine at a time: the handshake, then the
// client's send loop. Every request is one Write: int32 length, int32 xid,
// int32 opcode, body.
func (c *heardConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if !c.handshook {
		c.handshook = true
	} else if err == nil && len(p) >= 12 && binary.BigEndian.Uint32(p[8:12]) == opSetWatches {
		c.e.watchesRestored(c.id)
	}
	return n, err
}

func (c *heardConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.e.lastHeard.Store(int64(time.Since(c.e.clockBase)))
		if c.n < len(c.hdr) {
			c.n += copy(c.hdr[c.n:], p[:n])
			if c.n == len(c.hdr) {
				c.e.noteNegotiated(time.Duration(int32(binary.BigEndian.Uint32(c.hdr[8:12]))) * time.Millisecond)
			}
		}
		if !c.answered {
			c.got += n
			if c.n >= 4 && c.got >= 4+int(binary.BigEndian.Uint32(c.hdr[:4])) {
				// Handshake over: the deadline is the client's again. (If
				// the connection broke meanwhile, the next read says so.)
				c.answered = true
				_ = c.Conn.SetReadDeadline(c.asked)
			}
		}
	}
	if err != nil && !c.answered && errors.Is(err, os.ErrDeadlineExceeded) {
		c.e.log.Warn("coord: the zookeeper server accepted the connection but did not answer the handshake in time; "+
			"trying again", "server", c.RemoteAddr().String(), "within", c.e.handshakeTimeout())
	}
	return n, err
}

// SetReadDeadline keeps the handshake within answerBy.
func (c *heardConn) SetReadDeadline(t time.Time) error {
	if !c.answered {
		c.asked = t
		if t.IsZero() || t.After(c.answerBy) {
			t = c.answerBy
		}
	}
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline is SetWriteDeadline and SetReadDeadline (the client does not
// call it, but the bound must hold whatever it calls).
func (c *heardConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

func (e *ZKElector) noteNegotiated(d time.Duration) {
	if d <= 0 {
		return
	}
	if old := time.Duration(e.negotiated.Swap(int64(d))); old != d && d < e.cfg.SessionTimeout {
		e.log.Warn("coord: zookeeper granted a shorter session timeout than asked; trusting the connection for 2/3 of it",
			"asked", e.cfg.SessionTimeout, "granted", d, "maybeLostAfter", e.maybeLostAfter())
	}
}

// maybeLostAfter is the trust window: MaybeLostAfter, or 2/3 of the
// negotiated session timeout when that is shorter.
func (e *ZKElector) maybeLostAfter() time.Duration {
	d := e.cfg.MaybeLostAfter
	if n := time.Duration(e.negotiated.Load()); n > 0 && n*2/3 < d {
		d = n * 2 / 3
	}
	return d
}

// sinceHeard is how long ago the client last heard from a server.
func (e *ZKElector) sinceHeard() time.Duration {
	return time.Since(e.clockBase) - time.Duration(e.lastHeard.Load())
}

// onEvent is the zk event callback. It runs on the client's goroutines and
// must not block: it only updates state, arms or stops a timer and cancels
// a context. Node events arrive through the watch channels instead.
func (e *ZKElector) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	if h := e.cfg.hooks.event; h != nil {
		h(ev)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.connClosing {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		e.sessionUpLocked(e.conn.SessionID(), ev.Server)
	case zk.StateDisconnected:
		e.sessionDownLocked(ev.Server)
	case zk.StateExpired:
		e.sessionExpiredLocked("zookeeper reported the session expired")
	default:
		return
	}
	e.broadcastLocked()
}

func (e *ZKElector) broadcastLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// sessionUpLocked: StateHasSession. Either the first session, a new one
// after expiry, or a reconnection within the same session.
func (e *ZKElector) sessionUpLocked(id int64, server string) {
	if e.sessionID != 0 && id != e.sessionID {
		// A new session without an Expired event: the old one is gone
		// all the same.
		e.sessionExpiredLocked("zookeeper gave a new session")
	}
	e.stopLostTimerLocked()
	e.stopRestoreLocked()
	if id == e.sessionID || e.gen > 0 {
		// On every connection after the first (within the session, or a
		// new session after expiry) the client re-sends the watches it
		// holds, from another goroutine, reading a field its receive loop
		// writes without a lock (a data race in go-zookeeper/zk v1.0.4:
		// lastZxid). A response to a request of ours read before that
		// SetWatches went out would race with it; so requests wait until
		// the SetWatches was written (then the race detector sees the
		// order through the socket), or a second passed if there were no
		// watches to send.
		e.restoring, e.restoreConn = true, e.dials.Load()
		conn := e.restoreConn
		e.restoreT = time.AfterFunc(time.Second, func() { e.watchesRestored(conn) })
	}
	switch {
	case id == e.sessionID:
		e.reconnects++
		e.log.Info("coord: reconnected within the session", "session", fmt.Sprintf("%#x", id), "server", server,
			"wasTrusted", e.trusted)
	case e.gen > 0:
		e.log.Info("coord: new zookeeper session after expiry", "session", fmt.Sprintf("%#x", id), "server", server)
	}
	e.sessionID = id
	e.hasSession = true
	e.trusted = true
}

// sessionDownLocked: StateDisconnected. The session may still be alive on
// the servers; a leader keeps its term until the trust window, counted
// from the last time it heard from a server, runs out.
func (e *ZKElector) sessionDownLocked(server string) {
	wasUp := e.hasSession
	e.hasSession = false
	e.stopRestoreLocked()
	if !wasUp || !e.trusted || e.lostTimer != nil {
		return
	}
	window := e.maybeLostAfter()
	left := max(window-e.sinceHeard(), 0)
	e.timerSeq++
	seq := e.timerSeq
	e.lostTimer = time.AfterFunc(left, func() { e.maybeLost(seq) })
	if e.term != nil {
		e.log.Warn("coord: disconnected from zookeeper while leading; the term ends unless the session comes back",
			"server", server, "epoch", e.term.epoch, "within", left)
	} else {
		e.log.Info("coord: disconnected from zookeeper", "server", server)
	}
}

// maybeLost is the trust timer: the connection stayed down too long.
func (e *ZKElector) maybeLost(seq uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if seq != e.timerSeq || e.lostTimer == nil {
		return // stopped meanwhile
	}
	e.lostTimer = nil
	if e.hasSession {
		return
	}
	e.trusted = false
	if e.term != nil {
		e.log.Warn("coord: zookeeper unreachable for the trust window; leadership may be lost, ending the term",
			"epoch", e.term.epoch, "lastHeard", e.sinceHeard().Round(time.Millisecond), "window", e.maybeLostAfter())
		e.term.cancel(ErrMaybeLost)
	}
	e.broadcastLocked()
}

// sessionExpiredLocked: the session is gone, and with it the ephemeral
// nodes. The client silently opens a new session next.
func (e *ZKElector) sessionExpiredLocked(why string) {
	e.stopLostTimerLocked()
	e.log.Warn("coord: "+why, "session", fmt.Sprintf("%#x", e.sessionID), "leading", e.term != nil)
	if e.term != nil {
		e.term.cancel(ErrSessionExpired)
	}
	e.stopRestoreLocked()
	e.hasSession = false
	e.trusted = false
	e.sessionID = 0
	e.gen++
}

func (e *ZKElector) stopLostTimerLocked() {
	if e.lostTimer != nil {
		e.lostTimer.Stop()
		e.lostTimer = nil
	}
	e.timerSeq++
}

// watchesRestored ends the restoring state of connection id.
func (e *ZKElector) watchesRestored(id uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.restoring || e.restoreConn != id {
		return
	}
	e.stopRestoreLocked()
	e.broadcastLocked()
}

func (e *ZKElector) stopRestoreLocked() {
	e.restoring = false
	if e.restoreT != nil {
		e.restoreT.Stop()
		e.restoreT = nil
	}
}

// readyLocked: requests may be sent. Requests made while disconnected
// wait in the client and go out first on the next connection, before the
// client re-sends its watches; so the loops of this package send nothing
// unless ready.
func (e *ZKElector) readyLocked() bool {
	return e.hasSession && !e.restoring
}

// awaitReady waits until ready. It fails with errSessionChanged if the
// session generation is no longer gen (gen < 0: any generation), and with
// the cause of ctx.
func (e *ZKElector) awaitReady(ctx context.Context, gen int64) error {
	for {
		e.mu.Lock()
		ok, g, changed := e.readyLocked(), e.gen, e.changed
		e.mu.Unlock()
		if gen >= 0 && g != uint64(gen) {
			return errSessionChanged
		}
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

func (e *ZKElector) sessionGen() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen
}

// zkLogger sends the zk client's messages to slog at Debug level.
type zkLogger struct{ log *slog.Logger }

func (l zkLogger) Printf(format string, args ...any) {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		l.log.Debug("zk: " + fmt.Sprintf(format, args...))
	}
}
