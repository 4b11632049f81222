package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// dashboardSeed writes runs that ended in the last ten minutes (billing: 3
// succeeded with start lags of 80 ms, 400 ms and 3 s, 1 failed; search: 2
// succeeded) and folds those minutes into the rollup; it returns where the
// rollup is complete.
func dashboardSeed(t *testing.T, e *env) int64 {
	t.Helper()
	ctx := context.Background()
	dbNow, err := e.st.Now(ctx)
	require.NoError(t, err)
	until := dbNow.Truncate(time.Minute).UnixMilli()
	start := until - 10*60_000
	for i, r := range []struct {
		app, status string
		lag         int64
	}{{"billing", "succeeded", 80}, {"billing", "succeeded", 400}, {"billing", "succeeded", 3000}, {"billing", "failed", 80},
		{"search", "succeeded", 80}, {"search", "succeeded", 80}} {
		sched := start + int64(i)*60_000
		id := storetest.InsertID(t, e.st, `INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch,
			created_at, started_at, finished_at, app) VALUES (?, ?, 'cron', ?, '', 1, 1, ?, ?, ?, ?)`, 1000+i, sched, r.status, sched, sched, sched+20_000, r.app)
		_, err := e.st.DB().Exec(`INSERT INTO slot_attempt (run_id, slot, attempt, status, started_at) VALUES (?, 0, 1, ?, ?)`, id, r.status, sched+r.lag)
		require.NoError(t, err)
	}
	_, err = e.st.InitRunStats(ctx, start)
	require.NoError(t, err)
	for m := start; m < until; m += 60_000 {
		folded, err := e.st.FoldRunStats(ctx, m)
		require.NoError(t, err)
		require.True(t, folded)
	}
	return until
}

// TestDashboard: GET /dashboard answers the window that ends where the
// rollup is complete, in its buckets (1 minute for 1h, 2 hours for 7d),
// with the success rate and start-lag percentiles from the histogram; a
// user limited to apps gets the sums of their apps only, another app's
// runs do not exist for them; a window other than 1h, 6h, 24h, 7d is a 400
// that names it.
func TestDashboard(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		until := dashboardSeed(t, e)
		e.user("watch", auth.RoleViewer)
		viewer := e.token("watch")
		h, err := auth.HashPassword("password-billing-view")
		require.NoError(t, err)
		id, err := e.st.CreateUser(ctx, "billing-view", h, auth.RoleViewer)
		require.NoError(t, err)
		require.NoError(t, e.st.SetUserApps(ctx, id, []string{"billing"}))
		limited := e.token("billing-view")

		var got apitypes.Dashboard
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dashboard", viewer, nil, &got))
		require.Equal(t, "1h", got.Window, "1h by default")
		require.Equal(t, until, got.To.UnixMilli(), "the window ends where the rollup is complete")
		require.NotNil(t, got.CompleteUntil)
		require.Equal(t, until, got.CompleteUntil.UnixMilli())
		require.Equal(t, time.Hour, got.To.Sub(got.From))
		require.EqualValues(t, 60, got.BucketSeconds)
		require.Len(t, got.Buckets, 60)
		require.Equal(t, got.From, got.Buckets[0].At)
		require.EqualValues(t, 5, got.Totals.Succeeded)
		require.EqualValues(t, 1, got.Totals.Failed)
		require.EqualValues(t, 6, got.Totals.Started)
		require.InDelta(t, 5.0/6, *got.Totals.SuccessRate, 1e-9)
		require.EqualValues(t, 6, got.Totals.StartLag.Runs)
		require.Equal(t, &apitypes.LagPercentile{MS: 100}, got.Totals.StartLag.P50, "four of six lags are 80 ms")
		require.Equal(t, &apitypes.LagPercentile{MS: 5000}, got.Totals.StartLag.P99, "the largest is 3 s")
		var sum int64
		for _, b := range got.Buckets {
			sum += b.Succeeded + b.Failed
			if b.Succeeded+b.Failed == 0 {
				require.Nil(t, b.SuccessRate)
				require.Nil(t, b.StartLag.P50)
			}
		}
		require.EqualValues(t, 6, sum)

		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dashboard?window=7d", viewer, nil, &got))
		require.EqualValues(t, 7200, got.BucketSeconds)
		require.Len(t, got.Buckets, 84)
		require.Equal(t, 7*24*time.Hour, got.To.Sub(got.From))
		require.EqualValues(t, 6, got.Totals.Succeeded+got.Totals.Failed)

		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dashboard?app=search&window=24h", viewer, nil, &got))
		require.EqualValues(t, 2, got.Totals.Succeeded)
		require.Len(t, got.Buckets, 96)

		// Limited to billing.
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dashboard?window=6h", limited, nil, &got))
		require.Len(t, got.Buckets, 72)
		require.EqualValues(t, 3, got.Totals.Succeeded, "billing's runs only")
		require.EqualValues(t, 1, got.Totals.Failed)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/dashboard?app=search", limited, nil, &got))
		require.Zero(t, got.Totals.Succeeded+got.Totals.Started, "another app's runs do not exist for them")
		require.Nil(t, got.Totals.SuccessRate)

		// Bad input.
		for _, w := range []string{"2h", "", "1H", "60m"} {
			var bad apitypes.ErrorView
			require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/dashboard?window="+w, viewer, nil, &bad), "window %q", w)
			require.Equal(t, "dashboard.window_invalid", bad.FieldCodes["window"].Code)
			require.Contains(t, bad.Fields["window"], "must be 1h, 6h, 24h or 7d")
		}
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/dashboard?app=no%20such", viewer, nil, nil))
		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/dashboard", "", nil, nil))
	})
}
