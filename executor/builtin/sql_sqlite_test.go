package builtin_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/sdk"
)

// sqliteTask is a task running stmt on the data source biz.
func sqliteTask(t *testing.T, stmt string) *sdk.Task {
	t.Helper()
	params, err := json.Marshal(map[string]string{"datasource": "biz", "statement": stmt})
	require.NoError(t, err)
	task, _ := newTask(string(params))
	return task
}

// handleRefused runs stmt and requires a refusal by the executor's policy
// saying want.
func (e *sqlEnv) handleRefused(t *testing.T, stmt, want string) {
	t.Helper()
	err := e.h.Handle(context.Background(), sqliteTask(t, stmt))
	require.ErrorIs(t, err, builtin.ErrRefused, stmt)
	require.ErrorContains(t, err, "sql on biz: refused by the executor's policy: "+want, stmt)
	require.False(t, builtin.IsRetryable(err), stmt)
}

// newSQLiteFile creates the SQLite database path holding table users with
// one password hash, as the platform database holds in standalone mode.
func newSQLiteFile(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec("CREATE TABLE users (name TEXT, password_hash TEXT)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO users VALUES ('admin', '$2a$10$notarealhash')")
	require.NoError(t, err)
}

// TestSQLiteAttachRefused: no statement reaches another database file: not
// by ATTACH DATABASE (which would also create it), not by VACUUM INTO
// (which would write a copy of the data source anywhere), so the platform
// database cannot be read, not even blind.
func TestSQLiteAttachRefused(t *testing.T) {
	t.Parallel()
	e := newSQLEnv(t, "sqlite")
	dir := t.TempDir()
	platform := filepath.Join(dir, "platform.db")
	newSQLiteFile(t, platform)
	created, copied := filepath.Join(dir, "new.db"), filepath.Join(dir, "copy.db")

	e.handleRefused(t, "ATTACH DATABASE '"+platform+"' AS p",
		`opening "`+platform+`" (ATTACH DATABASE, VACUUM INTO): a statement of the sql handler may not open another database file; give each database a data source of its own (--sql-datasource on the executor)`)
	e.handleRefused(t, "ATTACH '"+created+"' AS n", `opening "`+created+`"`)
	e.handleRefused(t, "VACUUM INTO '"+copied+"'", `opening "`+copied+`" (ATTACH DATABASE, VACUUM INTO)`)
	e.handleRefused(t, "VACUUM", "VACUUM (it attaches a copy of the database) or ATTACH of a temporary database: a statement of the sql handler attaches no database; run VACUUM outside shardjob")
	e.handleRefused(t, "DETACH DATABASE temp", "DETACH: the sql handler attaches no database")
	for _, f := range []string{created, copied} {
		_, err := os.Stat(f)
		require.ErrorIs(t, err, os.ErrNotExist, "%s was not created", f)
	}

	// What an attached platform database would give away: the hash copied
	// into a business table, or read bit by bit from a failing statement.
	for _, stmt := range []string{
		"UPDATE item SET note = (SELECT password_hash FROM p.users WHERE name = 'admin') WHERE id = 1",
		"UPDATE item SET owner = 1 WHERE id = 1 AND (SELECT substr(password_hash, 1, 1) FROM p.users) = '$'",
	} {
		err := e.h.Handle(context.Background(), sqliteTask(t, stmt))
		require.ErrorContains(t, err, "no such table: p.users", stmt)
	}
	var n int
	require.NoError(t, e.db.QueryRow("SELECT COUNT(*) FROM item WHERE note IS NULL AND owner IS NULL").Scan(&n))
	require.Equal(t, 20, n, "nothing was read from the platform database")
}

// TestSQLitePragmas: PRAGMAs that change the connection or the file are
// refused; those that read the schema work, as statements and as
// table-valued functions.
func TestSQLitePragmas(t *testing.T) {
	t.Parallel()
	e := newSQLEnv(t, "sqlite")
	allowed := "the sql handler allows only the PRAGMAs that read the schema (foreign_key_check, foreign_key_list, index_info, index_list, index_xinfo, integrity_check, quick_check, table_info, table_list, table_xinfo); set connection PRAGMAs in the data source's file name on the executor (_pragma=…)"
	e.handleRefused(t, "PRAGMA journal_mode = WAL", "PRAGMA journal_mode: "+allowed)
	e.handleRefused(t, "PRAGMA writable_schema = 1", "PRAGMA writable_schema: ")
	e.handleRefused(t, "PRAGMA user_version = 7", "PRAGMA user_version: ")
	e.handleRefused(t, "PRAGMA query_only = 0", "PRAGMA query_only: ")
	e.handleRefused(t, "PRAGMA temp_store_directory = '/tmp'", "PRAGMA temp_store_directory: ")
	e.handleRefused(t, "PRAGMA journal_mode", "PRAGMA journal_mode: ")
	e.handleRefused(t, "UPDATE item SET note = (SELECT file FROM pragma_database_list) WHERE id = 1", "PRAGMA database_list: ")
	e.handleRefused(t, "SELECT load_extension('/tmp/x.so')", "load_extension(): the sql handler loads no code into the executor")

	var mode string
	var version int
	require.NoError(t, e.db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	require.NoError(t, e.db.QueryRow("PRAGMA user_version").Scan(&version))
	require.Equal(t, "delete", mode, "the file's journal mode did not change")
	require.Zero(t, version)

	require.NoError(t, e.h.Handle(context.Background(), sqliteTask(t, "PRAGMA table_info(item)")))
	require.NoError(t, e.h.Handle(context.Background(), sqliteTask(t,
		"UPDATE item SET note = (SELECT group_concat(name, ',') FROM pragma_table_info('item')) WHERE id = 1")))
	var note string
	require.NoError(t, e.db.QueryRow("SELECT note FROM item WHERE id = 1").Scan(&note))
	require.Equal(t, "id,owner,note", note)
}

// TestSQLiteDefensive: the data source runs in SQLite's defensive mode, so
// a statement cannot rewrite the file's pages under SQLite.
func TestSQLiteDefensive(t *testing.T) {
	t.Parallel()
	e := newSQLEnv(t, "sqlite")
	page := func() []byte {
		var b []byte
		require.NoError(t, e.db.QueryRow("SELECT data FROM sqlite_dbpage WHERE pgno = 2").Scan(&b))
		return b
	}
	before := page()
	err := e.h.Handle(context.Background(), sqliteTask(t,
		"UPDATE sqlite_dbpage SET data = (SELECT data FROM sqlite_dbpage WHERE pgno = 1) WHERE pgno = 2"))
	require.ErrorContains(t, err, "sql on biz: SQL logic error: read-only")
	require.Equal(t, before, page(), "the page was not written")
}

// TestSQLiteGuardsOnlyOnDataSources: the guards are the sql handler's own
// driver's; the process-wide "sqlite" driver, which the platform store uses
// in standalone mode, is untouched.
func TestSQLiteGuardsOnlyOnDataSources(t *testing.T) {
	t.Parallel()
	e := newSQLEnv(t, "sqlite") // e.db is opened with the "sqlite" driver
	other := filepath.Join(t.TempDir(), "other.db")
	newSQLiteFile(t, other)
	for _, stmt := range []string{"PRAGMA user_version = 3", "ATTACH DATABASE '" + other + "' AS o"} {
		_, err := e.db.Exec(stmt)
		require.NoError(t, err, stmt)
	}
}
