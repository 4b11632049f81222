package coord

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// watchLog records the watching hook: candidate node -> predecessor.
type watchLog struct {
	mu sync.Mutex
	m  map[string]string
}

func (w *watchLog) hook(node, pred string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]string{}
	}
	w.m[node] = pred
}

func (w *watchLog) get(node string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.m[node]
	return p, ok
}

func (w *watchLog) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}

// TestZKThreeCandidates: one leader at a time, each candidate watching
// only its predecessor (checked in the client and on the server), and
// closing the leader hands over to the next candidate at once.
func TestZKThreeCandidates(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t) + "/shardjob"
	admin := adminConn(t, server)
	rec := newRecorder()
	var watches watchLog
	cfg := func(id string) ZKConfig {
		c := zkConfig(t, server, root, id)
		c.hooks.watching = watches.hook
		return c
	}

	a := startReplica(t, cfg("a"), rec)
	ta := rec.awaitLeader(t, 20*time.Second, "", 0)
	require.Equal(t, "a", ta.id)
	b := startReplica(t, cfg("b"), rec)
	testenv.WaitFor(t, 20*time.Second, func() (bool, error) { return watches.len() == 1, nil }, "b watches")
	c := startReplica(t, cfg("c"), rec)
	testenv.WaitFor(t, 20*time.Second, func() (bool, error) { return watches.len() == 2, nil }, "c watches")

	names, ids := candidates(t, admin, root)
	require.Equal(t, []string{"a", "b", "c"}, ids)
	require.Equal(t, ta.epoch, mustSeq(t, names[0])+1, "the epoch is the leader's sequence number + 1")
	for i := 1; i < len(names); i++ {
		pred, ok := watches.get(names[i])
		require.True(t, ok, "%s armed no watch", ids[i])
		require.Equal(t, names[i-1], pred, "%s must watch its predecessor only", ids[i])
	}

	// The server agrees: the leader's node is watched by the leader itself
	// (to notice its deletion) and by b; b's by c; c's by nobody.
	sessions := map[string]int64{"a": a.e.conn.SessionID(), "b": b.e.conn.SessionID(), "c": c.e.conn.SessionID()}
	got := watchesByPath(t, server, root+"/election/")
	for p := range got {
		slices.Sort(got[p])
	}
	want := map[string][]int64{
		names[0]: {sessions["a"], sessions["b"]},
		names[1]: {sessions["c"]},
	}
	for p := range want {
		slices.Sort(want[p])
	}
	require.Equal(t, want, got, "watches per election node (wchp)")

	// Close the leader: b, its successor, takes over.
	closeAt := time.Now()
	require.ErrorIs(t, a.stop(t), ErrClosed)
	timeout := cfg("x").SessionTimeout
	tb := rec.awaitLeader(t, timeout, "a", ta.epoch)
	require.Equal(t, "b", tb.id)
	failAB := tb.start.Sub(closeAt)
	require.ErrorIs(t, rec.termOf("a").cause, ErrClosed)

	closeAt = time.Now()
	require.ErrorIs(t, b.stop(t), ErrClosed)
	tc := rec.awaitLeader(t, timeout, "b", tb.epoch)
	require.Equal(t, "c", tc.id)
	failBC := tc.start.Sub(closeAt)
	t.Logf("failover on Close: a->b %s, b->c %s (session timeout %s); epochs %d, %d, %d",
		failAB, failBC, timeout, ta.epoch, tb.epoch, tc.epoch)
	require.Less(t, failAB, timeout)
	require.Less(t, failBC, timeout)

	require.ErrorIs(t, c.stop(t), ErrClosed)
	requireIncreasingEpochs(t, rec, true)
	names, _ = candidates(t, admin, root)
	require.Empty(t, names, "Close deletes the candidate nodes")
}

func mustSeq(t testing.TB, node string) int64 {
	t.Helper()
	seq, ok := parseSeq(node)
	require.True(t, ok, node)
	return seq
}

// TestZKSessionExpiry: the leader's session is closed behind its back
// (another connection attaches to it with its id and password and closes
// it). The term ends with ErrSessionExpired, the other candidate takes
// over, and the old leader rejoins with a new candidate node in a new
// session.
func TestZKSessionExpiry(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t) + "/shardjob"
	admin := adminConn(t, server)
	rec := newRecorder()
	var watches watchLog
	spy := &sessionSpy{}

	cfgA := zkConfig(t, server, root, "a")
	// Long enough that the trust timer (>= 8s-4s after the cut) cannot
	// fire before the client's reconnection (about 1s) reports the expiry.
	cfgA.SessionTimeout = 12 * time.Second
	cfgA.hooks.dial = spy.dial
	cfgA.hooks.watching = watches.hook
	a := startReplica(t, cfgA, rec)
	ta := rec.awaitLeader(t, 20*time.Second, "", 0)
	require.Equal(t, "a", ta.id)
	cfgB := zkConfig(t, server, root, "b")
	cfgB.hooks.watching = watches.hook
	startReplica(t, cfgB, rec)
	testenv.WaitFor(t, 20*time.Second, func() (bool, error) { return watches.len() == 1, nil }, "b watches a")
	oldNames, _ := candidates(t, admin, root)
	require.Len(t, oldNames, 2)

	id, passwd := spy.session()
	require.Equal(t, a.e.conn.SessionID(), id)
	expireAt := time.Now()
	closeSession(t, server, id, passwd)
	spy.cut() // make a's client reconnect now rather than at its next ping

	tb := rec.awaitLeader(t, 15*time.Second, "a", ta.epoch)
	require.Equal(t, "b", tb.id)
	rec.await(t, 15*time.Second, "a's term ends", func() bool { _, ok := rec.active["a"]; return !ok })
	endA := rec.termOf("a")
	require.ErrorIs(t, endA.cause, ErrSessionExpired)
	t.Logf("session closed behind the leader's back: b leads %s later; a's term cancelled %s later (%s after b started: "+
		"the overlap the epoch fence in the database covers)", tb.start.Sub(expireAt), endA.end.Sub(expireAt),
		endA.end.Sub(tb.start))

	// a rejoins: a new node in a new session, watching b's node.
	testenv.WaitFor(t, 20*time.Second, func() (bool, error) {
		names, ids := candidates(t, admin, root)
		if len(names) != 2 || ids[1] != "a" {
			return false, fmt.Errorf("candidates %v %v", names, ids)
		}
		pred, ok := watches.get(names[1])
		return ok && pred == names[0] && names[0] == oldNames[1], nil
	}, "a rejoins behind b")
	require.NotEqual(t, id, a.e.conn.SessionID(), "a new session")

	testenv.WaitFor(t, 20*time.Second, func() (bool, error) {
		ms, err := a.e.Members(context.Background())
		if err != nil {
			return false, err
		}
		return len(ms) == 2 && ms[0].ID == "a" && !ms[0].Leader && ms[1].ID == "b" && ms[1].Leader &&
			ms[1].Epoch == tb.epoch, fmt.Errorf("members %+v", ms)
	}, "a registered as a member again")
	requireIncreasingEpochs(t, rec, false)
}

// TestZKReconnectWithinSession: the leader's connection breaks and comes
// back before the trust window ran out. It keeps leading, unless its node
// was deleted meanwhile, which it checks on reconnection.
func TestZKReconnectWithinSession(t *testing.T) {
	t.Parallel()
	for _, deleteNode := range []bool{false, true} {
		t.Run(fmt.Sprintf("deleteNode=%v", deleteNode), func(t *testing.T) {
			t.Parallel()
			server := testenv.ZooKeeper(t)
			root := testenv.ZKChroot(t) + "/shardjob"
			admin := adminConn(t, server)
			rec := newRecorder()
			spy := &sessionSpy{}
			var evMu sync.Mutex
			var sessions int
			sessionUp := make(chan struct{}, 10)
			cfgA := zkConfig(t, server, root, "a")
			cfgA.SessionTimeout = 12 * time.Second // trust window >= 4s after the cut
			cfgA.hooks.dial = spy.dial
			cfgA.hooks.event = func(ev zk.Event) {
				if ev.State == zk.StateHasSession {
					evMu.Lock()
					sessions++
					evMu.Unlock()
					sessionUp <- struct{}{}
				}
			}
			a := startReplica(t, cfgA, rec)
			<-sessionUp
			ta := rec.awaitLeader(t, 20*time.Second, "", 0)
			startReplica(t, zkConfig(t, server, root, "b"), rec)
			testenv.WaitFor(t, 20*time.Second, func() (bool, error) {
				names, _ := candidates(t, admin, root)
				return len(names) == 2, nil
			}, "b is a candidate")
			names, _ := candidates(t, admin, root)
			id := a.e.conn.SessionID()

			spy.partition(true)
			spy.cut()
			if deleteNode {
				require.NoError(t, admin.Delete(names[0], -1))
			}
			spy.partition(false)
			select {
			case <-sessionUp:
			case <-time.After(15 * time.Second):
				t.Fatal("no reconnection")
			}
			require.Equal(t, id, a.e.conn.SessionID(), "same session")

			if !deleteNode {
				// Still the leader, in the same term: nobody else led meanwhile.
				_, err := a.e.conn.Sync(root) // a round trip after the reconnection
				require.NoError(t, err)
				rec.mu.Lock()
				active := rec.active["a"]
				n := len(rec.terms)
				rec.mu.Unlock()
				require.NotNil(t, active, "a still leads")
				require.Equal(t, ta.epoch, active.epoch)
				require.Equal(t, 1, n, "no other term")
				ms, err := a.e.Members(context.Background())
				require.NoError(t, err)
				require.Equal(t, "a", ms[0].ID)
				require.True(t, ms[0].Leader)
				return
			}
			// b takes over as soon as the node is gone; a notices when it
			// is back (the overlap the fence in the database covers).
			tb := rec.awaitLeader(t, 15*time.Second, "a", ta.epoch)
			require.Equal(t, "b", tb.id)
			rec.await(t, 15*time.Second, "a's term ends", func() bool { _, ok := rec.active["a"]; return !ok })
			require.ErrorIs(t, rec.termOf("a").cause, ErrNodeDeleted)
			requireIncreasingEpochs(t, rec, false)
		})
	}
}

// TestZKServerStopped: the only ZooKeeper server stops. The leader's term
// is cancelled by the local trust timer, before the session timeout; when
// the server is back, a leader is elected again with a larger epoch, even
// when the replicas reconnected while the server was still starting, and
// it left their handshakes unanswered (see TestZKMuteServer).
func TestZKServerStopped(t *testing.T) {
	t.Parallel()
	z := testenv.StartZooKeeper(t)
	root := "/shardjob"
	rec := newRecorder()

	var evMu sync.Mutex
	var disconnectedAt time.Time
	cfgA := zkConfig(t, z.Addr(), root, "a")
	cfgA.SessionTimeout = 6 * time.Second // the default; MaybeLostAfter 4s
	cfgA.hooks.event = func(ev zk.Event) {
		evMu.Lock()
		defer evMu.Unlock()
		if ev.State == zk.StateDisconnected && disconnectedAt.IsZero() {
			disconnectedAt = time.Now()
		}
	}
	startReplica(t, cfgA, rec)
	ta := rec.awaitLeader(t, 20*time.Second, "", 0)
	require.Equal(t, "a", ta.id)
	cfgB := zkConfig(t, z.Addr(), root, "b")
	cfgB.SessionTimeout = cfgA.SessionTimeout
	startReplica(t, cfgB, rec)
	cfg := cfgA.WithDefaults()

	stopAt := time.Now()
	require.NoError(t, z.Stop())
	stopped := time.Now()
	rec.await(t, cfg.SessionTimeout+2*time.Second, "the leader's term ends", func() bool {
		_, ok := rec.active["a"]
		return !ok
	})
	endA := rec.termOf("a")
	require.ErrorIs(t, endA.cause, ErrMaybeLost)
	evMu.Lock()
	disc := disconnectedAt
	evMu.Unlock()
	require.False(t, disc.IsZero(), "no Disconnected event")
	sinceStop, sinceDisc := endA.end.Sub(stopAt), endA.end.Sub(disc)
	t.Logf("ZooKeeper stopped (Stop took %s): term cancelled %s after Stop was called, %s after the Disconnected event "+
		"(MaybeLostAfter %s, counted from the last byte heard; SessionTimeout %s)",
		stopped.Sub(stopAt).Round(time.Millisecond), sinceStop.Round(time.Millisecond), sinceDisc.Round(time.Millisecond),
		cfg.MaybeLostAfter, cfg.SessionTimeout)
	require.Less(t, sinceStop, cfg.SessionTimeout, "the leader must stop before its session can expire")
	require.LessOrEqual(t, sinceDisc, cfg.MaybeLostAfter+time.Second, "timer late")

	startAt := time.Now()
	require.NoError(t, z.Start())
	started := time.Now()
	tn := rec.awaitLeader(t, 15*time.Second, "", ta.epoch)
	t.Logf("ZooKeeper started in %s; %s leads with epoch %d (was %d) %s after it answered",
		started.Sub(startAt).Round(time.Millisecond), tn.id, tn.epoch, ta.epoch, tn.start.Sub(started).Round(time.Millisecond))
	requireIncreasingEpochs(t, rec, true)
}

// TestZKMuteServer: the leader's connection breaks and the next one lands
// on a server that accepts it and never answers the handshake, as a
// ZooKeeper 3.8 does with connections that arrive while it loads its
// database at startup (ZOOKEEPER-5051). go-zookeeper alone would wait 10
// times its read timeout (40s for this 6s session), long after the session
// expired, deaf to Close; the elector gives up the handshake after 2/3 of
// the session timeout, reaches a server that answers and leads again. Close
// during such a handshake waits for that bound at most, and the client has
// stopped when it returns.
func TestZKMuteServer(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t) + "/shardjob"
	mute := newMuteServer(t)
	rec := newRecorder()
	spy := &sessionSpy{}
	sessionUp := make(chan struct{}, 1)
	cfg := zkConfig(t, server, root, "a")
	cfg.SessionTimeout = 6 * time.Second // handshakes bounded at 4s
	cfg.hooks.dial = spy.dial
	cfg.hooks.event = func(ev zk.Event) {
		if ev.State == zk.StateHasSession {
			select {
			case sessionUp <- struct{}{}:
			default:
			}
		}
	}
	a := startReplica(t, cfg, rec)
	ta := rec.awaitLeader(t, 20*time.Second, "", 0)
	<-sessionUp
	muted := func() {
		t.Helper()
		n := mute.accepted()
		spy.divert(mute.addr())
		spy.cut()
		testenv.WaitFor(t, 20*time.Second, func() (bool, error) { return mute.accepted() > n, nil },
			"the client dials the mute server")
	}

	// The client is stuck in a handshake; a server that answers is back.
	id := a.e.conn.SessionID()
	muted()
	spy.divert("")
	mutedAt := time.Now()
	select {
	case <-sessionUp:
	case <-time.After(20 * time.Second): // go-zookeeper alone: 40s
		t.Fatalf("no session within 20s after the mute server took the connection")
	}
	t.Logf("a session again %s after the mute server took the connection (same session: %v)",
		time.Since(mutedAt).Round(time.Millisecond), a.e.conn.SessionID() == id)
	tn := rec.awaitLeader(t, 20*time.Second, "", ta.epoch)
	require.Equal(t, "a", tn.id)
	requireIncreasingEpochs(t, rec, true)

	// Close while the client is stuck in a handshake: the client stops too.
	muted()
	closeAt := time.Now()
	require.ErrorIs(t, a.stop(t), ErrClosed)
	took := time.Since(closeAt)
	select {
	case _, open := <-a.e.events:
		require.False(t, open, "an event after Close")
	default:
		t.Fatalf("Close returned after %s, but the zookeeper client still runs", took)
	}
	t.Logf("Close during a mute handshake took %s", took.Round(time.Millisecond))
}

// TestZKMembers: every replica, campaigning or not, is listed with its
// address and join time, and the leader with its epoch; a closed replica
// leaves the list.
func TestZKMembers(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t) + "/shardjob"
	rec := newRecorder()
	before := time.Now().Add(-time.Second)

	a := startReplica(t, zkConfig(t, server, root, "a"), rec)
	ta := rec.awaitLeader(t, 20*time.Second, "", 0)
	b := startReplica(t, zkConfig(t, server, root, "b"), rec)
	c := startReplica(t, zkConfig(t, server, root, "c"), rec)
	observer, err := NewZK(zkConfig(t, server, root, "d")) // a member that does not campaign
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, observer.Close()) })

	for _, e := range []Elector{a.e, b.e, c.e, observer} {
		ms, err := e.Members(context.Background())
		require.NoError(t, err)
		require.Len(t, ms, 4)
		for i, m := range ms {
			id := string(rune('a' + i))
			require.Equal(t, id, m.ID)
			require.Equal(t, "http://"+id+".test:8080", m.Address)
			require.True(t, m.Since.After(before) && !m.Since.After(time.Now()), "since %s", m.Since)
			require.Equal(t, id == "a", m.Leader, "leader flag of %s", id)
			if m.Leader {
				require.Equal(t, ta.epoch, m.Epoch)
			} else {
				require.Zero(t, m.Epoch)
			}
		}
	}

	require.ErrorIs(t, c.stop(t), ErrClosed)
	ms, err := a.e.Members(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "d"}, memberIDs(ms))
	_, err = c.e.Members(context.Background())
	require.ErrorIs(t, err, ErrClosed)
}

func memberIDs(ms []Member) []string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestZKNodeDeleted: someone deletes the leader's election node; the term
// ends with ErrNodeDeleted and the replica campaigns again.
func TestZKNodeDeleted(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t) + "/shardjob"
	admin := adminConn(t, server)
	rec := newRecorder()
	startReplica(t, zkConfig(t, server, root, "a"), rec)
	ta := rec.awaitLeader(t, 20*time.Second, "", 0)
	names, _ := candidates(t, admin, root)
	require.Len(t, names, 1)
	require.NoError(t, admin.Delete(names[0], -1))
	t2 := rec.awaitLeader(t, 15*time.Second, "", ta.epoch)
	require.Equal(t, "a", t2.id)
	require.NoError(t, rec.termOf("a").cause, "the latest term is running")
	require.ErrorIs(t, rec.all()[0].cause, ErrNodeDeleted)
	requireIncreasingEpochs(t, rec, true)
}

// TestZKLeaderReturns: a lead func that returns by itself (a step-down)
// makes the replica go to the back of the queue.
func TestZKLeaderReturns(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t) + "/shardjob"
	rec := newRecorder()
	stepDown := make(chan struct{})
	ea, err := NewZK(zkConfig(t, server, root, "a"))
	require.NoError(t, err)
	var aTerms []int64
	aLead := func(ctx context.Context, epoch int64) {
		aTerms = append(aTerms, epoch)
		if len(aTerms) == 1 {
			rec.lead("a")(withDone(ctx, stepDown), epoch)
			return
		}
		rec.lead("a")(ctx, epoch)
	}
	done := make(chan error, 1)
	go func() { done <- ea.Lead(context.Background(), aLead) }()
	t.Cleanup(func() {
		require.NoError(t, ea.Close())
		require.ErrorIs(t, <-done, ErrClosed)
	})
	ta := rec.awaitLeader(t, 20*time.Second, "", 0)
	require.Equal(t, "a", ta.id)
	startReplica(t, zkConfig(t, server, root, "b"), rec)
	admin := adminConn(t, server)
	testenv.WaitFor(t, 20*time.Second, func() (bool, error) {
		names, _ := candidates(t, admin, root)
		return len(names) == 2, nil
	}, "b is a candidate")
	close(stepDown)
	tb := rec.awaitLeader(t, 15*time.Second, "a", ta.epoch)
	require.Equal(t, "b", tb.id)
	requireIncreasingEpochs(t, rec, true)
}

// withDone returns a context that also ends when done is closed.
func withDone(ctx context.Context, done <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-done:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx
}

// TestNewZKDeadServer: nobody listens; NewZK fails within ConnectTimeout
// with a one-line error naming the server.
func TestNewZKDeadServer(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	start := time.Now()
	e, err := NewZK(ZKConfig{Servers: []string{addr}, ID: "a", ConnectTimeout: time.Second, Logger: testLogger(t)})
	took := time.Since(start)
	require.Nil(t, e)
	require.Error(t, err)
	t.Logf("NewZK failed after %s: %v", took.Round(time.Millisecond), err)
	require.True(t, strings.HasPrefix(err.Error(), "zookeeper "+addr+": no server answered within 1s"), err.Error())
	require.NotContains(t, err.Error(), "\n")
	require.ErrorIs(t, err, zk.ErrNoServer)
	var ce *ConnectError
	require.ErrorAs(t, err, &ce)
	// The error is made after ConnectTimeout; closing the client may take a
	// moment more on a loaded machine.
	require.Less(t, took, 5*time.Second)
}

func TestZKConfigValidate(t *testing.T) {
	t.Parallel()
	ok := ZKConfig{Servers: []string{"127.0.0.1:2181"}, ID: "a"}
	require.NoError(t, ok.WithDefaults().validate())
	d := ok.WithDefaults()
	require.Equal(t, "/shardjob", d.Root)
	require.Equal(t, 6*time.Second, d.SessionTimeout)
	require.Equal(t, 4*time.Second, d.MaybeLostAfter)
	require.Equal(t, 5*time.Second, d.ConnectTimeout)
	require.NotNil(t, d.Logger)

	for name, tc := range map[string]struct {
		mod  func(*ZKConfig)
		want string
	}{
		"no servers":       {func(c *ZKConfig) { c.Servers = nil }, "Servers is empty"},
		"empty server":     {func(c *ZKConfig) { c.Servers = []string{""} }, "Servers[0]"},
		"comma list":       {func(c *ZKConfig) { c.Servers = []string{"a:1,b:2"} }, "Servers[0]"},
		"relative root":    {func(c *ZKConfig) { c.Root = "shardjob" }, "Root"},
		"trailing slash":   {func(c *ZKConfig) { c.Root = "/shardjob/" }, "Root"},
		"no id":            {func(c *ZKConfig) { c.ID = "" }, "ID"},
		"slash in id":      {func(c *ZKConfig) { c.ID = "a/b" }, "ID"},
		"window too long":  {func(c *ZKConfig) { c.MaybeLostAfter = 6 * time.Second }, "MaybeLostAfter"},
		"negative timeout": {func(c *ZKConfig) { c.SessionTimeout = -time.Second }, "SessionTimeout"},
	} {
		t.Run(name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			_, err := NewZK(c)
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseSeq(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]int64{
		"_c_0123456789abcdef0123456789abcdef-n-0000000042":             42,
		"/x/election/_c_0123456789abcdef0123456789abcdef-n-2147483647": 2147483647,
		"n-0000000000": 0,
		"garbage":      -1,
		"_c_abc-n-":    -1,
		"_c_abc-n--12": -1,
	} {
		got, ok := parseSeq(name)
		if want < 0 {
			require.False(t, ok, name)
			continue
		}
		require.True(t, ok, name)
		require.Equal(t, want, got, name)
	}
	c := sortCandidates([]string{"_c_ff-n-0000000010", "junk", "_c_00-n-0000000009", "_c_aa-n-0000000011"})
	require.Equal(t, []candidate{{"_c_00-n-0000000009", 9}, {"_c_ff-n-0000000010", 10}, {"_c_aa-n-0000000011", 11}}, c)
}

// TestZKLeadMisuse: a second Lead, Lead after Close, a nil lead func.
func TestZKLeadMisuse(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t) + "/shardjob"
	rec := newRecorder()
	a := startReplica(t, zkConfig(t, server, root, "a"), rec)
	rec.awaitLeader(t, 20*time.Second, "", 0)
	require.ErrorIs(t, a.e.Lead(context.Background(), rec.lead("a2")), ErrAlreadyCampaigning)
	require.Error(t, a.e.Lead(context.Background(), nil))
	require.ErrorIs(t, a.stop(t), ErrClosed)
	require.ErrorIs(t, a.e.Lead(context.Background(), rec.lead("a")), ErrClosed)
	require.NoError(t, a.e.Close(), "Close is idempotent")
}

// TestZKStartStopRepeated starts and stops electors over and over (with
// Close, and with the Lead context) and checks that nothing leaks. It is
// not parallel, so that goleak sees only its own goroutines.
func TestZKStartStopRepeated(t *testing.T) {
	server := testenv.ZooKeeper(t) // starts the shared server's goroutines before the snapshot
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	root := testenv.ZKChroot(t) + "/shardjob"
	log := testLogger(t)
	start := time.Now()
	const rounds = 6
	var last int64
	for i := range rounds {
		rec := newRecorder()
		var es []*ZKElector
		var dones []chan error
		var cancels []context.CancelFunc
		for _, id := range []string{"a", "b"} {
			cfg := zkConfig(t, server, root, id)
			cfg.Logger = log.With("round", i)
			e, err := NewZK(cfg)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- e.Lead(ctx, rec.lead(id)) }()
			es, dones, cancels = append(es, e), append(dones, done), append(cancels, cancel)
		}
		tm := rec.awaitLeader(t, 20*time.Second, "", last)
		last = tm.epoch
		leader := 0
		if tm.id == "b" {
			leader = 1
		}
		if i%2 == 0 {
			// Stop the leader with Close, the other with its context.
			require.NoError(t, es[leader].Close())
			require.ErrorIs(t, <-dones[leader], ErrClosed)
			cancels[1-leader]()
			require.ErrorIs(t, <-dones[1-leader], context.Canceled)
			require.NoError(t, es[1-leader].Close())
		} else {
			// Cancel the leader's campaign; the other takes over; close both.
			cancels[leader]()
			require.ErrorIs(t, <-dones[leader], context.Canceled)
			tm2 := rec.awaitLeader(t, 15*time.Second, tm.id, tm.epoch)
			last = tm2.epoch
			for j := range es {
				require.NoError(t, es[j].Close())
			}
			require.ErrorIs(t, <-dones[1-leader], ErrClosed)
		}
		for _, c := range cancels {
			c()
		}
		requireIncreasingEpochs(t, rec, true)
	}
	t.Logf("%d rounds of 2 electors in %s", rounds, time.Since(start).Round(time.Millisecond))
}
