package store_test

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestPartitionOfSQLAgrees: the partition the database fills in a job's
// partition_id is partition.Of(id, count), on every dialect, for
// consecutive ids and for ids at the edges of the arithmetic (the hash
// folds the id's two 32-bit halves; every intermediate value must stay
// below 2^63).
func TestPartitionOfSQLAgrees(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		for _, count := range []int{1, 7, partition.DefaultCount, partition.MaxCount} {
			t.Run(d+"/"+itoa(count), func(t *testing.T) {
				t.Parallel()
				s := storetest.OpenWith(t, d, func(c *store.Config) { c.PartitionCount = count })
				ctx := context.Background()
				db := s.DB()
				var ids []int64
				for i := range 40 {
					id, err := s.CreateJob(ctx, newJob("a", "j"+itoa(i), 0))
					require.NoError(t, err)
					ids = append(ids, id)
				}
				// Move some jobs to far ids, unfilled, and let the store fill them.
				far := []int64{1<<31 - 1, 1 << 31, 1<<32 - 1, 1 << 32, 1<<32 + 5, 3<<32 + 1<<31, 1<<40 + 7, 1<<62 + 3, math.MaxInt64}
				for i, id := range far {
					_, err := db.ExecContext(ctx, db.Rebind(`UPDATE job SET id = ?, partition_id = NULL WHERE id = ?`), id, ids[i])
					require.NoError(t, err)
					ids[i] = id
				}
				n, err := s.FillJobPartitions(ctx)
				require.NoError(t, err)
				require.Equal(t, int64(len(far)), n, "only the unfilled jobs are filled")
				for _, id := range ids {
					var p int
					require.NoError(t, db.GetContext(ctx, &p, db.Rebind(`SELECT partition_id FROM job WHERE id = ?`), id))
					require.Equal(t, partition.Of(id, count), p, "job %d over %d partitions", id, count)
				}
				n, err = s.FillJobPartitions(ctx)
				require.NoError(t, err)
				require.Zero(t, n, "nothing left to fill")
			})
		}
	}
}

// TestDueJobsByPartition: an owner claims, counts and waits for the due
// jobs of its partitions only, and its check of their epochs fails once
// another admin claimed one of them.
func TestDueJobsByPartition(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		count := s.PartitionCount()
		now := time.Now().UnixMilli()
		byPart := map[int][]int64{}
		for i := range 200 {
			next := now - 1000 + int64(i) // all due, in creation order
			id, err := s.CreateJob(ctx, newJob("a", "j"+itoa(i), next))
			require.NoError(t, err)
			p := partition.Of(id, count)
			byPart[p] = append(byPart[p], id)
		}
		// Ours: every third partition that has jobs.
		var ours []int
		owned := map[int]int64{}
		var want []int64
		for p := range count {
			if p%3 == 0 {
				ours = append(ours, p)
				owned[p] = int64(100 + p)
				want = append(want, byPart[p]...)
			}
		}
		require.NotEmpty(t, want)
		claims := make([]store.PartitionClaim, 0, len(ours))
		for _, p := range ours {
			claims = append(claims, store.PartitionClaim{Partition: p, Epoch: owned[p]})
		}
		won, err := s.ClaimPartitions(ctx, "a", claims)
		require.NoError(t, err)
		require.Equal(t, ours, won)

		n, err := s.CountDueIn(ctx, ours, now, 1000)
		require.NoError(t, err)
		require.Equal(t, len(want), n)
		n, err = s.CountDueIn(ctx, ours, now, 3)
		require.NoError(t, err)
		require.Equal(t, 3, n, "counts up to the limit")
		next, err := s.NextDueIn(ctx, ours)
		require.NoError(t, err)
		j, err := s.Job(ctx, slices.Min(want))
		require.NoError(t, err)
		require.Equal(t, j.NextFireAt.Int64, next.Int64, "the earliest due job of our partitions is the oldest of ours")

		var got []int64
		for {
			var batch []store.Job
			require.NoError(t, s.Tx(ctx, func(tx *store.Tx) error {
				if err := tx.CheckPartitionEpochs(ctx, ours, owned); err != nil {
					return err
				}
				batch, err = tx.ClaimDueIn(ctx, ours, now, 7)
				if err != nil {
					return err
				}
				next := map[int64]sql.NullInt64{} // fired for good
				for _, j := range batch {
					next[j.ID] = sql.NullInt64{}
				}
				return tx.SetNextFire(ctx, next)
			}))
			for _, j := range batch {
				require.Contains(t, ours, partition.Of(j.ID, count), "job %d is not of our partitions", j.ID)
				got = append(got, j.ID)
			}
			if len(batch) < 7 {
				break
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		require.Equal(t, want, got, "every due job of our partitions claimed once, no other")

		// Jobs paused until an instant: ours count for the wake-up and are
		// resumed by ours, the others' are not.
		mine, theirs := want[0], int64(0)
		for p, ids := range byPart {
			if p%3 != 0 && len(ids) > 0 {
				theirs = ids[0]
				break
			}
		}
		require.NotZero(t, theirs)
		require.NoError(t, s.PauseJobUntil(ctx, mine, now+5000, sql.NullInt64{Int64: now, Valid: true}))
		require.NoError(t, s.PauseJobUntil(ctx, theirs, now+3000, sql.NullInt64{Int64: now, Valid: true}))
		end, err := s.NextPauseEndIn(ctx, ours)
		require.NoError(t, err)
		require.Equal(t, now+5000, end.Int64, "the pause of another partition's job is not ours")
		require.NoError(t, s.Tx(ctx, func(tx *store.Tx) error {
			n, err := tx.ResumeDueIn(ctx, ours, now+10_000)
			require.Equal(t, int64(1), n)
			return err
		}))
		for id, paused := range map[int64]bool{mine: false, theirs: true} {
			j, err := s.Job(ctx, id)
			require.NoError(t, err)
			require.Equal(t, paused, j.Paused, "job %d", id)
		}

		// Another admin takes one partition: our check fails, the others' hold.
		_, err = s.ClaimPartitions(ctx, "b", []store.PartitionClaim{{Partition: ours[1], Epoch: owned[ours[1]] + 1}})
		require.NoError(t, err)
		err = s.Tx(ctx, func(tx *store.Tx) error { return tx.CheckPartitionEpochs(ctx, ours, owned) })
		require.ErrorIs(t, err, store.ErrStaleEpoch)
		require.ErrorContains(t, err, "partition "+itoa(ours[1]))
		require.NoError(t, s.Tx(ctx, func(tx *store.Tx) error { return tx.CheckPartitionEpochs(ctx, []int{ours[0], ours[2]}, owned) }))
		err = s.Tx(ctx, func(tx *store.Tx) error { return tx.CheckPartitionEpochs(ctx, []int{1}, map[int]int64{1: 5}) })
		require.ErrorIs(t, err, store.ErrStaleEpoch, "a partition never claimed")
	})
}
