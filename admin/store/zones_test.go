package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

// A job's zones are stored in list order, and each run keeps the zone of
// its firing: InsertRun (the one run, read back by its key), InsertRuns (a
// batch), Run and Runs all answer it.
func TestJobZonesAndTheRunsZone(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		j := store.Job{App: "a", Name: "open", Handler: "h", CronExpr: "0 9 * * *", TimeZone: "Asia/Tokyo",
			TimeZones: "Asia/Tokyo,Europe/London,America/New_York", MisfirePolicy: "run_once", OverlapPolicy: "allow",
			MisfireMS: 60000, MaxCatchUp: 10, SlotCount: 1, Enabled: true}
		id, err := st.CreateJob(ctx, j)
		require.NoError(t, err)
		got, err := st.Job(ctx, id)
		require.NoError(t, err)
		require.Equal(t, []string{"Asia/Tokyo", "Europe/London", "America/New_York"}, got.Zones())
		got.TimeZones = ""
		require.NoError(t, st.UpdateJob(ctx, got))
		got, err = st.Job(ctx, id)
		require.NoError(t, err)
		require.Equal(t, []string{"Asia/Tokyo"}, got.Zones(), "no list: the one zone")

		one, created, err := st.InsertRun(ctx, 1, store.NewRun{JobID: id, ScheduledAt: 1774688400000, TriggerKind: store.TriggerCron,
			Status: store.RunPending, SlotCount: 1, TimeZone: "Europe/London"})
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, "Europe/London", one.TimeZone)
		err = st.Tx(ctx, func(tx *store.Tx) error {
			_, err := tx.InsertRuns(ctx, 1, []store.NewRun{
				{JobID: id, ScheduledAt: 1774746000000, TriggerKind: store.TriggerCron, Status: store.RunPending, SlotCount: 1, TimeZone: "Asia/Tokyo"},
				{JobID: id, ScheduledAt: 1774789200000, TriggerKind: store.TriggerCatchUp, Status: store.RunSkipped, SlotCount: 1, TimeZone: "America/New_York"},
			})
			return err
		})
		require.NoError(t, err)
		byID, err := st.Run(ctx, one.ID)
		require.NoError(t, err)
		require.Equal(t, "Europe/London", byID.TimeZone)
		runs, err := st.Runs(ctx, store.RunFilter{JobID: id, Limit: 10})
		require.NoError(t, err)
		zones := map[int64]string{}
		for _, r := range runs {
			zones[r.ScheduledAt] = r.TimeZone
		}
		require.Equal(t, map[int64]string{1774688400000: "Europe/London", 1774746000000: "Asia/Tokyo", 1774789200000: "America/New_York"}, zones)
	})
}
