package scheduler_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
)

// owner is a scheduler.Owner whose partitions a test sets, as
// ownership.Keeper sets a replica's after each claim.
type owner struct {
	mu      sync.Mutex
	owned   map[int]int64
	changed chan struct{}
}

func newOwner(owned map[int]int64) *owner {
	return &owner{owned: owned, changed: make(chan struct{})}
}

func (o *owner) Owned() (map[int]int64, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return maps.Clone(o.owned), o.changed
}

func (o *owner) set(owned map[int]int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.owned = owned
	close(o.changed)
	o.changed = make(chan struct{})
}

// claimAll claims, for holder, the partitions of owned at their epochs.
func claimAll(t *testing.T, st *store.Store, holder string, owned map[int]int64) {
	t.Helper()
	var claims []store.PartitionClaim
	for p, e := range owned {
		claims = append(claims, store.PartitionClaim{Partition: p, Epoch: e})
	}
	won, err := st.ClaimPartitions(context.Background(), holder, claims)
	require.NoError(t, err)
	require.Len(t, won, len(owned))
}

func partitioned(t *testing.T, st *store.Store, c *clock.Manual, id string, o *owner) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(scheduler.Config{ID: id, Clock: c, BatchSize: 50, Partitions: o}, st, &fakePusher{})
	require.NoError(t, err)
	return s
}

// TestOwnersFireOnlyTheirPartitions: two replicas that own half of the
// partitions each fire exactly the due jobs of theirs, each run recording
// its partition's epoch; every job fires once.
func TestOwnersFireOnlyTheirPartitions(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		count := st.PartitionCount()
		epochA, epochB := partition.NextEpoch(7, 1), partition.NextEpoch(7, 2)
		ownedA, ownedB := map[int]int64{}, map[int]int64{}
		for p := range count {
			if p%2 == 0 {
				ownedA[p] = epochA
			} else {
				ownedB[p] = epochB
			}
		}
		claimAll(t, st, "a", ownedA)
		claimAll(t, st, "b", ownedB)
		a := partitioned(t, st, c, "a", newOwner(ownedA))
		b := partitioned(t, st, c, "b", newOwner(ownedB))
		var jobs []store.Job
		for i := range 120 {
			jobs = append(jobs, createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: fmt.Sprintf("j%03d", i), Handler: "h", Cron: "* * * * *"}}, t0))
		}
		c.Set(t0.Add(time.Minute + 100*time.Millisecond))
		_, err := a.FireOwnedOnce(ctx)
		require.NoError(t, err)
		fromA := int64(0)
		for _, j := range jobs {
			runs := runsOf(t, st, j.ID)
			if partition.Of(j.ID, count)%2 != 0 {
				require.Empty(t, runs, "job %d is of b's partitions", j.ID)
				continue
			}
			require.Len(t, runs, 1, "job %d", j.ID)
			require.Equal(t, epochA, runs[0].Epoch, "the run records its partition's epoch")
			fromA++
		}
		require.Equal(t, fromA, a.Stats().Fired)
		require.Positive(t, fromA)
		require.Less(t, fromA, int64(len(jobs)))

		_, err = b.FireOwnedOnce(ctx)
		require.NoError(t, err)
		for _, j := range jobs {
			runs := runsOf(t, st, j.ID)
			require.Len(t, runs, 1, "job %d fired once", j.ID)
			want := epochA
			if partition.Of(j.ID, count)%2 != 0 {
				want = epochB
			}
			require.Equal(t, want, runs[0].Epoch)
			j2, err := st.Job(ctx, j.ID)
			require.NoError(t, err)
			require.Equal(t, t0.Add(2*time.Minute).UnixMilli(), j2.NextFireAt.Int64, "advanced by its owner")
		}
		require.Equal(t, int64(len(jobs))-fromA, b.Stats().Fired)

		// With partitions, the leader's round does not fire: a fourth
		// replica leading with nothing owned creates no run.
		c.Set(t0.Add(2*time.Minute + 100*time.Millisecond))
		lead := partitioned(t, st, c, "test", newOwner(map[int]int64{}))
		claim(t, st, 9)
		_, err = lead.Tick(ctx, 9)
		require.NoError(t, err)
		require.Zero(t, lead.Stats().Fired)
		for _, j := range jobs {
			require.Len(t, runsOf(t, st, j.ID), 1)
		}
	})
}

// TestFormerOwnerCannotFireAfterHandOver: once another replica claimed a
// partition at a larger epoch, the former owner's firing transaction
// fails its fence and writes nothing, not even for the partitions it
// still owns; once it follows the new assignment it fires those, and the
// new owner fires the moved partition's jobs under its epoch.
func TestFormerOwnerCannotFireAfterHandOver(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := clock.NewManual(t0)
		count := st.PartitionCount()
		old := partition.NextEpoch(3, 1)
		all := map[int]int64{}
		for p := range count {
			all[p] = old
		}
		claimAll(t, st, "a", all)
		oa := newOwner(all)
		a := partitioned(t, st, c, "a", oa)
		var jobs []store.Job
		for i := range 40 {
			jobs = append(jobs, createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: fmt.Sprintf("j%02d", i), Handler: "h", Cron: "* * * * *"}}, t0))
		}
		moved := partition.Of(jobs[0].ID, count)
		newer := partition.NextEpoch(4, 1)
		claimAll(t, st, "b", map[int]int64{moved: newer})

		c.Set(t0.Add(time.Minute + 100*time.Millisecond))
		_, err := a.FireOwnedOnce(ctx)
		require.ErrorIs(t, err, store.ErrStaleEpoch)
		for _, j := range jobs {
			require.Empty(t, runsOf(t, st, j.ID), "the fenced transaction wrote nothing")
		}

		rest := maps.Clone(all)
		delete(rest, moved)
		oa.set(rest)
		_, err = a.FireOwnedOnce(ctx)
		require.NoError(t, err)
		b := partitioned(t, st, c, "b", newOwner(map[int]int64{moved: newer}))
		_, err = b.FireOwnedOnce(ctx)
		require.NoError(t, err)
		for _, j := range jobs {
			runs := runsOf(t, st, j.ID)
			require.Len(t, runs, 1, "job %d", j.ID)
			if partition.Of(j.ID, count) == moved {
				require.Equal(t, newer, runs[0].Epoch)
			} else {
				require.Equal(t, old, runs[0].Epoch)
			}
		}
	})
}

// TestFireOwnedLoop: the loop fires what becomes due, fills the partition
// of a job loaded without one and fires it too, follows a change of its
// partitions, and returns when its context ends.
func TestFireOwnedLoop(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := clock.NewManual(t0)
		count := st.PartitionCount()
		epoch := partition.NextEpoch(2, 1)
		o := newOwner(map[int]int64{})
		s := partitioned(t, st, c, "a", o)
		var jobs []store.Job
		for i := range 20 {
			jobs = append(jobs, createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: fmt.Sprintf("j%02d", i), Handler: "h", Cron: "* * * * *"}}, t0))
		}
		// One job as a bulk loader writes it: no partition yet.
		_, err := st.DB().Exec(st.DB().Rebind(`UPDATE job SET partition_id = NULL WHERE id = ?`), jobs[3].ID)
		require.NoError(t, err)

		done := make(chan struct{})
		go func() { defer close(done); s.FireOwned(ctx) }()
		c.Set(t0.Add(time.Minute + 100*time.Millisecond))
		all := map[int]int64{}
		for p := range count {
			all[p] = epoch
		}
		claimAll(t, st, "a", all)
		o.set(all) // the loop was waiting for partitions
		require.Eventually(t, func() bool {
			for _, j := range jobs {
				if len(runsOf(t, st, j.ID)) != 1 {
					return false
				}
			}
			return true
		}, 20*time.Second, 20*time.Millisecond, "every job fired once, the unfilled one too")
		var p int
		require.NoError(t, st.DB().Get(&p, st.DB().Rebind(`SELECT partition_id FROM job WHERE id = ?`), jobs[3].ID))
		require.Equal(t, partition.Of(jobs[3].ID, count), p)

		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("FireOwned did not return after its context ended")
		}
	})
}
