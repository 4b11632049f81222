package watchdog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/watchdog"
)

// TestGapAuditOfSeveralZones: a job with the zones Shanghai, Singapore
// (the same instants) and London expects one run per distinct instant of
// their union — two a day — so the rows the leader writes for it are no
// gap, and a London firing without a row is one.
func TestGapAuditOfSeveralZones(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		created := time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC)
		mk := func(name string) int64 {
			v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: name, Handler: "h", Cron: "0 9 * * *",
				TimeZones: []string{"Asia/Shanghai", "Asia/Singapore", "Europe/London"}}}, created)
			require.NoError(t, err)
			return createJobAt(t, st, v.Job, created)
		}
		complete, holey := mk("complete"), mk("holey")
		// 28th to 30th across London's spring forward: Shanghai at 01:00Z,
		// London at 09:00Z (GMT) then 08:00Z (BST).
		instants := []time.Time{
			time.Date(2026, 3, 28, 1, 0, 0, 0, time.UTC), time.Date(2026, 3, 28, 9, 0, 0, 0, time.UTC),
			time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC), time.Date(2026, 3, 29, 8, 0, 0, 0, time.UTC),
			time.Date(2026, 3, 30, 1, 0, 0, 0, time.UTC), time.Date(2026, 3, 30, 8, 0, 0, 0, time.UTC),
		}
		for i, at := range instants {
			zone := "Asia/Shanghai"
			if i%2 == 1 {
				zone = "Europe/London"
			}
			for _, id := range []int64{complete, holey} {
				if id == holey && i == 3 {
					continue // the London firing of the 29th is missing
				}
				_, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: id, ScheduledAt: at.UnixMilli(), TriggerKind: store.TriggerCron,
					Status: store.RunPending, SlotCount: 1, TimeZone: zone})
				require.NoError(t, err)
			}
		}
		w, err := watchdog.New(watchdog.Config{ID: "r"}, st)
		require.NoError(t, err)
		n, err := w.AuditGaps(ctx, time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		alarms, err := st.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1)
		require.Equal(t, holey, alarms[0].JobID.Int64)
		require.Contains(t, alarms[0].Message, "1 of 6 firings")
	})
}
