package store_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

func TestAlarmRoutesRoundTrip(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		require.NoError(t, s.SetAlarmRoutes(ctx, 4, []store.AlarmRoute{{Channel: "ops"}, {Channel: "mail", Recipient: "a@example.com"}}))
		require.NoError(t, s.SetAlarmRoutes(ctx, 5, []store.AlarmRoute{{Channel: "ops"}}))
		got, err := s.AlarmRoutes(ctx, 4)
		require.NoError(t, err)
		require.Equal(t, []store.AlarmRoute{{JobID: 4, Channel: "mail", Recipient: "a@example.com"}, {JobID: 4, Channel: "ops"}}, got)
		require.NoError(t, s.SetAlarmRoutes(ctx, 4, nil))
		got, err = s.AlarmRoutes(ctx, 4)
		require.NoError(t, err)
		require.Empty(t, got)
		got, err = s.AlarmRoutes(ctx, 5)
		require.NoError(t, err)
		require.Len(t, got, 1)
	})
}

func TestAlarmDeliveryLifecycle(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for i := range 3 {
			// Three runs: three alarm groups, one delivery each.
			_, err := s.RaiseAlarm(ctx, store.Alarm{Kind: store.AlarmRunFailed, Severity: "critical", JobID: sql.NullInt64{Int64: 8, Valid: true},
				RunID: sql.NullInt64{Int64: int64(i + 1), Valid: true}, DedupKey: "lifecycle:" + strconv.Itoa(i), Message: "failed", RaisedBy: "test"})
			require.NoError(t, err)
		}
		now := time.Now()
		toOps := func(store.Alarm, []store.AlarmRoute) []store.AlarmDest { return []store.AlarmDest{{Channel: "ops"}} }
		a, d, err := s.FanOutAlarms(ctx, now, 10, toOps)
		require.NoError(t, err)
		require.Equal(t, 3, a)
		require.Equal(t, 3, d)
		a, _, err = s.FanOutAlarms(ctx, now, 10, toOps)
		require.NoError(t, err)
		require.Zero(t, a, "fanned out once")

		// The first claim takes the oldest alarm alone and leases its group.
		bs, err := s.ClaimAlarmBatches(ctx, now, "r1", time.Minute, 10, 5)
		require.NoError(t, err)
		require.Len(t, bs, 1)
		require.False(t, bs[0].Digest)
		require.Equal(t, 1, bs[0].Count)
		require.Equal(t, "ops", bs[0].Channel)
		require.Equal(t, int64(8), bs[0].JobID.Int64)
		bs2, err := s.ClaimAlarmBatches(ctx, now, "r2", time.Minute, 10, 5)
		require.NoError(t, err)
		require.Empty(t, bs2, "leased")

		// The lease expires; another replica claims it; the first one's
		// outcome is then refused.
		later := now.Add(time.Minute)
		bs2, err = s.ClaimAlarmBatches(ctx, later, "r2", time.Minute, 10, 5)
		require.NoError(t, err)
		require.Len(t, bs2, 1)
		require.ErrorIs(t, s.AlarmBatchSent(ctx, later, bs[0], time.Minute), store.ErrLeaseLost)
		require.NoError(t, s.AlarmBatchSent(ctx, later, bs2[0], time.Minute))

		// Inside the window nothing is due; after it, the rest is one digest.
		bs, err = s.ClaimAlarmBatches(ctx, later.Add(59*time.Second), "r1", time.Minute, 10, 5)
		require.NoError(t, err)
		require.Empty(t, bs)
		end := later.Add(time.Minute)
		bs, err = s.ClaimAlarmBatches(ctx, end, "r1", time.Minute, 10, 5)
		require.NoError(t, err)
		require.Len(t, bs, 1)
		require.True(t, bs[0].Digest)
		require.Equal(t, 2, bs[0].Count)
		require.Equal(t, []store.AlarmCount{{Kind: store.AlarmRunFailed, JobID: sql.NullInt64{Int64: 8, Valid: true}, N: 2}}, bs[0].Counts)

		// A failure schedules a retry; giving up marks the alarms failed.
		require.NoError(t, s.AlarmBatchFailed(ctx, end, bs[0], "boom", end.Add(time.Second), false))
		bs, err = s.ClaimAlarmBatches(ctx, end, "r1", time.Minute, 10, 5)
		require.NoError(t, err)
		require.Empty(t, bs, "not before retry_at")
		bs, err = s.ClaimAlarmBatches(ctx, end.Add(time.Second), "r1", time.Minute, 10, 5)
		require.NoError(t, err)
		require.Len(t, bs, 1)
		require.Equal(t, 1, bs[0].Attempts)
		require.NoError(t, s.AlarmBatchFailed(ctx, end.Add(time.Second), bs[0], "boom again", time.Time{}, true))
		counts, err := s.AlarmDeliveryCounts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{store.DeliverySent: 1, store.DeliveryFailed: 2}, counts)
	})
}
