package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// TestMigration0014ScopesOldRowsAndFoldsNameCase applies migration 0014 to
// a database at version 11 that holds audit entries, alarms and users of
// before: entries of jobs, runs, executors and attempts get their app,
// token, login and password entries their owner, the rest stays admin-only;
// alarms get the app of their job, run or executor; of users whose names
// differ only in case the oldest keeps the name and the others are renamed
// (and audited). Down and up again work.
func TestMigration0014ScopesOldRowsAndFoldsNameCase(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.SteppedDialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := storetest.OpenEmpty(t, dialect)
			_, err := s.MigrateTo(ctx, 13)
			require.NoError(t, err)
			db := s.DB()
			exec := func(q string, args ...any) {
				t.Helper()
				_, err := db.ExecContext(ctx, db.Rebind(q), args...)
				require.NoError(t, err, q)
			}
			if dialect == sqlfiles.MySQL {
				// A server whose default collation tells case apart.
				exec(`ALTER TABLE app_user MODIFY username VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL`)
			}
			older, err := s.CreateUser(ctx, "Alice", "h", store.RoleOperator)
			require.NoError(t, err)
			younger, err := s.CreateUser(ctx, "alice", "h", store.RoleViewer)
			require.NoError(t, err, "two spellings can exist before 0014")
			bob, err := s.CreateUser(ctx, "bob", "h", store.RoleOperator)
			require.NoError(t, err)

			_, err = s.ClaimEpoch(ctx, 1, "me")
			require.NoError(t, err)
			// An executor of app "a" as a version-13 schema holds it (the
			// store's heartbeat writes the app table of a later version).
			exec(`INSERT INTO executor (instance_id, app, address, capacity, version, handlers, state, registered_at, last_heartbeat)
				VALUES ('ex-a', 'a', 'http://127.0.0.1:1', 1, '', '', 'online', 1, 1)`)
			ex, err := s.ExecutorByInstance(ctx, "ex-a")
			require.NoError(t, err)
			// Jobs, runs and attempts as a version-13 schema holds them (the
			// store's own inserts write later columns).
			jobOf := func(app, name string) (id int64) {
				exec(`INSERT INTO job (app, name, handler, cron_expr, slot_params, params, created_at, updated_at) VALUES (?, ?, 'noop', '* * * * *', '', '{}', 1, 1)`, app, name)
				require.NoError(t, db.GetContext(ctx, &id, db.Rebind(`SELECT id FROM job WHERE app = ? AND name = ?`), app, name))
				return id
			}
			jobID := jobOf("billing", "settle")
			runOf := func(job int64, app string) (runID, token int64) {
				exec(`INSERT INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, created_at, app) VALUES (?, 1, 'manual', 'running', '', 1, 1, 1, ?)`, job, app)
				require.NoError(t, db.GetContext(ctx, &runID, db.Rebind(`SELECT MAX(id) FROM job_run WHERE job_id = ?`), job))
				exec(`INSERT INTO slot_attempt (run_id, slot, attempt, executor_id, status, current, dispatched_at, lease_until) VALUES (?, 0, 1, ?, 'assigned', 1, 1, 2)`, runID, ex.ID)
				require.NoError(t, db.GetContext(ctx, &token, db.Rebind(`SELECT MAX(id) FROM slot_attempt WHERE run_id = ?`), runID))
				return runID, token
			}
			runID, token := runOf(jobID, "billing")
			goneID := jobOf("search", "index")
			goneRunID, _ := runOf(goneID, "search")
			exec(`DELETE FROM job WHERE id = ?`, goneID) // as DeleteJob did at 0014: its running run stays (a version-13 schema has no app_job_count)
			exec(`INSERT INTO api_token (user_id, name, prefix, hash, role_cap, created_at) VALUES (?, 'ci', 'sjt_aaaaaaaa', ?, '', 1)`, bob, hashOf('a'))
			var tokenID int64
			require.NoError(t, db.GetContext(ctx, &tokenID, `SELECT MAX(id) FROM api_token`))

			now := time.Now().UnixMilli()
			audit := map[string]string{ // object → action
				"job/" + itoa(int(jobID)):      "job.create",
				"run/" + itoa(int(runID)):      "run.cancel",
				"executor/" + itoa(int(ex.ID)): "executor.drain",
				"attempt/" + itoa(int(token)):  "xxljob.kill",
				"job/" + itoa(int(goneID)):     "job.delete",
				"token/" + itoa(int(tokenID)):  "token.create",
				"user/bob":                     "login",
				"user/alice":                   "user.update",
				"job/abc":                      "job.create",
			}
			for object, action := range audit {
				exec(`INSERT INTO audit_log (at, actor, action, object, detail) VALUES (?, 'bob', ?, ?, '')`, now, action, object)
			}
			alarm := func(kind string, job, run sql.NullInt64, key string) {
				exec(`INSERT INTO alarm_event (at, kind, severity, job_id, run_id, dedup_key, message, raised_by) VALUES (?, ?, 'warning', ?, ?, ?, 'm', 'a')`,
					now, kind, job, run, key)
			}
			id := func(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: true} }
			alarm(store.AlarmRunFailed, id(jobID), id(runID), "run_failed:1")
			alarm(store.AlarmRunFailed, id(goneID), id(goneRunID), "run_failed:2")
			alarm(store.AlarmExecutorLost, sql.NullInt64{}, sql.NullInt64{}, "executor_lost:"+itoa(int(ex.ID))+":12345")
			alarm(store.AlarmExecutorLost, sql.NullInt64{}, sql.NullInt64{}, "executor_lost:restart:"+itoa(int(ex.ID))+":inc-1")
			alarm(store.AlarmLeaderChange, sql.NullInt64{}, sql.NullInt64{}, "leader_change:1")

			n, err := s.MigrateTo(ctx, 14)
			require.NoError(t, err)
			require.Equal(t, 1, n)

			var rows []struct {
				Object  string `db:"object"`
				App     string `db:"app"`
				OwnerID int64  `db:"owner_id"`
			}
			require.NoError(t, db.SelectContext(ctx, &rows, `SELECT object, app, owner_id FROM audit_log WHERE action <> 'user.rename'`))
			got := map[string][2]any{}
			for _, r := range rows {
				got[r.Object] = [2]any{r.App, r.OwnerID}
			}
			require.Equal(t, map[string][2]any{
				"job/" + itoa(int(jobID)):      {"billing", int64(0)},
				"run/" + itoa(int(runID)):      {"billing", int64(0)},
				"executor/" + itoa(int(ex.ID)): {"a", int64(0)},
				"attempt/" + itoa(int(token)):  {"billing", int64(0)},
				"job/" + itoa(int(goneID)):     {"", int64(0)}, // its job is gone: admins only
				"token/" + itoa(int(tokenID)):  {"", bob},
				"user/bob":                     {"", bob},
				"user/alice":                   {"", int64(0)},
				"job/abc":                      {"", int64(0)},
			}, got)

			var alarms []struct {
				Key string `db:"dedup_key"`
				App string `db:"app"`
			}
			require.NoError(t, db.SelectContext(ctx, &alarms, `SELECT dedup_key, app FROM alarm_event`))
			gotAlarms := map[string]string{}
			for _, a := range alarms {
				gotAlarms[a.Key] = a.App
			}
			require.Equal(t, map[string]string{
				"run_failed:1": "billing", "run_failed:2": "search",
				"executor_lost:" + itoa(int(ex.ID)) + ":12345": "a", "executor_lost:restart:" + itoa(int(ex.ID)) + ":inc-1": "a",
				"leader_change:1": "",
			}, gotAlarms)

			// The oldest spelling keeps the name; login finds it by any case.
			var names []string
			require.NoError(t, db.SelectContext(ctx, &names, `SELECT username FROM app_user ORDER BY id`))
			renamed := "alice-" + itoa(int(younger))
			require.Equal(t, []string{"Alice", renamed, "bob"}, names)
			// The store's user queries read the columns of later
			// migrations (0047: directory users).
			_, err = s.Migrate(ctx)
			require.NoError(t, err)
			u, err := s.UserByName(ctx, "ALICE")
			require.NoError(t, err)
			require.Equal(t, older, u.ID)
			require.Equal(t, "Alice", u.Username)
			_, err = s.CreateUser(ctx, "BOB", "h", store.RoleViewer)
			require.ErrorIs(t, err, store.ErrConflict)
			var detail string
			require.NoError(t, db.GetContext(ctx, &detail, db.Rebind(`SELECT detail FROM audit_log WHERE action = 'user.rename' AND object = ?`), "user/"+renamed))
			var rename map[string]string
			require.NoError(t, json.Unmarshal([]byte(detail), &rename))
			require.Equal(t, "alice", rename["from"])
			require.Equal(t, renamed, rename["to"])
			next, err := s.CreateUser(ctx, "carol", "h", store.RoleViewer)
			require.NoError(t, err)
			require.Greater(t, next, bob)

			require.NoError(t, s.MigrateDown(ctx, 13))
			_, err = s.Migrate(ctx)
			require.NoError(t, err, "down, then up again")
			u, err = s.UserByName(ctx, renamed)
			require.NoError(t, err)
			require.Equal(t, younger, u.ID)
		})
	}
}

// TestRevokeAPIKeyRevokesItsDescendants: revoking a token revokes the
// tokens created with it, transitively, in one transaction, and a token
// whose parent is revoked cannot be created (the case of a request
// authenticated just before its token was revoked).
func TestRevokeAPIKeyRevokesItsDescendants(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		alice, err := s.CreateUser(ctx, "alice", "h", store.RoleOperator)
		require.NoError(t, err)
		create := func(c byte, parent int64) store.APIKey {
			t.Helper()
			tok, err := s.CreateAPIKey(ctx, store.NewAPIKey{UserID: alice, Name: string(c), Prefix: "sjt_" + hashOf(c)[:8], Hash: hashOf(c), ParentID: parent})
			require.NoError(t, err)
			return tok
		}
		root := create('a', 0)
		require.False(t, root.ParentID.Valid)
		child := create('b', root.ID)
		require.Equal(t, root.ID, child.ParentID.Int64)
		grand1 := create('c', child.ID)
		grand2 := create('d', child.ID)
		other := create('e', 0)
		_, _, err = s.RevokeAPIKey(ctx, grand2.ID)
		require.NoError(t, err)

		revoked, descendants, err := s.RevokeAPIKey(ctx, root.ID)
		require.NoError(t, err)
		require.True(t, revoked)
		require.Equal(t, []int64{child.ID, grand1.ID}, descendants, "grand2 was revoked already")
		for _, c := range []byte{'a', 'b', 'c', 'd'} {
			_, _, err := s.AuthenticateAPIKey(ctx, hashOf(c))
			require.ErrorIs(t, err, store.ErrAPIKeyRevoked, string(c))
		}
		_, _, err = s.AuthenticateAPIKey(ctx, hashOf('e'))
		require.NoError(t, err, "not a descendant")

		_, err = s.CreateAPIKey(ctx, store.NewAPIKey{UserID: alice, Name: "late", Prefix: "sjt_ffffffff", Hash: hashOf('f'), ParentID: child.ID})
		require.ErrorIs(t, err, store.ErrAPIKeyRevoked)
		_, err = s.CreateAPIKey(ctx, store.NewAPIKey{UserID: alice, Name: "orphan", Prefix: "sjt_gggggggg", Hash: hashOf('g'), ParentID: 987654})
		require.ErrorIs(t, err, store.ErrNotFound)
		var n int
		require.NoError(t, s.DB().GetContext(ctx, &n, `SELECT COUNT(*) FROM api_token`))
		require.Equal(t, 5, n)

		revoked, descendants, err = s.RevokeAPIKey(ctx, other.ID)
		require.NoError(t, err)
		require.True(t, revoked)
		require.Empty(t, descendants)
	})
}

// TestAuditLogAndAlarmsByScope: what AuditLog and AlarmsOfApps return to
// each kind of reader.
func TestAuditLogAndAlarmsByScope(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, e := range []store.AuditEntry{
			{Action: "job.create", Object: "job/1", App: "billing"},
			{Action: "job.create", Object: "job/2", App: "search"},
			{Action: "user.create", Object: "user/eve"},
			{Action: "token.create", Object: "token/1", OwnerID: 7},
			{Action: "token.create", Object: "token/2", OwnerID: 8},
		} {
			e.Actor = "root"
			require.NoError(t, s.Audit(ctx, e))
		}
		objects := func(scope store.AuditScope) []string {
			t.Helper()
			entries, err := s.AuditLog(ctx, 0, 100, scope, store.AuditFilter{})
			require.NoError(t, err)
			out := []string{}
			for _, e := range entries {
				out = append(out, e.Object)
			}
			return out
		}
		require.Equal(t, []string{"token/2", "token/1", "user/eve", "job/2", "job/1"}, objects(store.AuditScope{All: true}))
		require.Equal(t, []string{"token/1", "job/2", "job/1"}, objects(store.AuditScope{OwnerID: 7}), "every app, own account")
		require.Equal(t, []string{"token/2", "job/1"}, objects(store.AuditScope{Apps: []string{"billing"}, OwnerID: 8}))
		require.Equal(t, []string{}, objects(store.AuditScope{Apps: []string{}}), "an empty list is no app")

		for _, a := range []store.Alarm{
			{Kind: store.AlarmExecutorLost, DedupKey: "1", App: "billing"},
			{Kind: store.AlarmExecutorLost, DedupKey: "2", App: "search"},
			{Kind: store.AlarmLeaderChange, DedupKey: "3"},
		} {
			a.Severity, a.Message, a.RaisedBy = "warning", "m", "a"
			_, err := s.RaiseAlarm(ctx, a)
			require.NoError(t, err)
		}
		keys := func(apps []string) []string {
			t.Helper()
			alarms, err := s.AlarmsOfApps(ctx, 0, 10, apps)
			require.NoError(t, err)
			out := []string{}
			for _, a := range alarms {
				out = append(out, a.DedupKey+"/"+a.App)
			}
			return out
		}
		require.Equal(t, []string{"3/", "2/search", "1/billing"}, keys(nil))
		require.Equal(t, []string{"1/billing"}, keys([]string{"billing"}))
		require.Equal(t, []string{}, keys([]string{}))
	})
}
