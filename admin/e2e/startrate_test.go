package e2e

import (
	"context"
	"database/sql"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// TestStartRateOfAnApp: a real admin process on MariaDB; app paced is
// limited to 5 starts a second, app free is not; each has a real executor
// and 15 jobs firing every second. By the runs' own start times (the
// database clock when the leader started them): in any 1 s the leader
// started at most 10 of paced's runs (a burst of a second's worth, then
// the rate), about 5 a second over 8 s, while free's runs all started
// within a second of being due; paced's waiting runs say why.
func TestStartRateOfAnApp(t *testing.T) {
	t.Parallel()
	const (
		rate = 5
		jobs = 15
	)
	ctx := context.Background()
	c, secret, dsn := mysqlAdmin(t)
	for _, app := range []string{"paced", "free"} {
		harness.StartExecutor(t, harness.ExecutorOpts{App: app, Admins: c.Base, Capacity: 64, Heartbeat: 500 * time.Millisecond,
			Secret: secret, StartTimeout: 60 * time.Second})
	}
	var v apitypes.AppView
	testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
		code, err := c.Call(ctx, http.MethodGet, "/api/v1/apps/paced", nil, &v)
		return code == http.StatusOK, err
	}, "the executor's heartbeat made app paced")
	require.NoError(t, c.Do(ctx, http.MethodPatch, "/api/v1/apps/paced", map[string]any{"version": v.Version, "max_starts_per_second": rate}, &v))
	require.Equal(t, int64(rate), *v.MaxStartsPerSecond)
	for _, app := range []string{"paced", "free"} {
		everySecond(t, c, app, jobs, "demo.noop", "")
	}
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	defer db.Close()
	from := time.Now().Add(2 * time.Second)
	to := from.Add(8 * time.Second)
	var reason string
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		if err := db.QueryRow(`SELECT error FROM job_run WHERE app = 'paced' AND status = 'pending' AND error <> '' LIMIT 1`).Scan(&reason); err != nil && err != sql.ErrNoRows {
			return false, err
		}
		return time.Now().After(to.Add(time.Second)) && reason != "", nil
	}, "the window did not pass, or no run of paced said why it waits")
	require.Equal(t, "waiting: app paced starts at most 5 runs a second (max_starts_per_second)", reason)

	starts := func(app string) []int64 {
		rows, err := db.Query(`SELECT started_at FROM job_run WHERE app = ? AND started_at >= ? AND started_at < ? ORDER BY started_at`, app, from.UnixMilli(), to.UnixMilli())
		require.NoError(t, err)
		defer rows.Close()
		var out []int64
		for rows.Next() {
			var at int64
			require.NoError(t, rows.Scan(&at))
			out = append(out, at)
		}
		require.NoError(t, rows.Err())
		return out
	}
	paced, free := starts("paced"), starts("free")
	mostInASecond := 0
	for i, at := range paced {
		j, _ := slices.BinarySearch(paced, at+1000)
		mostInASecond = max(mostInASecond, j-i)
	}
	var freeLag sql.NullInt64
	require.NoError(t, db.QueryRow(`SELECT MAX(started_at - scheduled_at) FROM job_run WHERE app = 'free' AND started_at >= ? AND started_at < ?`,
		from.UnixMilli(), to.UnixMilli()).Scan(&freeLag))
	t.Logf("start rate over 8 s: paced %d starts (%.1f/s, most in any 1 s: %d), free %d starts (most lag %d ms)",
		len(paced), float64(len(paced))/8, mostInASecond, len(free), freeLag.Int64)
	require.LessOrEqual(t, mostInASecond, 2*rate, "at most a burst of a second's worth and the rate in any second")
	require.InDelta(t, rate*8, len(paced), rate*8*0.25, "about the rate over the window")
	require.GreaterOrEqual(t, len(free), jobs*7, "free's runs are not held back")
	require.Less(t, freeLag.Int64, int64(2000), "free's runs start within a second or two of being due")
}
