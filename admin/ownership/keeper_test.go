package ownership_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/coord"
	"github.com/shardjob/shardjob/admin/ownership"
	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// TestMain stops the private servers after the tests, then checks that no
// goroutine leaked.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// elector is what a replica needs from its coordinator.
type elector interface {
	coord.Elector
	coord.Board
	Close() error
}

// replica is one admin replica's coordinator and keeper, running.
type replica struct {
	id     string
	e      elector
	k      *ownership.Keeper
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// startReplica runs Lead (claiming the leader epoch, then Rebalance for
// the term, as the admin does) and Run on a keeper of count partitions.
func startReplica(t *testing.T, log *slog.Logger, id string, e elector, st *store.Store, count int) *replica {
	t.Helper()
	return startRequiring(t, log, id, e, st, count, "")
}

// startRequiring is startReplica with a keeper that gives partitions only
// to replicas with the feature require (Config.Require).
func startRequiring(t *testing.T, log *slog.Logger, id string, e elector, st *store.Store, count int, feature string) *replica {
	t.Helper()
	k, err := ownership.New(ownership.Config{ID: id, Count: count, Board: e, Store: st, RetryDelay: 100 * time.Millisecond,
		Logger: log, Require: feature})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{id: id, e: e, k: k, cancel: cancel}
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		_ = e.Lead(ctx, func(term context.Context, epoch int64) {
			ok, err := st.ClaimEpoch(term, epoch, id)
			if err != nil || !ok {
				return
			}
			if err := k.Rebalance(term, epoch); err != nil {
				t.Logf("%s: rebalance: %v", id, err)
			}
		})
	}()
	go func() {
		defer r.wg.Done()
		_ = k.Run(ctx)
	}()
	t.Cleanup(r.stop)
	return r
}

// stop closes the coordinator (its member node goes) and waits for both
// loops.
func (r *replica) stop() {
	r.once.Do(func() {
		_ = r.e.Close()
		r.cancel()
		r.wg.Wait()
	})
}

// testLogger logs to t until the test ended (the zk client may log from
// its goroutines until Close returned).
func testLogger(t *testing.T) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.stop) // registered first: runs last
	return slog.New(slog.NewTextHandler(w, nil)).With("test", t.Name())
}

type testWriter struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// awaitBalanced waits until the replicas together own every partition,
// each one once, balanced (floor or ceil of count/n each), and returns
// what each owns.
func awaitBalanced(t *testing.T, rs []*replica, count int) map[string]map[int]int64 {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		owned := map[string]map[int]int64{}
		var changes []<-chan struct{}
		for _, r := range rs {
			o, ch := r.k.Owned()
			owned[r.id] = o
			changes = append(changes, ch)
		}
		why := balanced(owned, count)
		if why == "" {
			return owned
		}
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("partitions not balanced over %d replicas after 60s: %s", len(rs), why)
		}
		// Wait for any replica's change (or poll again after a while).
		woke := make(chan struct{})
		stop := make(chan struct{})
		for _, ch := range changes {
			go func() {
				select {
				case <-ch:
					select {
					case woke <- struct{}{}:
					case <-stop:
					}
				case <-stop:
				}
			}()
		}
		select {
		case <-woke:
		case <-time.After(min(left, 500*time.Millisecond)):
		}
		close(stop)
	}
}

// balanced says what is wrong with owned, or "".
func balanced(owned map[string]map[int]int64, count int) string {
	seen := map[int]string{}
	n := len(owned)
	for id, o := range owned {
		if len(o) < count/n || len(o) > (count+n-1)/n {
			return fmt.Sprintf("%s owns %d", id, len(o))
		}
		for p := range o {
			if other, dup := seen[p]; dup {
				return fmt.Sprintf("partition %d owned by %s and %s", p, other, id)
			}
			seen[p] = id
		}
	}
	if len(seen) != count {
		return fmt.Sprintf("%d of %d partitions owned", len(seen), count)
	}
	return ""
}

// requireKept checks that every partition of before is in after with the
// same epoch: nothing of it was handed over.
func requireKept(t *testing.T, who string, before, after map[int]int64) {
	t.Helper()
	for p, epoch := range before {
		require.Equal(t, epoch, after[p], "%s: partition %d moved or got a new epoch", who, p)
	}
}

// requireFenced checks that writes under the former epochs fail.
func requireFenced(t *testing.T, st *store.Store, former map[int]int64) {
	t.Helper()
	ctx := context.Background()
	for p, epoch := range former {
		err := st.Tx(ctx, func(tx *store.Tx) error { return tx.CheckPartitionEpoch(ctx, p, epoch) })
		require.ErrorIs(t, err, store.ErrStaleEpoch, "partition %d at its former epoch %d", p, epoch)
	}
}

// leaderOf returns the replica that leads according to the coordinator.
func leaderOf(t *testing.T, rs []*replica) *replica {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ms, err := rs[0].e.Members(context.Background())
		require.NoError(t, err)
		for _, m := range ms {
			if !m.Leader {
				continue
			}
			for _, r := range rs {
				if r.id == m.ID {
					return r
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no leader among the replicas after 30s")
	return nil
}

// TestPartitionsMoveOnlyWhatTheyMust: three admin replicas on a real
// ZooKeeper and MariaDB share 256 partitions; when one leaves, only its
// partitions move (the others keep theirs, at the same epoch) and its
// former epochs are fenced; a replica that joins takes its share from the
// others without moving anything between them; when the leader leaves, a
// new leader hands its partitions over the same way.
func TestPartitionsMoveOnlyWhatTheyMust(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	st := storetest.Open(t, sqlfiles.MySQL)
	root := "/shardjob-test/" + t.Name()
	count := partition.DefaultCount
	log := testLogger(t)
	newZK := func(id string) elector {
		e, err := coord.NewZK(coord.ZKConfig{Servers: []string{server}, Root: root, ID: id, SessionTimeout: 10 * time.Second,
			ConnectTimeout: 20 * time.Second, Logger: log})
		require.NoError(t, err)
		return e
	}
	a := startReplica(t, log, "a", newZK("a"), st, count)
	b := startReplica(t, log, "b", newZK("b"), st, count)
	c := startReplica(t, log, "c", newZK("c"), st, count)
	three := awaitBalanced(t, []*replica{a, b, c}, count)

	// A replica that is not the leader leaves.
	leader := leaderOf(t, []*replica{a, b, c})
	var gone *replica
	var stay []*replica
	for _, r := range []*replica{a, b, c} {
		if r != leader && gone == nil {
			gone = r
			continue
		}
		stay = append(stay, r)
	}
	gone.stop()
	two := awaitBalanced(t, stay, count)
	for _, r := range stay {
		requireKept(t, r.id, three[r.id], two[r.id])
	}
	requireFenced(t, st, three[gone.id])

	// A new replica joins: it takes its share from the two, and nothing
	// moves between them.
	d := startReplica(t, log, "d", newZK("d"), st, count)
	withD := awaitBalanced(t, append(slices.Clone(stay), d), count)
	for _, r := range stay {
		requireKept(t, r.id, withD[r.id], two[r.id])
	}
	require.GreaterOrEqual(t, len(withD["d"]), count/3)

	// The leader leaves: the new leader moves its partitions only.
	stay = slices.DeleteFunc(append(slices.Clone(stay), d), func(r *replica) bool { return r == leader })
	leader.stop()
	last := awaitBalanced(t, stay, count)
	for _, r := range stay {
		requireKept(t, r.id, withD[r.id], last[r.id])
	}
	requireFenced(t, st, withD[leader.id])
	var maxBefore int64
	for _, o := range withD {
		for _, e := range o {
			maxBefore = max(maxBefore, e)
		}
	}
	for _, r := range stay {
		for p := range withD[leader.id] {
			if e, ok := last[r.id][p]; ok {
				require.Greater(t, e, maxBefore, "a partition handed over by the new leader has an epoch above every earlier one")
			}
		}
	}
	records, err := st.Partitions(context.Background())
	require.NoError(t, err)
	require.Len(t, records, count)
	for _, rec := range records {
		owner := ""
		for id, o := range last {
			if o[rec.Partition] == rec.Epoch {
				owner = id
			}
		}
		require.Equal(t, owner, rec.Holder, "the database records the owner of partition %d", rec.Partition)
	}
}

// TestOlderAdminsGetNoPartitions: during a rolling upgrade, an admin of
// an older version registers no features and does not fire by partition;
// an upgraded leader gives it no partitions (the upgraded admins share
// them all), and when the upgraded leader leaves, the next upgraded admin
// takes everything the leader had, still none for the older one.
func TestOlderAdminsGetNoPartitions(t *testing.T) {
	t.Parallel()
	server := testenv.ZooKeeper(t)
	st := storetest.Open(t, sqlfiles.MySQL)
	root := "/shardjob-test/" + t.Name()
	const count = 64
	log := testLogger(t)
	newZK := func(id string, features ...string) elector {
		e, err := coord.NewZK(coord.ZKConfig{Servers: []string{server}, Root: root, ID: id, SessionTimeout: 10 * time.Second,
			ConnectTimeout: 20 * time.Second, Logger: log, Features: features})
		require.NoError(t, err)
		return e
	}
	const feature = ownership.FeatureFireByPartition
	n1 := startRequiring(t, log, "new1", newZK("new1", feature), st, count, feature)
	require.Equal(t, n1, leaderOf(t, []*replica{n1}))
	n2 := startRequiring(t, log, "new2", newZK("new2", feature), st, count, feature)
	awaitBalanced(t, []*replica{n1, n2}, count)
	// The older admin: no features, and (being older) no requirement of
	// its own; it follows the published assignment like any replica.
	old := startReplica(t, log, "old", newZK("old"), st, count)
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		pub, _, err := n1.e.WatchAssignment(context.Background())
		if err != nil {
			return false, err
		}
		p, err := ownership.Decode(pub.Data)
		return err == nil && fmt.Sprint(p.LeftOut) == "[old]", fmt.Errorf("published %+v, %v", p.LeftOut, err)
	}, "the leader publishes that it left the older admin out")
	two := awaitBalanced(t, []*replica{n1, n2}, count)
	owned, _ := old.k.Owned()
	require.Empty(t, owned, "an admin without the feature owns nothing")

	// The upgraded leader leaves; new2 campaigned before the older admin,
	// so it leads next and takes new1's partitions; new2 keeps its own.
	n1.stop()
	require.Equal(t, n2, leaderOf(t, []*replica{n2, old}))
	all := awaitBalanced(t, []*replica{n2}, count)
	requireKept(t, "new2", two["new2"], all["new2"])
	requireFenced(t, st, two["new1"])
	owned, _ = old.k.Owned()
	require.Empty(t, owned, "still none for the older admin")
}

// TestOneReplicaOwnsEverything: standalone mode (the in-process
// coordinator, SQLite) owns every partition with one replica, and nothing
// after it stopped.
func TestOneReplicaOwnsEverything(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, sqlfiles.SQLite)
	r := startReplica(t, testLogger(t), "standalone", coord.NewLocal(coord.LocalConfig{ID: "standalone"}), st, 16)
	owned := awaitBalanced(t, []*replica{r}, 16)
	require.Len(t, owned["standalone"], 16)
	r.stop()
	after, _ := r.k.Owned()
	require.Empty(t, after, "a stopped keeper owns nothing")
	require.Empty(t, slices.Collect(maps.Keys(after)))
}

// TestAssignmentOfAnotherCountIsNotClaimed: a replica ignores an
// assignment published for another partition count (a leader started
// before a repartition): it claims none of it, and claims an assignment
// for its own count.
func TestAssignmentOfAnotherCountIsNotClaimed(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, sqlfiles.SQLite)
	k, err := ownership.New(ownership.Config{ID: "b", Count: 32, Board: coord.NewLocal(coord.LocalConfig{ID: "b"}), Store: st,
		Logger: testLogger(t)})
	require.NoError(t, err)
	publish := func(count int) coord.Published {
		a := partition.Assignment{Owners: make([]string, count), Epochs: make([]int64, count)}
		for p := range count {
			a.Owners[p], a.Epochs[p] = "b", partition.NextEpoch(7, 1)
		}
		data, err := json.Marshal(ownership.Published{Leader: "a", Term: 7, Assignment: a})
		require.NoError(t, err)
		return coord.Published{Data: data, Trusted: true}
	}
	ctx := context.Background()
	require.True(t, k.Follow(ctx, publish(16)))
	owned, _ := k.Owned()
	require.Empty(t, owned, "an assignment of 16 partitions is not for a keeper of 32")
	records, err := st.Partitions(ctx)
	require.NoError(t, err)
	require.Empty(t, records, "nothing claimed in the database")

	require.True(t, k.Follow(ctx, publish(32)))
	owned, _ = k.Owned()
	require.Len(t, owned, 32)
}
