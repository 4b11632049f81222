package coord

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// awaitClosed fails the test unless ch is closed within d.
func awaitClosed(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: no signal within %s", what, d)
	}
}

// TestZKBoard: only the leader of the running term publishes the
// partition assignment; every replica watches it and the member list; a
// leader whose election node is gone publishes nothing; a replica hears of
// its session's loss.
func TestZKBoard(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	root := testenv.ZKChroot(t) + "/shardjob"
	admin := adminConn(t, server)
	rec := newRecorder()
	ctx := context.Background()

	a := startReplica(t, zkConfig(t, server, root, "a"), rec)
	ta := rec.awaitLeader(t, 20*time.Second, "", 0)
	require.Equal(t, "a", ta.id)
	spy := &sessionSpy{}
	cfgB := zkConfig(t, server, root, "b")
	cfgB.hooks.dial = spy.dial
	cfgB.Features = []string{"fire-by-partition", "x"}
	b := startReplica(t, cfgB, rec)

	var rs []Replica
	testenv.WaitFor(t, 20*time.Second, func() (bool, error) {
		var err error
		rs, _, err = b.e.WatchMembers(ctx)
		ids := ReplicaIDs(rs)
		return err == nil && fmt.Sprint(ids) == "[a b]", fmt.Errorf("members %v, %v", ids, err)
	}, "both replicas are members")
	// a registered no features (as a version before features would), b two.
	require.Equal(t, []Replica{{ID: "a"}, {ID: "b", Features: []string{"fire-by-partition", "x"}}}, rs)
	require.False(t, rs[0].Has("fire-by-partition"))
	require.True(t, rs[1].Has("fire-by-partition"))
	ms, err := a.e.Members(ctx)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	require.Empty(t, ms[0].Features)
	require.Equal(t, []string{"fire-by-partition", "x"}, ms[1].Features, "Members shows the features too")

	pub, changed, err := b.e.WatchAssignment(ctx)
	require.NoError(t, err)
	require.Nil(t, pub.Data, "nothing published yet")
	require.True(t, pub.Trusted)

	require.ErrorIs(t, b.e.PublishAssignment(ctx, ta.epoch, []byte("b")), ErrNotLeading, "a replica that does not lead")
	require.ErrorIs(t, a.e.PublishAssignment(ctx, ta.epoch+1, []byte("a")), ErrNotLeading, "another term")
	require.NoError(t, a.e.PublishAssignment(ctx, ta.epoch, []byte("first")))
	awaitClosed(t, changed, 10*time.Second, "b's watch of the assignment")
	pub, changed, err = b.e.WatchAssignment(ctx)
	require.NoError(t, err)
	require.Equal(t, "first", string(pub.Data))

	// The leader's election node disappears (a tool, an expiry the leader
	// has not heard of yet): from then on it cannot publish, whether its
	// term already ended or not.
	names, _ := candidates(t, admin, root)
	require.NoError(t, admin.Delete(names[0], -1))
	require.ErrorIs(t, a.e.PublishAssignment(ctx, ta.epoch, []byte("stale")), ErrNotLeading)
	tb := rec.awaitLeader(t, 20*time.Second, "a", ta.epoch)
	require.Equal(t, "b", tb.id)
	require.ErrorIs(t, a.e.PublishAssignment(ctx, ta.epoch, []byte("stale")), ErrNotLeading)
	require.NoError(t, b.e.PublishAssignment(ctx, tb.epoch, []byte("second")))
	awaitClosed(t, changed, 10*time.Second, "b's watch of the assignment")
	data, _, err := admin.Get(root + "/partitions")
	require.NoError(t, err)
	require.Equal(t, "second", string(data), "the stale leader wrote nothing")

	// The assignment's node deleted by hand: the watch fires, the node
	// comes back empty, and the leader publishes into it again.
	_, changed, err = a.e.WatchAssignment(ctx)
	require.NoError(t, err)
	require.NoError(t, admin.Delete(root+"/partitions", -1))
	awaitClosed(t, changed, 10*time.Second, "a hears that the assignment's node was deleted")
	pub, _, err = a.e.WatchAssignment(ctx)
	require.NoError(t, err)
	require.Nil(t, pub.Data, "an empty assignment")
	require.NoError(t, admin.Delete(root+"/partitions", -1))
	require.NoError(t, b.e.PublishAssignment(ctx, tb.epoch, []byte("second")), "the leader publishes into a node it creates again")

	// b's session is closed behind its back: its watch fires, and once it
	// has a session again it reads the assignment anew.
	pub, changed, err = b.e.WatchAssignment(ctx)
	require.NoError(t, err)
	require.Equal(t, "second", string(pub.Data))
	id, passwd := spy.session()
	closeSession(t, server, id, passwd)
	spy.cut()
	awaitClosed(t, changed, 20*time.Second, "b hears of its session's loss")
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		pub, _, err := b.e.WatchAssignment(ctx)
		return err == nil && pub.Trusted && !pub.Stale && string(pub.Data) == "second", fmt.Errorf("%+v, %v", pub, err)
	}, "b reads the assignment in its new session")
	require.ErrorIs(t, b.stop(t), ErrClosed)
	_, _, err = b.e.WatchAssignment(ctx)
	require.ErrorIs(t, err, ErrClosed)
}

// TestLocalBoard: the in-process coordinator gives standalone mode the
// same board: the leader of the running term publishes, members watch.
func TestLocalBoard(t *testing.T) {
	t.Parallel()
	g := NewLocalGroup()
	ctx := context.Background()
	rec := newRecorder()
	a := NewLocal(LocalConfig{Group: g, ID: "a", Features: []string{"f"}})
	b := NewLocal(LocalConfig{Group: g, ID: "b"})
	runLocal := func(l *Local) {
		lctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = l.Lead(lctx, rec.lead(l.cfg.ID)) }()
		t.Cleanup(func() { _ = l.Close(); cancel(); <-done })
	}
	runLocal(a)
	ta := rec.awaitLeader(t, 10*time.Second, "", 0)
	runLocal(b)
	leader, other := a, b
	if ta.id == "b" {
		leader, other = b, a
	}
	rs, _, err := other.WatchMembers(ctx)
	require.NoError(t, err)
	require.Equal(t, []Replica{{ID: "a", Features: []string{"f"}}, {ID: "b"}}, rs)
	pub, changed, err := other.WatchAssignment(ctx)
	require.NoError(t, err)
	require.Nil(t, pub.Data)
	require.True(t, pub.Trusted)
	require.ErrorIs(t, other.PublishAssignment(ctx, ta.epoch, []byte("x")), ErrNotLeading)
	require.NoError(t, leader.PublishAssignment(ctx, ta.epoch, []byte("one")))
	awaitClosed(t, changed, 5*time.Second, "the watch of the assignment")
	pub, _, err = other.WatchAssignment(ctx)
	require.NoError(t, err)
	require.Equal(t, "one", string(pub.Data))
	require.NoError(t, other.Close())
	rs, _, err = leader.WatchMembers(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{ta.id}, ReplicaIDs(rs))
}
