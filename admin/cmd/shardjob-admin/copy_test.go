package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestCopyCommandBothWays: `shardjob-admin copy` moves a MariaDB
// installation into PostgreSQL and that one into a new MariaDB database:
// the jobs arrive with their ids, the output names each table with its
// rows and checksum, the same both ways; a second copy into a filled
// target and a bad --from fail with a message and exit status 1.
func TestCopyCommandBothWays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mysqlDSN := testenv.MySQL(t)
	src, err := store.Open(ctx, store.Config{Driver: sqlfiles.MySQL, DSN: mysqlDSN})
	require.NoError(t, err)
	defer src.Close()
	_, err = src.Migrate(ctx)
	require.NoError(t, err)
	var ids []int64
	for _, name := range []string{"nightly", "hourly's"} {
		id, err := src.CreateJob(ctx, store.Job{App: "billing", Name: name, Handler: "noop", CronExpr: "0 * * * *", TimeZone: "UTC",
			MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 4, Params: "{}", Enabled: true})
		require.NoError(t, err)
		ids = append(ids, id)
	}

	pg := testenv.Postgres(t)
	back := testenv.MySQL(t)
	copyOut := func(from, to string) string {
		var stdout, stderr bytes.Buffer
		code := run([]string{"copy", "--from", from, "--to", to}, &stdout, &stderr)
		require.Equal(t, 0, code, "copy %s → %s: %s", from, to, stderr.String())
		return stdout.String()
	}
	there := copyOut("mysql://"+mysqlDSN, pg)
	again := copyOut(pg, "mysql://"+back)
	require.Contains(t, there, "shardjob: copying mysql → postgres")
	require.Contains(t, again, "shardjob: copying postgres → mysql")
	tables := func(out string) string { // the table lines, the same both ways
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "  ") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	require.Equal(t, tables(there), tables(again))
	require.Regexp(t, `(?m)^  job\s+2 rows  checksum [0-9a-f]{32}$`, there)

	dst, err := store.Open(ctx, store.Config{Driver: sqlfiles.MySQL, DSN: back})
	require.NoError(t, err)
	defer dst.Close()
	for _, id := range ids {
		want, err := src.Job(ctx, id)
		require.NoError(t, err)
		got, err := dst.Job(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}

	for _, c := range []struct{ from, to, want string }{
		{"mysql://" + mysqlDSN, pg, "the target database is not empty: table app has rows"},
		{"oracle://x", pg, `--from: unknown database "oracle"`},
		{"nowhere", pg, `--from "nowhere": want mysql://`},
		{"sqlite://" + filepath.Join(t.TempDir(), "new.db"), pg, "the source database is at schema version 0"},
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 1, run([]string{"copy", "--from", c.from, "--to", c.to}, &stdout, &stderr), c.from)
		require.Contains(t, stderr.String(), c.want)
	}
}
