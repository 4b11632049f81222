package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// fillInstallation writes an installation of every kind of row through the
// store (users, a key, audit entries, a calendar, jobs of two apps, a
// workflow and its run, executors, runs with attempts, an alarm) and a
// few the store writes in bulk (log lines, slot statistics) with awkward
// text and floating-point values. It returns the ids of the jobs.
func fillInstallation(t *testing.T, s *store.Store) []int64 {
	t.Helper()
	ctx := context.Background()
	_, err := s.ClaimEpoch(ctx, 5, "admin-a")
	require.NoError(t, err)
	alice, err := s.CreateUser(ctx, "Alice", "hash-a", store.RoleOperator)
	require.NoError(t, err)
	_, err = s.CreateUser(ctx, "bob", "hash-b", store.RoleViewer)
	require.NoError(t, err)
	h := sha256.Sum256([]byte("key"))
	_, err = s.CreateAPIKey(ctx, store.NewAPIKey{UserID: alice, Name: "ci", Prefix: "sjt_abcd1234", Hash: hex.EncodeToString(h[:])})
	require.NoError(t, err)
	require.NoError(t, s.Audit(ctx, store.AuditEntry{Actor: "alice", Action: "job.create", Object: "job/1", Detail: `{"name":"it's \"quoted\" \\ é 中"}`, App: "billing"}))
	storetest.CreateCalendar(t, s, "cn", storetest.ChinaCSV(t))
	var jobs []int64
	for i := range 30 {
		j := newJob([]string{"billing", "search"}[i%2], fmt.Sprintf("job-%02d", i), int64(1_000_000+i))
		j.Description = "line 1\nline 2 'quoted' -- not a comment /* nor this */ ?"
		id, err := s.CreateJob(ctx, j)
		require.NoError(t, err)
		jobs = append(jobs, id)
	}
	wf, err := s.CreateWorkflow(ctx, newWorkflow("billing", "eod"))
	require.NoError(t, err)
	_, _, err = s.CreateWorkflowRun(ctx, 5, newWorkflowRun(wf, "2026-12-01"))
	require.NoError(t, err)
	exA := heartbeat(t, s, "ex-a", 1, 4)
	exB := heartbeat(t, s, "ex-b", 2, 4)
	for i, job := range jobs[:12] {
		run, _ := startRunAt(t, s, 5, job, int64(1000+i), exA.ID, exB.ID)
		for seq := range 3 {
			_, err := s.DB().Exec(`INSERT INTO run_log (run_id, seq, slot, token, attempt, at, level, message, attrs) VALUES (?, ?, 0, 1, 1, ?, 0, ?, ?)`,
				run.ID, seq+1, 1000+seq, fmt.Sprintf("line %d: 'x' \\n %s", seq, "🙂"), `{"k":"v"}`)
			require.NoError(t, err)
		}
	}
	_, err = s.DB().Exec(`INSERT INTO slot_stats (job_id, slot, cost_ms, records, samples, last_executor, updated_at) VALUES (?, 0, ?, ?, 3, NULL, 1), (?, 1, ?, ?, 1, ?, 2)`,
		jobs[0], 0.1+0.2, 1e-7, jobs[0], 12345.678901234567, 3.0, exA.ID)
	require.NoError(t, err)
	_, err = s.RaiseAlarm(ctx, store.Alarm{Kind: store.AlarmRunFailed, Severity: "critical", JobID: sql.NullInt64{Int64: jobs[0], Valid: true},
		DedupKey: "run_failed:1", Message: "run 1 failed: 'boom'"})
	require.NoError(t, err)
	return jobs
}

// TestCopyMovesAnInstallationBetweenDialects copies a filled installation
// MariaDB → PostgreSQL → SQLite → MariaDB: every table's rows arrive with
// their ids (counts and checksums read back from each target agree with the
// source's), the copy works as an installation (a user found by another
// case of their name, the jobs as they were, the leader's epoch kept, new
// ids after the copied ones), and a target that holds rows is refused.
func TestCopyMovesAnInstallationBetweenDialects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := storetest.Open(t, sqlfiles.MySQL)
	jobs := fillInstallation(t, src)
	want, err := src.Job(ctx, jobs[3])
	require.NoError(t, err)
	wantRuns, err := src.Runs(ctx, store.RunFilter{})
	require.NoError(t, err)

	from := src
	var first store.CopyReport
	var targets []*store.Store
	for _, dialect := range []string{sqlfiles.Postgres, sqlfiles.SQLite, sqlfiles.MySQL} {
		to := storetest.OpenEmpty(t, dialect)
		var seen []string
		rep, err := store.Copy(ctx, from, to, func(c store.TableCopy) { seen = append(seen, c.Table) })
		require.NoError(t, err, "%s → %s", from.Dialect(), dialect)
		require.Len(t, seen, len(rep.Tables))
		require.Equal(t, int64(5), rep.Epoch)
		if first.Tables == nil {
			first = rep
		} else {
			require.Equal(t, first.Tables, rep.Tables, "%s → %s: the same rows and checksums as the first copy", from.Dialect(), dialect)
		}
		rows := map[string]int64{}
		for _, c := range rep.Tables {
			rows[c.Table] = c.Rows
		}
		require.Equal(t, int64(30), rows["job"])
		require.Equal(t, int64(12), rows["job_run"])
		require.Equal(t, int64(24), rows["slot_attempt"])
		require.Equal(t, int64(36), rows["run_log"])
		require.Equal(t, int64(2), rows["app_user"])

		u, err := to.UserByName(ctx, "alice")
		require.NoError(t, err, "%s: user names stay case-insensitive", dialect)
		require.Equal(t, "Alice", u.Username)
		got, err := to.Job(ctx, jobs[3])
		require.NoError(t, err)
		require.Equal(t, want, got, "%s: a job as it was", dialect)
		gotRuns, err := to.Runs(ctx, store.RunFilter{})
		require.NoError(t, err)
		require.Equal(t, wantRuns, gotRuns, "%s: the runs as they were", dialect)
		targets = append(targets, to)
		from = to
	}
	// Each copy is an installation that goes on: its leader's epoch holds,
	// new ids come after the copied ones, and a second copy into it is
	// refused.
	for _, to := range targets {
		dialect := to.Dialect()
		claimed, err := to.ClaimEpoch(ctx, 4, "stale")
		require.NoError(t, err)
		require.False(t, claimed, "%s: an epoch below the copied one is refused", dialect)
		id, err := to.CreateJob(ctx, newJob("billing", "after-copy", 0))
		require.NoError(t, err)
		require.Greater(t, id, jobs[len(jobs)-1], "%s: new ids come after the copied ones", dialect)
		_, err = store.Copy(ctx, src, to, nil)
		require.ErrorIs(t, err, store.ErrTargetNotEmpty)
		require.ErrorContains(t, err, "copy into a new, empty database")
	}
}

// TestCopyTablesAreTheSchema: Copy moves every table of the schema on each
// dialect (schema_migrations and leader apart), so that a table added by a
// migration cannot be left behind.
func TestCopyTablesAreTheSchema(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, s *store.Store) {
		names, err := s.TableNames(context.Background())
		require.NoError(t, err)
		require.ElementsMatch(t, names, append(store.CopyTableNames(), "schema_migrations", "leader"))
	})
}
