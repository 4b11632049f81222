package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestPartitionCountIsTheInstallations: the first admin records its
// partition count; a store opened with another count is refused with a
// message that says what to do; Repartition changes the count, computes
// every job's partition again for it and forgets every partition's
// fencing record; afterwards only the new count is agreed. On every
// dialect.
func TestPartitionCountIsTheInstallations(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := storetest.EmptyDSN(t, d)
			open := func(count int) *store.Store {
				s, err := store.Open(ctx, store.Config{Driver: d, DSN: dsn, PartitionCount: count})
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Close() })
				_, err = s.Migrate(ctx)
				require.NoError(t, err)
				return s
			}
			first := open(0) // the default count
			_, recorded, err := first.RecordedPartitionCount(ctx)
			require.NoError(t, err)
			require.False(t, recorded, "nothing recorded before an admin agreed")
			require.NoError(t, first.AgreePartitionCount(ctx))
			require.NoError(t, first.AgreePartitionCount(ctx), "agreeing again")
			n, ok, err := first.RecordedPartitionCount(ctx)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, partition.DefaultCount, n)

			var ids []int64
			for i := range 25 {
				id, err := first.CreateJob(ctx, newJob("a", "j"+itoa(i), 0))
				require.NoError(t, err)
				ids = append(ids, id)
			}
			won, err := first.ClaimPartitions(ctx, "admin-1", []store.PartitionClaim{{Partition: 3, Epoch: 1 << 32}, {Partition: 200, Epoch: 1 << 32}})
			require.NoError(t, err)
			require.Len(t, won, 2)

			other := open(16)
			err = other.AgreePartitionCount(ctx)
			var pce *store.PartitionCountError
			require.ErrorAs(t, err, &pce)
			require.Equal(t, store.PartitionCountError{Recorded: partition.DefaultCount, Configured: 16}, *pce)
			require.Contains(t, err.Error(), "start every admin with 256, or change the count with 'shardjob-admin repartition --count 16' while every admin is stopped")

			res, err := other.Repartition(ctx, 16)
			require.NoError(t, err)
			require.Equal(t, store.RepartitionResult{From: partition.DefaultCount, To: 16, Jobs: int64(len(ids))}, res)
			for _, id := range ids {
				var p int
				require.NoError(t, other.DB().GetContext(ctx, &p, other.DB().Rebind(`SELECT partition_id FROM job WHERE id = ?`), id))
				require.Equal(t, partition.Of(id, 16), p, "job %d", id)
			}
			parts, err := other.Partitions(ctx)
			require.NoError(t, err)
			require.Empty(t, parts, "the former partitions' records are forgotten")
			require.NoError(t, other.AgreePartitionCount(ctx))
			require.ErrorAs(t, first.AgreePartitionCount(ctx), &pce, "the former count is refused now")
			require.Equal(t, 16, pce.Recorded)

			_, err = other.Repartition(ctx, partition.MaxCount+1)
			require.ErrorContains(t, err, "must be 1-")
		})
	}
}
