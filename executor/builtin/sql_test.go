package builtin_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sql/namedsql"
)

// sqlEnv is one test's business database, of one dialect, with a table
// item(id, owner, note) holding ids 1..20.
type sqlEnv struct {
	h      *builtin.SQL
	db     *sql.DB
	dsn    string
	driver string // of the data source: mysql, postgres or sqlite
}

func newSQLEnv(t *testing.T, driver string) *sqlEnv {
	t.Helper()
	var dsn string
	sqlDriver := driver
	switch driver {
	case "mysql":
		dsn = testenv.MySQL(t) // has multiStatements=true: the handler turns it off
	case "postgres":
		dsn, sqlDriver = testenv.Postgres(t), "pgx"
	case "sqlite":
		dsn = "file:" + filepath.Join(t.TempDir(), "biz.db") + "?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(sqlDriver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() }) // before testenv drops the database
	e := &sqlEnv{db: db, dsn: dsn, driver: driver}
	_, err = db.Exec("CREATE TABLE item (id INTEGER NOT NULL PRIMARY KEY, owner INTEGER, note VARCHAR(200))")
	require.NoError(t, err)
	for i := 1; i <= 20; i++ {
		_, err = db.Exec(e.q("INSERT INTO item (id) VALUES (?)"), i)
		require.NoError(t, err)
	}
	e.h, err = builtin.NewSQL(builtin.SQLConfig{DataSources: map[string]builtin.DataSource{"biz": {Driver: driver, DSN: dsn}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, e.h.Close()) })
	return e
}

// q is query, written with ? placeholders, for the env's test connection
// e.db: with $1, $2, … for PostgreSQL.
func (e *sqlEnv) q(query string) string {
	if e.driver != "postgres" {
		return query
	}
	return namedsql.Dollar(query)
}

// allDrivers runs f on a data source of each driver of the sql handler.
func allDrivers(t *testing.T, f func(t *testing.T, e *sqlEnv)) {
	eachDriver(t, []string{"mysql", "postgres", "sqlite"}, f)
}

func eachDriver(t *testing.T, drivers []string, f func(t *testing.T, e *sqlEnv)) {
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f(t, newSQLEnv(t, d))
		})
	}
}

func TestSQLBindsSlotTotalAndArgs(t *testing.T) {
	t.Parallel()
	allDrivers(t, func(t *testing.T, e *sqlEnv) {
		// Slot 3 of 8 owns ids 3, 11, 19.
		task, log := newTask(`{"datasource": "biz",
			"statement": "UPDATE item SET owner = :slot, note = ? WHERE id % :total = :slot AND id > :min -- a :comment\n",
			"args": ["it's; DROP TABLE item; --"], "named": {"min": 0}}`)
		require.NoError(t, e.h.Handle(context.Background(), task))
		processed, _, _, _ := task.Counts()
		require.EqualValues(t, 3, processed, "rows affected are counted")
		require.Contains(t, log.String(), "rows_affected=3")
		var ids []int
		rows, err := e.db.Query(e.q("SELECT id FROM item WHERE owner = 3 AND note = ? ORDER BY id"), "it's; DROP TABLE item; --")
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
// PostgreSQL reads it as SQLite does.
func TestSQLBackslashInjection(t *testing.T) {
	t.Parallel()
	allDrivers(t, func(t *testing.T, e *sqlEnv) {
		task, _ := newTask(`{"datasource": "biz", "statement": "UPDATE item SET note = 'a\\'; DROP TABLE item; --'"}`)
		err := e.h.Handle(context.Background(), task)
		if driverOf(e) != "mysql" {
			require.ErrorContains(t, err, "sql handler params: statement: one statement only: text follows the ';' at byte 27; run each statement as a job of its own")
		} else {
			require.ErrorContains(t, err, "sql handler params: statement: the ' literal at byte 23 ends at a different place depending on whether the MySQL server reads backslashes as escapes")
		}
		var n int
		require.NoError(t, e.db.QueryRow("SELECT COUNT(*) FROM item WHERE note IS NULL").Scan(&n))
		require.Equal(t, 20, n, "the table survived and no row changed")

		if driverOf(e) != "mysql" {
			task, _ = newTask(`{"datasource": "biz", "statement": "UPDATE item SET note = 'C:\\' WHERE id = 1"}`)
			require.NoError(t, e.h.Handle(context.Background(), task), "a backslash is an ordinary character to SQLite and PostgreSQL")
			var note string
			require.NoError(t, e.db.QueryRow("SELECT note FROM item WHERE id = 1").Scan(&note))
			require.Equal(t, `C:\`, note)
		}
	})
}

func TestSQLErrors(t *testing.T) {
	t.Parallel()
	allDrivers(t, func(t *testing.T, e *sqlEnv) {
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
	name, ds, err = builtin.ParseDataSource("ledger=postgres:postgres://app:pw@db:5432/ledger?sslmode=disable")
	require.NoError(t, err)
	require.Equal(t, "ledger", name)
	require.Equal(t, builtin.DataSource{Driver: "postgres", DSN: "postgres://app:pw@db:5432/ledger?sslmode=disable"}, ds)

	for ds, want := range map[builtin.DataSource]string{
		{Driver: "oracle", DSN: "x"}:                 `driver "oracle": use mysql (MySQL, MariaDB), postgres (PostgreSQL) or sqlite`,
		{Driver: "postgres", DSN: " "}:               "postgres needs a DSN",
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
	allDrivers(t, func(t *testing.T, e *sqlEnv) {
		params := `{"datasource": "biz", "statement": "UPDATE item SET note = CONCAT(:business_date, '/', :workflow_node, '/', :workflow_run_id) WHERE id = 1"}`
		if driverOf(e) != "mysql" {
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
	allDrivers(t, func(t *testing.T, e *sqlEnv) {
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

// TestSQLLockWaitTimeoutIsRetryable: a row held by another transaction,
// and a data source whose sessions wait one second for a lock (MariaDB's
// innodb_lock_wait_timeout, a DSN system variable of go-sql-driver/mysql;
// PostgreSQL's lock_timeout, a run-time parameter of the DSN): the timeout
// is retryable.
func TestSQLLockWaitTimeoutIsRetryable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ driver, dsnParam, code string }{
		{"mysql", "&innodb_lock_wait_timeout=1", "1205"},
		{"postgres", "&lock_timeout=1000", "55P03"},
	} {
		t.Run(c.driver, func(t *testing.T) {
			t.Parallel()
			e := newSQLEnv(t, c.driver)
			tx, err := e.db.Begin()
			require.NoError(t, err)
			defer func() { _ = tx.Rollback() }()
			_, err = tx.Exec("UPDATE item SET note = 'held' WHERE id = 1")
			require.NoError(t, err)
			h, err := builtin.NewSQL(builtin.SQLConfig{DataSources: map[string]builtin.DataSource{"biz": {Driver: c.driver, DSN: e.dsn + c.dsnParam}}})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, h.Close()) })
			task, _ := newTask(`{"datasource": "biz", "statement": "UPDATE item SET note = 'mine' WHERE id = 1"}`)
			err = h.Handle(context.Background(), task)
			require.Error(t, err)
			require.True(t, builtin.IsRetryable(err), "%v", err)
			class, _ := classOf(err)
			require.Equal(t, "retryable", class)
			require.ErrorContains(t, err, c.code)
		})
	}
}

// TestSQLTimeout: a statement still running when timeout_ms is over fails
// as retryable, on every driver; on PostgreSQL the server stops it too (pgx
// sends a cancel request), so that it holds no lock past its job's timeout.
func TestSQLTimeout(t *testing.T) {
	t.Parallel()
	allDrivers(t, func(t *testing.T, e *sqlEnv) {
		stmt := map[string]string{
			"mysql":    "SELECT SLEEP(60)",
			"postgres": "SELECT pg_sleep(60)",
			"sqlite":   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c",
		}[driverOf(e)]
		task, _ := newTask(`{"datasource": "biz", "statement": "` + stmt + `", "timeout_ms": 300}`)
		done := make(chan error, 1)
		go func() { done <- e.h.Handle(context.Background(), task) }()
		select {
		case err := <-done:
			require.True(t, builtin.IsRetryable(err), "%v", err)
			require.EqualError(t, err, "sql on biz: not done within timeout 300ms (retryable)")
		case <-time.After(waitTimeout):
			t.Fatalf("the statement was not given up within %s", waitTimeout)
		}
		if driverOf(e) != "postgres" {
			return
		}
		testenv.WaitFor(t, waitTimeout, func() (bool, error) {
			var n int
			err := e.db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep%' AND state = 'active'").Scan(&n)
			return n == 0, err
		}, "the server to stop the statement")
	})
}

// TestSQLQueryChangesNoRow: a query run as a job counts no row as
// processed, on every driver (PostgreSQL's command tag counts the rows it
// returned).
func TestSQLQueryChangesNoRow(t *testing.T) {
	t.Parallel()
	allDrivers(t, func(t *testing.T, e *sqlEnv) {
		task, log := newTask(`{"datasource": "biz", "statement": "SELECT id FROM item WHERE id > ?", "args": [5]}`)
		require.NoError(t, e.h.Handle(context.Background(), task))
		processed, _, _, _ := task.Counts()
		require.Zero(t, processed)
		require.Contains(t, log.String(), "rows_affected=0")
	})
}

// TestSQLPostgresLiterals runs statements through the handler whose
// literals and comments PostgreSQL reads its own way: each is one
// statement, whose ';' and placeholders inside literals and comments are
// text, and its ? and :name are bound.
func TestSQLPostgresLiterals(t *testing.T) {
	t.Parallel()
	e := newSQLEnv(t, "postgres")
	for _, c := range []struct {
		stmt string
		args []any
		want string
	}{
		{`UPDATE item SET note = E'a\'; DROP TABLE item; --' WHERE id = 1`, nil, `a'; DROP TABLE item; --`},
		{`UPDATE item SET note = 'C:\' || ? WHERE id = :slot`, []any{"x"}, `C:\x`},
		{`UPDATE item SET note = $$it's; :slot ?$$ || $t$ $$ $t$ WHERE id = 4`, nil, `it's; :slot ? $$ `},
		{"UPDATE item SET note = E'a'\n'\\'; ?' /* nested /* ; */ :slot; */ WHERE id = 5 -- ;", nil, `a'; ?`},
		{`UPDATE item SET note = name'\' || ? WHERE id = 6`, []any{"x"}, `\x`},
	} {
		params, err := json.Marshal(map[string]any{"datasource": "biz", "statement": c.stmt, "args": c.args})
		require.NoError(t, err)
		task, _ := newTask(string(params))
		require.NoError(t, e.h.Handle(context.Background(), task), c.stmt)
		processed, _, _, _ := task.Counts()
		require.EqualValues(t, 1, processed, c.stmt)
		var n int
		require.NoError(t, e.db.QueryRow("SELECT count(*) FROM item WHERE note = $1", c.want).Scan(&n))
		require.Equal(t, 1, n, "%s: want the note %q", c.stmt, c.want)
	}
	var n int
	require.NoError(t, e.db.QueryRow("SELECT count(*) FROM item").Scan(&n))
	require.Equal(t, 20, n, "the table survived")
}

// TestSQLPostgresDSN: a PostgreSQL DSN that does not parse, or a database
// that cannot be reached, gives an error that says so, without the
// password.
func TestSQLPostgresDSN(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"postgres://app:s3cret@127.0.0.1:5432/x?sslmode=bogus":      "not a PostgreSQL DSN",
		"postgres://app:s3cr%zzet@127.0.0.1:5432/x":                 "not a PostgreSQL DSN",
		"postgres://app:s3cret@127.0.0.1:bad/x":                     "not a PostgreSQL DSN",
		"host=127.0.0.1 user=app password=s3cret sslmode=bogus":     "not a PostgreSQL DSN",
		"host=127.0.0.1 user=app password='s3cret x' port=notaport": "not a PostgreSQL DSN",
	} {
		_, err := builtin.NewSQL(builtin.SQLConfig{DataSources: map[string]builtin.DataSource{"ledger": {Driver: "postgres", DSN: dsn}}})
		require.ErrorContains(t, err, `sql data source "ledger": `+want, dsn)
		require.NotContains(t, err.Error(), "s3cr", dsn)
	}

	// The server answers, the database is not there; no server answers.
	base, err := url.Parse(testenv.Postgres(t))
	require.NoError(t, err)
	for _, c := range []struct{ host, db, want string }{
		{base.Host, "nosuch_db", `database "nosuch_db" does not exist`},
		{"127.0.0.1:1", "x", "127.0.0.1:1"},
	} {
		u := *base
		u.User = url.UserPassword("postgres", "s3cret")
		u.Host, u.Path = c.host, "/"+c.db
		h, err := builtin.NewSQL(builtin.SQLConfig{DataSources: map[string]builtin.DataSource{"ledger": {Driver: "postgres", DSN: u.String()}}})
		require.NoError(t, err, "opening connects to nothing yet")
		task, _ := newTask(`{"datasource": "ledger", "statement": "SELECT 1"}`)
		err = h.Handle(context.Background(), task)
		require.ErrorContains(t, err, "sql on ledger: failed to connect to `user=postgres database="+c.db+"`")
		require.ErrorContains(t, err, c.want)
		require.NotContains(t, err.Error(), "s3cret")
		require.NoError(t, h.Close())
	}
}
