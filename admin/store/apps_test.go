package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestMigration0040GivesEveryAppItsRow: on a database of version 39, the
// apps are the names its jobs (app_job_count) and executors carry; after
// migration 0040 each has its row, with nothing said of it and no quota
// (0041). Down and up again work.
func TestMigration0040GivesEveryAppItsRow(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.SteppedDialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storetest.OpenEmpty(t, dialect)
			_, err := s.MigrateTo(ctx, 39)
			require.NoError(t, err)
			db := s.DB()
			exec := func(q string, args ...any) {
				t.Helper()
				_, err := db.ExecContext(ctx, db.Rebind(q), args...)
				require.NoError(t, err, q)
			}
			exec(`INSERT INTO app_job_count (app, jobs) VALUES ('billing', 3), ('search', 1)`)
			exec(`INSERT INTO executor (instance_id, app, address, capacity, version, handlers, state, registered_at, last_heartbeat) VALUES
				('ex-1', 'search', 'http://127.0.0.1:1', 1, '', '', 'online', 1, 1), ('ex-2', 'reports', 'http://127.0.0.1:2', 1, '', '', 'online', 1, 1)`)
			_, err = s.Migrate(ctx) // 0040, and the later ones the store's reads need
			require.NoError(t, err)
			names := func() []string {
				apps, err := s.Apps(ctx)
				require.NoError(t, err)
				var out []string
				for _, a := range apps {
					out = append(out, a.Name)
					require.Equal(t, int64(1), a.Version)
					require.Empty(t, a.Description)
					require.Nil(t, a.OwnerList())
					require.False(t, a.MaxJobs.Valid || a.MaxSlotsPerRun.Valid || a.MaxBackfillParallel.Valid, "no quota")
				}
				return out
			}
			require.Equal(t, []string{"billing", "reports", "search"}, names())
			_, err = s.MigrateTo(ctx, 39)
			require.NoError(t, err)
			_, err = s.Migrate(ctx)
			require.NoError(t, err)
			require.Equal(t, []string{"billing", "reports", "search"}, names())
		})
	}
}

// TestAppsComeWithTheirFirstJobOrExecutor: a job, a workflow or an
// executor that names a new app creates its row (once); a created app
// keeps what was said of it; an edit needs the version read.
func TestAppsComeWithTheirFirstJobOrExecutor(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		_, err := s.CreateJob(ctx, store.Job{App: "billing", Name: "a", Handler: "h", CronExpr: "0 3 * * *", TimeZone: "UTC",
			MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 1, Params: "{}", Enabled: true})
		require.NoError(t, err)
		_, err = s.CreateJob(ctx, store.Job{App: "billing", Name: "b", Handler: "h", CronExpr: "0 3 * * *", TimeZone: "UTC",
			MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 1, Params: "{}", Enabled: true})
		require.NoError(t, err)
		_, err = s.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex", App: "search", Address: "http://127.0.0.1:1", Capacity: 1})
		require.NoError(t, err)
		_, err = s.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "ex", App: "search", Address: "http://127.0.0.1:1", Capacity: 1})
		require.NoError(t, err)
		require.NoError(t, s.CreateApp(ctx, store.App{Name: "reports", Description: "monthly reports", Owners: "rita,ops@example.com", CreatedBy: "ada"}))
		require.ErrorIs(t, s.CreateApp(ctx, store.App{Name: "reports"}), store.ErrConflict)
		require.NoError(t, s.EnsureApp(ctx, "reports"), "an app with its row keeps it")

		apps, err := s.Apps(ctx)
		require.NoError(t, err)
		require.Len(t, apps, 3)
		require.Equal(t, []string{"billing", "reports", "search"}, []string{apps[0].Name, apps[1].Name, apps[2].Name})
		reports := apps[1]
		require.Equal(t, "monthly reports", reports.Description)
		require.Equal(t, []string{"rita", "ops@example.com"}, reports.OwnerList())
		require.Equal(t, "ada", reports.CreatedBy)

		reports.Description, reports.UpdatedBy = "reports for finance", "rita"
		require.NoError(t, s.UpdateApp(ctx, reports))
		require.ErrorIs(t, s.UpdateApp(ctx, reports), store.ErrConflict, "version 1 is stale now")
		got, err := s.App(ctx, "reports")
		require.NoError(t, err)
		require.Equal(t, int64(2), got.Version)
		require.Equal(t, "reports for finance", got.Description)
		require.Equal(t, "rita", got.UpdatedBy)
		_, err = s.App(ctx, "nope")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, s.UpdateApp(ctx, store.App{Name: "nope", Version: 1}), store.ErrNotFound)
	})
}
