package builtin_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/sdk"
)

// sqlEnv is one test's business database, of one dialect, with a table
// item(id, owner, note) holding ids 1..20.
type sqlEnv struct {
	h   *builtin.SQL
	db  *sql.DB
	dsn string
}

func newSQLEnv(t *testing.T, driver string) *sqlEnv {
	t.Helper()
	var dsn string
	switch driver {
	case "mysql":
		dsn = testenv.MySQL(t) // has multiStatements=true: the handler turns it off
	case "sqlite":
		dsn = "file:" + filepath.Join(t.TempDir(), "biz.db") + "?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() }) // before testenv drops the database
	_, err = db.Exec("CREATE TABLE item (id INTEGER NOT NULL PRIMARY KEY, owner INTEGER, note VARCHAR(200))")
	require.NoError(t, err)
	for i := 1; i <= 20; i++ {
		_, err = db.Exec("INSERT INTO item (id) VALUES (?)", i)
		require.NoError(t, err)
	}
	h, err := builtin.NewSQL(builtin.SQLConfig{DataSources: map[string]builtin.DataSource{"biz": {Driver: driver, DSN: dsn}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close()) })
	return &sqlEnv{h: h, db: db, dsn: dsn}
}

func bothDrivers(t *testing.T, f func(t *testing.T, e *sqlEnv)) {
	for _, d := range []string{"mysql", "sqlite"} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f(t, newSQLEnv(t, d))
		})
	}
}

func TestSQLBindsSlotTotalAndArgs(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, e *sqlEnv) {
		// Slot 3 of 8 owns ids 3, 11, 19.
		task, log := newTask(`{"datasource": "biz",
			"statement": "UPDATE item SET owner = :slot, note = ? WHERE id % :total = :slot AND id > :min -- a :comment\n",
			"args": ["it's; DROP TABLE item; --"], "named": {"min": 0}}`)
		require.NoError(t, e.h.Handle(context.Background(), task))
		processed, _, _, _ := task.Counts()
		require.EqualValues(t, 3, processed, "rows affected are counted")
		require.Contains(t, log.String(), "rows_affected=3")
		var ids []int
		rows, err := e.db.Query("SELECT id FROM item WHERE owner = 3 AND note = ? ORDER BY id", "it's; DROP TABLE item; --")
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var id int
			require.NoError(t, rows.Scan(&id))
			ids = append(ids, id)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []int{3, 11, 19}, ids, "the value was bound, not interpolated")

		task, _ = newTask(`{"datasource": "biz", "statement": "DELETE FROM item WHERE id = ?;", "args": [20]}`)
		require.NoError(t, e.h.Handle(context.Background(), task), "a trailing ; is fine")
		processed, _, _, _ = task.Counts()
		require.EqualValues(t, 1, processed)
	})
}

// TestSQLBackslashInjection is the statement of issue 17 (M4): the handler
// read backslashes the MySQL way on every data source, took it for one
// statement, and SQLite ran two: the UPDATE and a DROP TABLE. On MySQL the
// literal ends at a different place with sql_mode NO_BACKSLASH_ESCAPES.
func TestSQLBackslashInjection(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, e *sqlEnv) {
		task, _ := newTask(`{"datasource": "biz", "statement": "UPDATE item SET note = 'a\\'; DROP TABLE item; --'"}`)
		err := e.h.Handle(context.Background(), task)
		if driverOf(e) == "sqlite" {
			require.ErrorContains(t, err, "sql handler params: statement: one statement only: text follows the ';' at byte 27; run each statement as a job of its own")
		} else {
			require.ErrorContains(t, err, "sql handler params: statement: the ' literal at byte 23 ends at a different place depending on whether the MySQL server reads backslashes as escapes")
		}
		var n int
		require.NoError(t, e.db.QueryRow("SELECT COUNT(*) FROM item WHERE note IS NULL").Scan(&n))
		require.Equal(t, 20, n, "the table survived and no row changed")

		if driverOf(e) == "sqlite" {
			task, _ = newTask(`{"datasource": "biz", "statement": "UPDATE item SET note = 'C:\\' WHERE id = 1"}`)
			require.NoError(t, e.h.Handle(context.Background(), task), "a backslash is an ordinary character to SQLite")
			var note string
			require.NoError(t, e.db.QueryRow("SELECT note FROM item WHERE id = 1").Scan(&note))
			require.Equal(t, `C:\`, note)
		}
	})
}

func TestSQLErrors(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, e *sqlEnv) {
		task, _ := newTask(`{"datasource": "platform", "statement": "DELETE FROM job"}`)
		err := e.h.Handle(context.Background(), task)
		require.ErrorIs(t, err, builtin.ErrRefused)
		require.ErrorContains(t, err, `sql data source "platform" is not configured on this executor (configured: biz)`)

		task, _ = newTask(`{"datasource": "biz", "statement": "UPDATE item SET owner = 1; DROP TABLE item"}`)
		require.ErrorContains(t, e.h.Handle(context.Background(), task), "one statement only")

		task, _ = newTask(`{"datasource": "biz", "statement": "UPDATE nosuch SET x = 1"}`)
		err = e.h.Handle(context.Background(), task)
		require.Error(t, err)
		require.False(t, builtin.IsRetryable(err), "a missing table is not transient: %v", err)

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		task, _ = newTask(`{"datasource": "biz", "statement": "UPDATE item SET owner = 1"}`)
		require.ErrorIs(t, e.h.Handle(ctx, task), context.Canceled)

		var n int
		require.NoError(t, e.db.QueryRow("SELECT COUNT(*) FROM item").Scan(&n))
		require.Equal(t, 20, n, "the table survived")
	})
}

func TestSQLConfig(t *testing.T) {
	t.Parallel()
	name, ds, err := builtin.ParseDataSource("billing=mysql:app:pw@tcp(db:3306)/billing?parseTime=true")
	require.NoError(t, err)
	require.Equal(t, "billing", name)
	require.Equal(t, builtin.DataSource{Driver: "mysql", DSN: "app:pw@tcp(db:3306)/billing?parseTime=true"}, ds)
	_, _, err = builtin.ParseDataSource("billing")
	require.ErrorContains(t, err, "want name=driver:dsn")
	_, _, err = builtin.ParseDataSource("billing=app:secret@tcp(x)")
	require.NotContains(t, fmt.Sprint(err), "secret")

	for ds, want := range map[builtin.DataSource]string{
		{Driver: "postgres", DSN: "x"}:               `driver "postgres": use mysql`,
		{Driver: "mysql", DSN: "not a dsn"}:          "not a go-sql-driver/mysql DSN",
		{Driver: "sqlite", DSN: " "}:                 "needs a file name",
		{Driver: "sqlite", DSN: "?x=1"}:              "needs a file name",
		{Driver: "sqlite", DSN: "x.db?_defensive=0"}: "the sql handler runs SQLite data sources in defensive mode: remove _defensive from the file name",
		{Driver: "sqlite", DSN: "x.db?a=%zz"}:        "the query of the file name does not parse",
	} {
		_, err := builtin.NewSQL(builtin.SQLConfig{DataSources: map[string]builtin.DataSource{"x": ds}})
		require.ErrorContains(t, err, want)
	}
	_, err = builtin.NewSQL(builtin.SQLConfig{DataSources: map[string]builtin.DataSource{"a b": {Driver: "sqlite", DSN: "x.db"}}})
	require.ErrorContains(t, err, "name must be")
}

// TestSQLBindsTheWorkflowContext (issue 30): :business_date,
// :workflow_node and :workflow_run_id are bound from a workflow node's
// context, and are NULL for a run that is no workflow node's; the params
// themselves stay strict.
func TestSQLBindsTheWorkflowContext(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, e *sqlEnv) {
		params := `{"datasource": "biz", "statement": "UPDATE item SET note = CONCAT(:business_date, '/', :workflow_node, '/', :workflow_run_id) WHERE id = 1"}`
		if driverOf(e) == "sqlite" {
			params = `{"datasource": "biz", "statement": "UPDATE item SET note = :business_date || '/' || :workflow_node || '/' || :workflow_run_id WHERE id = 1"}`
		}
		task, _ := newTask(params)
		task.Workflow = &sdk.WorkflowContext{RunID: 17, Node: "settle", BusinessDate: "2026-03-02"}
		require.NoError(t, e.h.Handle(context.Background(), task))
		var note sql.NullString
		require.NoError(t, e.db.QueryRow("SELECT note FROM item WHERE id = 1").Scan(&note))
		require.Equal(t, "2026-03-02/settle/17", note.String)

		task, _ = newTask(params)
		require.NoError(t, e.h.Handle(context.Background(), task))
		require.NoError(t, e.db.QueryRow("SELECT note FROM item WHERE id = 1").Scan(&note))
		require.False(t, note.Valid, "NULL outside a workflow: %q", note.String)

		task, _ = newTask(`{"datasource": "biz", "statement": "SELECT 1", "business_date": "2026-03-02"}`)
		require.ErrorContains(t, e.h.Handle(context.Background(), task), `unknown field "business_date"`, "params stay strict")
	})
}

// The error classes of the sql handler against real databases
// (docs/failures.md): syntax, missing table and constraint errors are
// permanent on both dialects; a lock wait timeout on MariaDB is retryable.
func TestSQLErrorClasses(t *testing.T) {
	t.Parallel()
	bothDrivers(t, func(t *testing.T, e *sqlEnv) {
		for _, stmt := range []string{
			"UPDATE item SET owner = = 1",            // syntax
			"UPDATE nosuch SET x = 1",                // no such table
			"INSERT INTO item (id) VALUES (1)",       // duplicate key
			"UPDATE item SET id = NULL WHERE id = 1", // NOT NULL
		} {
			task, _ := newTask(`{"datasource": "biz", "statement": "` + stmt + `"}`)
			err := e.h.Handle(context.Background(), task)
			require.Error(t, err, stmt)
			class, _ := classOf(err)
			require.Equal(t, "permanent", class, "%s: %v", stmt, err)
			require.False(t, builtin.IsRetryable(err), stmt)
		}
	})
}

func TestSQLLockWaitTimeoutIsRetryable(t *testing.T) {
	t.Parallel()
	e := newSQLEnv(t, "mysql")
	// A row held by another transaction; the handler's data source has a
	// lock wait of one second in its sessions (a DSN system variable of
	// go-sql-driver/mysql).
	tx, err := e.db.Begin()
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.Exec("UPDATE item SET note = 'held' WHERE id = 1")
	require.NoError(t, err)
	h, err := builtin.NewSQL(builtin.SQLConfig{DataSources: map[string]builtin.DataSource{"biz": {Driver: "mysql", DSN: e.dsn + "&innodb_lock_wait_timeout=1"}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close()) })
	task, _ := newTask(`{"datasource": "biz", "statement": "UPDATE item SET note = 'mine' WHERE id = 1"}`)
	err = h.Handle(context.Background(), task)
	require.Error(t, err)
	require.True(t, builtin.IsRetryable(err), "%v", err)
	class, _ := classOf(err)
	require.Equal(t, "retryable", class)
	require.ErrorContains(t, err, "1205")
}
