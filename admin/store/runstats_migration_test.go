package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestMigration0055SumsTheFoldedMinutes: the rollup's minutes folded before
// migration 0055 get their row of every app together (run_stat_minute_all),
// so a view of every app (which reads those rows only) still shows them;
// rolled back and forward again, nothing is counted twice.
func TestMigration0055SumsTheFoldedMinutes(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storetest.OpenEmpty(t, dialect)
			_, err := s.MigrateTo(ctx, 54)
			require.NoError(t, err)
			db := s.DB()
			const m = 60 * store.MinuteMS * 1000 // a minute boundary
			_, err = db.ExecContext(ctx, db.Rebind(`INSERT INTO run_stat_minute (minute, app, started, succeeded, failed, lag_0, lag_11) VALUES
				(?, 'billing', 3, 2, 1, 2, 1), (?, 'search', 5, 5, 0, 4, 1), (?, 'search', 1, 0, 1, 1, 0)`), m, m, m+store.MinuteMS)
			require.NoError(t, err)
			check := func() {
				t.Helper()
				all, err := s.RunStats(ctx, store.RunStatFilter{FromMS: m, ToMS: m + 2*store.MinuteMS})
				require.NoError(t, err)
				require.Len(t, all, 2)
				require.Equal(t, store.RunStat{Minute: m, Started: 8, Succeeded: 7, Failed: 1, Lag: [store.LagBuckets]int64{0: 6, 11: 2}}, all[0])
				require.Equal(t, store.RunStat{Minute: m + store.MinuteMS, Started: 1, Failed: 1, Lag: [store.LagBuckets]int64{0: 1}}, all[1])
				one, err := s.RunStats(ctx, store.RunStatFilter{FromMS: m, ToMS: m + 2*store.MinuteMS, Apps: []string{"search"}})
				require.NoError(t, err)
				require.Len(t, one, 2)
				require.EqualValues(t, 5, one[0].Started, "an app's own rows are unchanged")
			}
			_, err = s.Migrate(ctx)
			require.NoError(t, err)
			check()
			_, err = s.MigrateTo(ctx, 54)
			require.NoError(t, err)
			_, err = s.Migrate(ctx)
			require.NoError(t, err)
			check()
		})
	}
}
