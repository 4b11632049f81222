package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/coord"
	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// TestRepartitionCommand: `shardjob-admin repartition` refuses to run
// unless every admin is stopped (checked in a real ZooKeeper, or
// confirmed), then changes the count and places every job in its new
// partition; an admin started with the former count afterwards refuses to
// start and says what to do.
func TestRepartitionCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.MySQL(t)
	server := testenv.ZooKeeper(t)
	root := "/shardjob-test/" + t.Name()
	st, err := store.Open(ctx, store.Config{Driver: sqlfiles.MySQL, DSN: dsn})
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Migrate(ctx)
	require.NoError(t, err)
	require.NoError(t, st.AgreePartitionCount(ctx))
	var ids []int64
	for _, name := range []string{"a", "b", "c"} {
		id, err := st.CreateJob(ctx, store.Job{App: "billing", Name: name, Handler: "noop", CronExpr: "0 * * * *", TimeZone: "UTC",
			MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 1, Params: "{}", Enabled: true})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	repartition := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"repartition", "--db-dsn", dsn}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, _, stderr := repartition("--count", "16")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "stop every admin first, then give --zk")
	code, _, stderr = repartition("--count", "0", "--admins-stopped")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--count 0: give the new number of scheduling partitions, 1 to 4096")

	// An admin is registered: refused, naming it.
	admin, err := coord.NewZK(coord.ZKConfig{Servers: []string{server}, Root: root, ID: "admin-1", ConnectTimeout: 20 * time.Second})
	require.NoError(t, err)
	testenv.WaitFor(t, 20*time.Second, func() (bool, error) {
		ms, err := admin.Members(ctx)
		return err == nil && len(ms) == 1, err
	}, "the admin is registered")
	code, _, stderr = repartition("--count", "16", "--zk", server, "--zk-root", root)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "admins are running (registered under "+root+": admin-1): stop every admin first")
	n, _, err := st.RecordedPartitionCount(ctx)
	require.NoError(t, err)
	require.Equal(t, partition.DefaultCount, n, "nothing changed")

	require.NoError(t, admin.Close())
	code, stdout, stderr := repartition("--count", "16", "--zk", server, "--zk-root", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "shardjob: scheduling partitions 256 → 16; 3 jobs placed in their new partitions in ")
	require.Contains(t, stdout, "start every admin with --scheduling-partitions 16")
	for _, id := range ids {
		var p int
		require.NoError(t, st.DB().GetContext(ctx, &p, `SELECT partition_id FROM job WHERE id = ?`, id))
		require.Equal(t, partition.Of(id, 16), p)
	}

	// An admin with the former count refuses to start.
	var out, errOut bytes.Buffer
	code = run([]string{"serve", "--db-dsn", dsn, "--http-addr", "127.0.0.1:0", "--executor-secret", "0123456789abcdef0123"}, &out, &errOut)
	require.Equal(t, 1, code)
	require.Contains(t, errOut.String(), "--scheduling-partitions (or SHARDJOB_SCHEDULING_PARTITIONS): this installation schedules with 16 partitions")
	require.Contains(t, errOut.String(), "start every admin with 16")
}
