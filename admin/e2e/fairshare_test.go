package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestFairShareByWeight: a real admin process on MariaDB with a platform
// capacity of 8 slots (--max-running-slots), two apps of weights 1 and 3,
// each with a real executor of capacity 16 and 20 jobs firing every second
// (slots of 400 ms: each app alone would want 8 slots), so that both have
// more due work than fits. Over a 20 s window, from the attempts' own start
// and finish times, the apps get 25 % and 75 % of the slot-seconds, within
// ±5 points, and never more than 8 slots run at once.
func TestFairShareByWeight(t *testing.T) {
	t.Parallel()
	const (
		capacity = 8
		jobs     = 20
		settle   = 5 * time.Second  // from the first firing until the shares are measured
		window   = 20 * time.Second // measured
	)
	ctx := context.Background()
	c, secret, dsn := mysqlAdmin(t, "--max-running-slots", fmt.Sprint(capacity))
	weights := map[string]int64{"light": 1, "heavy": 3}
	for app, w := range weights {
		harness.StartExecutor(t, harness.ExecutorOpts{App: app, Admins: c.Base, Capacity: 16, Heartbeat: 500 * time.Millisecond,
			Secret: secret, StartTimeout: 60 * time.Second})
		code, err := c.Call(ctx, http.MethodPost, "/api/v1/apps", map[string]any{"name": app, "weight": w}, nil)
		require.NoError(t, err)
		if code == http.StatusConflict { // the executor's heartbeat made the app first
			var v apitypes.AppView
			require.NoError(t, c.Do(ctx, http.MethodGet, "/api/v1/apps/"+app, nil, &v))
			require.NoError(t, c.Do(ctx, http.MethodPatch, "/api/v1/apps/"+app, map[string]any{"version": v.Version, "weight": w}, nil))
		} else {
			require.Equal(t, http.StatusCreated, code)
		}
	}
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	defer db.Close()
	start := time.Now()
	for app := range weights {
		everySecond(t, c, app, jobs, "demo.sleep", "ms=400")
	}
	from := time.Now().Add(settle)
	to := from.Add(window)
	testenv.WaitFor(t, settle+window+30*time.Second, func() (bool, error) { return time.Now().After(to.Add(time.Second)), nil }, "the window did not pass")

	var share [2]float64 // light, heavy slot-seconds within the window
	rows, err := db.Query(`SELECT r.app, a.started_at, COALESCE(a.finished_at, ?) FROM slot_attempt a JOIN job_run r ON r.id = a.run_id
		WHERE a.started_at IS NOT NULL AND a.started_at < ? AND COALESCE(a.finished_at, ?) > ?`, to.UnixMilli(), to.UnixMilli(), to.UnixMilli(), from.UnixMilli())
	require.NoError(t, err)
	for rows.Next() {
		var app string
		var s, e int64
		require.NoError(t, rows.Scan(&app, &s, &e))
		d := float64(min(e, to.UnixMilli())-max(s, from.UnixMilli())) / 1000
		if app == "light" {
			share[0] += d
		} else {
			share[1] += d
		}
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	total := share[0] + share[1]
	most, err := testenv.MostAtOnce(db, `SELECT started_at, finished_at FROM slot_attempt WHERE started_at IS NOT NULL AND finished_at IS NOT NULL`)
	require.NoError(t, err)
	var waiting int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_run WHERE status = 'pending'`).Scan(&waiting))
	t.Logf("fair share over %s (from %s after the jobs were made): light %.1f slot-s (%.1f %%), heavy %.1f slot-s (%.1f %%), of %.0f possible; most slots at once %d; %d runs waiting",
		window, from.Sub(start).Round(time.Second), share[0], 100*share[0]/total, share[1], 100*share[1]/total, capacity*window.Seconds(), most, waiting)
	require.Positive(t, waiting, "both apps had more due work than fits")
	require.InDelta(t, 0.25, share[0]/total, 0.05, "weight 1 of 4")
	require.InDelta(t, 0.75, share[1]/total, 0.05, "weight 3 of 4")
	require.LessOrEqual(t, most, capacity, "the platform's capacity held")
}

// mysqlAdmin runs `shardjob-admin serve` on a database of its own on the
// test MariaDB, with 500 ms heartbeats and args, and returns a logged-in
// client, the executor secret and the database's DSN.
func mysqlAdmin(t *testing.T, args ...string) (c *cli.Client, secret, dsn string) {
	t.Helper()
	secret, dsn = protocol.NewSecret(), testenv.MySQL(t)
	a := serveAdmin(t, secret, append([]string{"--db-driver", "mysql", "--db-dsn", dsn, "--heartbeat-interval", "500ms"}, args...)...)
	c = a.Login(t)
	c.HTTP = &http.Client{Timeout: 2 * time.Minute}
	return c, secret, dsn
}

// everySecond creates n jobs tick-00 … of app that fire every second with
// handler and params.
func everySecond(t *testing.T, c *cli.Client, app string, n int, handler, params string) {
	t.Helper()
	for i := range n {
		code, err := c.Call(context.Background(), http.MethodPost, "/api/v1/jobs", map[string]any{
			"app": app, "name": fmt.Sprintf("tick-%02d", i), "handler": handler, "cron": "* * * * * *", "params": params,
		}, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code)
	}
}
