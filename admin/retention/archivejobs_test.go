package retention_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/retention"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

func TestParseArchiveJobs(t *testing.T) {
	t.Parallel()
	m, err := retention.ParseArchiveJobs(" billing=billing-db , search=s ")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"billing": "billing-db", "search": "s"}, m)
	for _, bad := range []string{"billing", "=x", "a=", "a=x,a=y"} {
		_, err := retention.ParseArchiveJobs(bad)
		require.Error(t, err, bad)
	}
}

// TestEnsureArchiveJobs: the archive job is created once per app, valid for
// the dedup-archive handler, and an operator's edit is never overwritten.
func TestEnsureArchiveJobs(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		created, err := retention.EnsureArchiveJobs(ctx, st, map[string]string{"billing": "billing-db"})
		require.NoError(t, err)
		require.Equal(t, []string{"billing"}, created)
		jobs, err := st.Jobs(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		j := jobs[0]
		require.Equal(t, "dedup-archive", j.Handler)
		require.JSONEq(t, `{"datasource":"billing-db","mode":"archive","horizon":"720h"}`, j.Params)
		require.True(t, j.Enabled)

		_, err = st.DB().Exec(`UPDATE job SET params = '{"datasource":"other"}' WHERE id = ?`, j.ID)
		require.NoError(t, err)
		created, err = retention.EnsureArchiveJobs(ctx, st, map[string]string{"billing": "billing-db", "search": "s"})
		require.NoError(t, err)
		require.Equal(t, []string{"search"}, created, "existing job left alone")
		again, err := st.Job(ctx, j.ID)
		require.NoError(t, err)
		require.JSONEq(t, `{"datasource":"other"}`, again.Params)
	})
}
