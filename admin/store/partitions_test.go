package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// TestPartitionEpochsOnlyGoUp: a partition's claim wins only above the
// recorded epoch (or repeated by the same holder at the same epoch), and
// the fence of a former owner fails once a successor claimed.
func TestPartitionEpochsOnlyGoUp(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		fence := func(p int, epoch int64) error {
			return s.Tx(ctx, func(tx *store.Tx) error { return tx.CheckPartitionEpoch(ctx, p, epoch) })
		}
		require.ErrorIs(t, fence(3, 1), store.ErrStaleEpoch, "a partition never claimed has no owner")

		won, err := s.ClaimPartitions(ctx, "a", []store.PartitionClaim{{Partition: 5, Epoch: 10}, {Partition: 3, Epoch: 10}, {Partition: 0, Epoch: 7}})
		require.NoError(t, err)
		require.Equal(t, []int{0, 3, 5}, won, "fresh partitions are won, reported in partition order")
		require.NoError(t, fence(3, 10))
		require.NoError(t, fence(0, 7))

		won, err = s.ClaimPartitions(ctx, "a", []store.PartitionClaim{{Partition: 3, Epoch: 10}})
		require.NoError(t, err)
		require.Equal(t, []int{3}, won, "the same claim again (a lost answer) still holds")
		won, err = s.ClaimPartitions(ctx, "b", []store.PartitionClaim{{Partition: 3, Epoch: 10}, {Partition: 5, Epoch: 9}})
		require.NoError(t, err)
		require.Empty(t, won, "another holder at the same or a lower epoch wins nothing")
		require.NoError(t, fence(3, 10), "a refused claim leaves the owner in place")

		won, err = s.ClaimPartitions(ctx, "b", []store.PartitionClaim{{Partition: 3, Epoch: 11}, {Partition: 5, Epoch: 9}})
		require.NoError(t, err)
		require.Equal(t, []int{3}, won)
		require.ErrorIs(t, fence(3, 10), store.ErrStaleEpoch, "the former owner is fenced")
		require.NoError(t, fence(3, 11))
		require.NoError(t, fence(5, 10), "the other partitions are not disturbed")

		recs, err := s.Partitions(ctx)
		require.NoError(t, err)
		require.Len(t, recs, 3)
		require.Equal(t, 3, recs[1].Partition)
		require.Equal(t, "b", recs[1].Holder)
		require.Equal(t, int64(11), recs[1].Epoch)
		require.Positive(t, recs[1].ClaimedMS)
		require.Equal(t, "a", recs[2].Holder)

		_, err = s.ClaimPartitions(ctx, "", []store.PartitionClaim{{Partition: 1, Epoch: 1}})
		require.ErrorContains(t, err, "empty holder")
		_, err = s.ClaimPartitions(ctx, "a", []store.PartitionClaim{{Partition: 1, Epoch: 0}})
		require.ErrorContains(t, err, "epochs > 0")
		_, err = s.ClaimPartitions(ctx, "a", []store.PartitionClaim{{Partition: 1, Epoch: 2}, {Partition: 1, Epoch: 3}})
		require.ErrorContains(t, err, "claimed twice")
	})
}

// TestPartitionClaimWaitsForTheFormerOwner: a successor's claim waits for
// the former owner's open transaction that checked the partition's epoch;
// what that transaction wrote commits before the hand-over, and nothing the
// former owner tries after it does (the per-partition form of the leader
// fence; SQLite has one writer, so the wait is the servers' only).
func TestPartitionClaimWaitsForTheFormerOwner(t *testing.T) {
	t.Parallel()
	for _, d := range []string{sqlfiles.MySQL, sqlfiles.Postgres} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			s := storetest.Open(t, d)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := s.ClaimPartitions(ctx, "old", []store.PartitionClaim{{Partition: 42, Epoch: 1}, {Partition: 43, Epoch: 1}})
			require.NoError(t, err)

			// The former owner's transaction: fenced, then a write (the
			// partition's row is the only row here; any table would do).
			old, err := s.DB().BeginTxx(ctx, nil)
			require.NoError(t, err)
			defer func() { _ = old.Rollback() }()
			require.NoError(t, s.TxOf(old).CheckPartitionEpoch(ctx, 42, 1))

			claimed := make(chan []int, 1)
			claimErr := make(chan error, 1)
			go func() {
				won, err := s.ClaimPartitions(ctx, "new", []store.PartitionClaim{{Partition: 42, Epoch: 2}})
				claimErr <- err
				claimed <- won
			}()
			waitForRowLockWait(t, s)
			select {
			case err := <-claimErr:
				t.Fatalf("the claim finished while the former owner's transaction was open: %v", err)
			default:
			}
			_, err = old.ExecContext(ctx, old.Rebind(`UPDATE scheduler_partition SET holder = 'old-wrote' WHERE id = 43`))
			require.NoError(t, err)
			require.NoError(t, old.Commit())
			require.NoError(t, <-claimErr)
			require.Equal(t, []int{42}, <-claimed)

			// After the hand-over the former owner's next transaction fails.
			err = s.Tx(ctx, func(tx *store.Tx) error { return tx.CheckPartitionEpoch(ctx, 42, 1) })
			require.ErrorIs(t, err, store.ErrStaleEpoch)
			recs, err := s.Partitions(ctx)
			require.NoError(t, err)
			require.Equal(t, "new", recs[0].Holder)
			require.Equal(t, "old-wrote", recs[1].Holder, "the write made under the fence before the hand-over committed")
		})
	}
}

// waitForRowLockWait polls the server until one of this test database's
// sessions waits for a row lock (the claim, behind the shared lock).
func waitForRowLockWait(t *testing.T, s *store.Store) {
	t.Helper()
	q := `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
	if s.Dialect() == sqlfiles.MySQL {
		q = `SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		require.NoError(t, sqlx.Get(s.DB(), &n, q))
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no session waited for a row lock within 30s: the claim did not wait for the former owner")
		}
		// InnoDB refreshes what INNODB_TRX shows only when nobody read it
		// for 100 ms: polling faster would see the first snapshot forever.
		time.Sleep(150 * time.Millisecond)
	}
}
