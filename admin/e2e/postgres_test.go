package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to count rows
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestPostgresPlatformSurvivesAKilledLeader: two real admin processes on
// one PostgreSQL database and ZooKeeper, two real executors; 12 jobs of 4
// slots fire every second. The leader is killed with kill -9; the replica
// takes over its leadership and its partitions and fires on. Counted in
// PostgreSQL afterwards: runs fired before and after the successor's
// claim, no run of the killed leader's epoch — nor of a partition's
// former epoch — created after the successor's claim (fencing), every
// started run's 4 slots succeeded exactly once, and no run failed.
func TestPostgresPlatformSurvivesAKilledLeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, zk, root, secret := testenv.Postgres(t), testenv.ZooKeeper(t), testenv.ZKChroot(t), protocol.NewSecret()
	args := []string{"--db-driver", "postgres", "--db-dsn", dsn, "--zk", zk, "--zk-root", root,
		"--zk-session-timeout", "2s", "--heartbeat-interval", "500ms"}
	first := serveAdmin(t, secret, args...)
	c := first.Login(t)
	second := serveAdmin(t, secret, args...)
	for range 2 {
		harness.StartExecutor(t, harness.ExecutorOpts{App: "pg", Admins: first.URL + "," + second.URL, Capacity: 32,
			Heartbeat: 500 * time.Millisecond, Secret: secret, StartTimeout: 60 * time.Second})
	}
	const jobs, slots = 12, 4
	for i := range jobs {
		code, err := c.Call(ctx, http.MethodPost, "/api/v1/jobs", map[string]any{
			"app": "pg", "name": fmt.Sprintf("tick-%02d", i), "handler": "demo.noop", "cron": "* * * * * *", "slots": slots,
		}, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, code)
	}
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	count := func(q string, args ...any) int64 {
		t.Helper()
		var n int64
		require.NoError(t, db.QueryRowContext(ctx, q, args...).Scan(&n))
		return n
	}
	var oldEpoch int64
	var holder string
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		if err := db.QueryRowContext(ctx, `SELECT epoch, holder FROM leader WHERE id = 1`).Scan(&oldEpoch, &holder); err != nil {
			return false, err
		}
		return oldEpoch > 0 && count(`SELECT COUNT(*) FROM job_run WHERE status = 'succeeded'`) >= 3*jobs, nil
	}, "the first leader ran no runs")
	leader, other := first, second
	if holder != "e2e-admin-"+strings.TrimPrefix(first.URL, "http://127.0.0.1:") {
		leader, other = second, first
	}
	require.NoError(t, leader.Kill())
	killedAt := time.Now()

	var newEpoch, claimedAt int64
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		if err := db.QueryRowContext(ctx, `SELECT epoch, since_ms FROM leader WHERE id = 1`).Scan(&newEpoch, &claimedAt); err != nil {
			return false, err
		}
		// Runs fired after the claim, by the replica alone (it owns every
		// partition now), and started by it as the new leader.
		return newEpoch > oldEpoch && count(`SELECT COUNT(*) FROM job_run WHERE created_at > $1 AND status = 'succeeded'`, claimedAt) >= 3*jobs, nil
	}, "the replica did not take over and run")
	t.Logf("failover after kill -9: the replica claimed epoch %d %s after the kill", newEpoch, time.UnixMilli(claimedAt).Sub(killedAt).Round(time.Millisecond))
	require.NoError(t, other.Stop())

	require.Zero(t, count(`SELECT COUNT(*) FROM job_run WHERE epoch = $1 AND created_at > $2`, oldEpoch, claimedAt),
		"no run of the killed leader's epoch after the successor's claim")
	// Per partition: no run fired under an epoch of a partition older than
	// its last claim, after that claim (the killed admin's partitions moved
	// to the replica).
	require.Zero(t, count(`SELECT COUNT(*) FROM job_run r JOIN job j ON j.id = r.job_id JOIN scheduler_partition sp ON sp.id = j.partition_id
		WHERE r.trigger_kind = 'cron' AND r.epoch < sp.epoch AND r.created_at > sp.claimed_ms`),
		"no run of a partition's former owner after the claim of its successor")
	require.Zero(t, count(`SELECT COUNT(*) FROM scheduler_partition WHERE holder <> $1`, "e2e-admin-"+strings.TrimPrefix(other.URL, "http://127.0.0.1:")),
		"the replica owns every partition")
	require.Zero(t, count(`SELECT COUNT(*) FROM job_run WHERE status IN ('failed', 'partially_failed')`), "no run failed")
	require.Zero(t, count(`SELECT COUNT(*) FROM (SELECT run_id, slot FROM slot_attempt WHERE status = 'succeeded'
		GROUP BY run_id, slot HAVING COUNT(*) > 1) d`), "no slot succeeded twice")
	require.Zero(t, count(`SELECT COUNT(*) FROM job_run r WHERE r.status = 'succeeded'
		AND (SELECT COUNT(DISTINCT a.slot) FROM slot_attempt a WHERE a.run_id = r.id AND a.status = 'succeeded') <> $1`, slots),
		"every succeeded run has each of its slots succeeded")
	t.Logf("runs: %d succeeded (%d fired before the successor's claim, %d after), %d slot attempts succeeded",
		count(`SELECT COUNT(*) FROM job_run WHERE status = 'succeeded'`),
		count(`SELECT COUNT(*) FROM job_run WHERE status = 'succeeded' AND created_at <= $1`, claimedAt),
		count(`SELECT COUNT(*) FROM job_run WHERE status = 'succeeded' AND created_at > $1`, claimedAt),
		count(`SELECT COUNT(*) FROM slot_attempt WHERE status = 'succeeded'`))
}
