package coord

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// localReplica is a Local elector campaigning in its own goroutine.
type localReplica struct {
	l      *Local
	cancel context.CancelFunc
	done   chan error
}

func startLocal(t testing.TB, cfg LocalConfig, rec *recorder) *localReplica {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	l := NewLocal(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	r := &localReplica{l: l, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- l.Lead(ctx, rec.lead(l.cfg.ID)) }()
	t.Cleanup(func() {
		require.NoError(t, l.Close())
		cancel()
		<-r.done //nolint:errcheck // Lead's result after Close is checked by the tests that care
	})
	return r
}

func (r *localReplica) wait(t testing.TB) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("Lead did not return")
		return nil
	}
}

// awaitQueued waits until n electors campaign in g.
func awaitQueued(t testing.TB, g *LocalGroup, n int) {
	t.Helper()
	for {
		g.mu.Lock()
		ok, changed := len(g.queue) == n, g.changed
		g.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatalf("not %d candidates after 5s", n)
		}
	}
}

// TestLocalTwoCandidates: the same semantics as ZooKeeper with two
// candidates in one group: one leader at a time, epochs above BaseEpoch and
// strictly increasing, Resign and Close hand over to the other.
func TestLocalTwoCandidates(t *testing.T) {
	t.Parallel()
	g := NewLocalGroup()
	rec := newRecorder()
	base := func() (int64, error) { return 41, nil }
	a := startLocal(t, LocalConfig{Group: g, ID: "a", Address: "http://a", BaseEpoch: base}, rec)
	ta := rec.awaitLeader(t, time.Second, "", 0)
	require.Equal(t, "a", ta.id)
	require.Equal(t, int64(42), ta.epoch, "the first epoch follows BaseEpoch")
	b := startLocal(t, LocalConfig{Group: g, ID: "b", Address: "http://b", BaseEpoch: base}, rec)
	awaitQueued(t, g, 2)

	ms, err := b.l.Members(context.Background())
	require.NoError(t, err)
	require.Len(t, ms, 2)
	require.Equal(t, Member{ID: "a", Address: "http://a", Leader: true, Since: a.l.since, Epoch: 42}, ms[0])
	require.Equal(t, Member{ID: "b", Address: "http://b", Since: b.l.since}, ms[1])

	a.l.Resign()
	tb := rec.awaitLeader(t, time.Second, "a", ta.epoch)
	require.Equal(t, "b", tb.id)
	require.Equal(t, int64(43), tb.epoch)
	require.ErrorIs(t, rec.termOf("a").cause, ErrResigned)

	require.NoError(t, b.l.Close())
	require.ErrorIs(t, b.wait(t), ErrClosed)
	require.ErrorIs(t, rec.termOf("b").cause, ErrClosed)
	ta2 := rec.awaitLeader(t, time.Second, "b", tb.epoch)
	require.Equal(t, "a", ta2.id)
	require.Equal(t, int64(44), ta2.epoch)

	ms, err = a.l.Members(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, memberIDs(ms))

	// Alone, a resigns and wins again with a new epoch.
	a.l.Resign()
	ta3 := rec.awaitLeader(t, time.Second, "", ta2.epoch)
	require.Equal(t, int64(45), ta3.epoch)

	a.cancel()
	require.ErrorIs(t, a.wait(t), context.Canceled)
	requireIncreasingEpochs(t, rec, true)
	require.ErrorIs(t, b.l.Lead(context.Background(), rec.lead("b")), ErrClosed)
}

// TestLocalBaseEpoch: a failing BaseEpoch is retried; the epoch follows
// the larger of the group's last epoch and the base.
func TestLocalBaseEpoch(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	var calls atomic.Int64
	var base atomic.Int64
	base.Store(7)
	a := startLocal(t, LocalConfig{ID: "a", BaseEpoch: func() (int64, error) {
		if calls.Add(1) <= 2 {
			return 0, errors.New("database is down")
		}
		return base.Load(), nil
	}}, rec)
	ta := rec.awaitLeader(t, 2*time.Second, "", 0)
	require.Equal(t, int64(8), ta.epoch)
	require.Equal(t, int64(3), calls.Load())

	base.Store(100) // another process advanced the stored epoch
	a.l.Resign()
	ta2 := rec.awaitLeader(t, time.Second, "", ta.epoch)
	require.Equal(t, int64(101), ta2.epoch)

	base.Store(5) // a stale base never lowers the epoch
	a.l.Resign()
	ta3 := rec.awaitLeader(t, time.Second, "", ta2.epoch)
	require.Equal(t, int64(102), ta3.epoch)
}

func TestLocalMisuse(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	a := startLocal(t, LocalConfig{}, rec)
	rec.awaitLeader(t, time.Second, "", 0)
	require.Equal(t, "local", a.l.cfg.ID)
	require.ErrorIs(t, a.l.Lead(context.Background(), rec.lead("x")), ErrAlreadyCampaigning)
	require.Error(t, a.l.Lead(context.Background(), nil))
	require.NoError(t, a.l.Close())
	require.NoError(t, a.l.Close())
	require.ErrorIs(t, a.wait(t), ErrClosed)
}

// TestLocalStartStopRepeated: many electors come and go in one group; no
// goroutine is left behind and the epochs keep increasing.
func TestLocalStartStopRepeated(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	g := NewLocalGroup()
	rec := newRecorder()
	log := testLogger(t)
	var last int64
	for range 50 {
		var ls []*Local
		var dones []chan error
		for _, id := range []string{"a", "b", "c"} {
			l := NewLocal(LocalConfig{Group: g, ID: id, Logger: log})
			done := make(chan error, 1)
			go func() { done <- l.Lead(context.Background(), rec.lead(id)) }()
			ls, dones = append(ls, l), append(dones, done)
		}
		tm := rec.awaitLeader(t, time.Second, "", last)
		last = tm.epoch
		for i, l := range ls {
			require.NoError(t, l.Close())
			require.ErrorIs(t, <-dones[i], ErrClosed)
		}
	}
	ms, err := NewLocal(LocalConfig{Group: g, Logger: log}).Members(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"local"}, memberIDs(ms))
	requireIncreasingEpochs(t, rec, true)
}
