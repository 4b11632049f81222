package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// platform is the private database server of a cluster and what the test
// does on it that differs by dialect: the replicas' users, the test's own
// pool, the database clock, the error classes it retries, and how it finds
// a replica waiting on a lock.
type platform interface {
	name() string   // "MariaDB", "PostgreSQL"
	driver() string // --db-driver of the admins
	server() testenv.DBServer
	// setup creates the platform database and a user per replica, named
	// like it (so that the test can tell their sessions apart).
	setup(t testing.TB, replicas int)
	// adminDSN is the DSN replica id connects with: its own user.
	adminDSN(t testing.TB, id string) string
	// testPool opens the test's pool, which fails fast while the server is
	// down and takes "?" placeholders.
	testPool(t testing.TB) *sql.DB
	nowMS() string // SQL of the database clock in Unix ms
	// transient reports a deadlock or lock timeout (run the statement again).
	transient(err error) bool
	// duplicateOrTimeout reports a duplicate key or a lock-wait timeout.
	duplicateOrTimeout(err error) bool
	// lockTimeout returns the statements that set the session's lock wait
	// to one second and back.
	lockTimeout() (set, reset string)
	// waiterSQL finds the session (thread or backend pid) of user ? whose
	// statement inserting into job_run waits for a lock.
	waiterSQL() string
	// diagnostics lists the open transactions and what they wait for.
	diagnostics(db *sql.DB) string
}

// mariaDB is the platform on a private MariaDB.
type mariaDB struct{ db *testenv.MariaDB }

func startMariaDBPlatform(t testing.TB) platform { return &mariaDB{testenv.StartMariaDB(t)} }

func (*mariaDB) name() string               { return "MariaDB" }
func (*mariaDB) driver() string             { return "mysql" }
func (m *mariaDB) server() testenv.DBServer { return m.db }

func (m *mariaDB) setup(t testing.TB, replicas int) {
	root, err := sql.Open("mysql", m.db.DSN(""))
	require.NoError(t, err)
	stmts := []string{"CREATE DATABASE " + dbName + " CHARACTER SET utf8mb4"}
	for i := 1; i <= replicas; i++ {
		user := fmt.Sprintf("'admin-%d'@'%%'", i)
		stmts = append(stmts, "CREATE USER "+user, "GRANT ALL PRIVILEGES ON "+dbName+".* TO "+user)
	}
	for _, q := range stmts {
		if _, err = root.Exec(q); err != nil {
			break
		}
	}
	require.NoError(t, root.Close())
	require.NoError(t, err)
}

func (m *mariaDB) adminDSN(t testing.TB, id string) string {
	cfg, err := mysql.ParseDSN(m.db.DSN(dbName))
	require.NoError(t, err)
	cfg.User = id
	return cfg.FormatDSN()
}

func (m *mariaDB) testPool(t testing.TB) *sql.DB {
	db, err := m.db.FailFastPool(dbName, 5*time.Second)
	require.NoError(t, err)
	return db
}

func (*mariaDB) nowMS() string { return "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)" }

func (*mariaDB) transient(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
}

func (*mariaDB) duplicateOrTimeout(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1062 || me.Number == 1205)
}

func (*mariaDB) lockTimeout() (set, reset string) {
	return "SET SESSION innodb_lock_wait_timeout = 1", "SET SESSION innodb_lock_wait_timeout = DEFAULT"
}

func (*mariaDB) waiterSQL() string {
	return `SELECT ID FROM information_schema.PROCESSLIST
		WHERE USER = ? AND COMMAND = 'Query' AND INFO LIKE '%INTO job_run%' LIMIT 1`
}

func (*mariaDB) diagnostics(db *sql.DB) string {
	var b strings.Builder
	rows, err := db.Query(`SELECT t.trx_id, t.trx_state, t.trx_started, t.trx_mysql_thread_id, COALESCE(p.USER, '?'),
		COALESCE(t.trx_query, ''), t.trx_rows_locked, COALESCE(w.blocking_trx_id, '')
		FROM information_schema.INNODB_TRX t
		LEFT JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
		LEFT JOIN information_schema.INNODB_LOCK_WAITS w ON w.requesting_trx_id = t.trx_id
		ORDER BY t.trx_started`)
	if err != nil {
		return "INNODB_TRX: " + err.Error()
	}
	defer rows.Close()
	b.WriteString("open InnoDB transactions:")
	for rows.Next() {
		var id, state, started, user, query, blocker string
		var thread, locked int64
		if err := rows.Scan(&id, &state, &started, &thread, &user, &query, &locked, &blocker); err != nil {
			return b.String() + " " + err.Error()
		}
		fmt.Fprintf(&b, "\n  trx %s of %s (thread %d) %s since %s, %d rows locked", id, user, thread, state, started, locked)
		if blocker != "" {
			fmt.Fprintf(&b, ", waiting for trx %s", blocker)
		}
		if query != "" {
			fmt.Fprintf(&b, ": %s", oneLine(query))
		}
	}
	if err := rows.Err(); err != nil {
		return b.String() + " " + err.Error()
	}
	return b.String()
}

// postgreSQL is the platform on a private PostgreSQL server.
type postgreSQL struct{ db *testenv.PostgreSQL }

func startPostgreSQLPlatform(t testing.TB) platform {
	return &postgreSQL{testenv.StartPostgreSQL(t)}
}

func (*postgreSQL) name() string               { return "PostgreSQL" }
func (*postgreSQL) driver() string             { return "postgres" }
func (p *postgreSQL) server() testenv.DBServer { return p.db }

func (p *postgreSQL) setup(t testing.TB, replicas int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, p.db.CreateDatabase(ctx, dbName))
	root, err := sql.Open(testenv.PostgresQMarkDriver, p.db.DSN(dbName))
	require.NoError(t, err)
	defer root.Close()
	for i := 1; i <= replicas; i++ {
		// Superusers: the admins migrate the schema; the user only names
		// the replica's sessions (pg_stat_activity.usename).
		_, err := root.ExecContext(ctx, fmt.Sprintf(`CREATE ROLE "admin-%d" LOGIN SUPERUSER`, i))
		require.NoError(t, err)
	}
}

func (p *postgreSQL) adminDSN(_ testing.TB, id string) string {
	return strings.Replace(p.db.DSN(dbName), "postgres://postgres@", "postgres://"+id+"@", 1)
}

func (p *postgreSQL) testPool(t testing.TB) *sql.DB {
	db, err := p.db.FailFastPool(dbName, 5*time.Second)
	require.NoError(t, err)
	return db
}

func (*postgreSQL) nowMS() string {
	return "CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)"
}

func pgState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func (*postgreSQL) transient(err error) bool {
	switch pgState(err) {
	case "40P01", "55P03", "40001": // deadlock, lock not available, serialization
		return true
	}
	return false
}

func (*postgreSQL) duplicateOrTimeout(err error) bool {
	switch pgState(err) {
	case "23505", "55P03": // unique violation, lock_timeout
		return true
	}
	return false
}

func (*postgreSQL) lockTimeout() (set, reset string) {
	return "SET lock_timeout = '1s'", "RESET lock_timeout"
}

func (*postgreSQL) waiterSQL() string {
	return `SELECT pid FROM pg_stat_activity
		WHERE usename = ? AND wait_event_type = 'Lock' AND query LIKE '%INTO job_run%' LIMIT 1`
}

func (*postgreSQL) diagnostics(db *sql.DB) string {
	var b strings.Builder
	rows, err := db.Query(`SELECT pid, COALESCE(usename, '?'), COALESCE(state, ''), COALESCE(xact_start::text, ''),
		COALESCE(wait_event_type || ':' || wait_event, ''), CAST(pg_blocking_pids(pid) AS text), COALESCE(query, '')
		FROM pg_stat_activity WHERE datname = current_database() AND xact_start IS NOT NULL AND pid <> pg_backend_pid()
		ORDER BY xact_start`)
	if err != nil {
		return "pg_stat_activity: " + err.Error()
	}
	defer rows.Close()
	b.WriteString("open PostgreSQL transactions:")
	for rows.Next() {
		var pid int64
		var user, state, started, wait, blockers, query string
		if err := rows.Scan(&pid, &user, &state, &started, &wait, &blockers, &query); err != nil {
			return b.String() + " " + err.Error()
		}
		fmt.Fprintf(&b, "\n  backend %d of %s %s since %s", pid, user, state, started)
		if wait != "" {
			fmt.Fprintf(&b, ", waiting on %s for %s", wait, blockers)
		}
		if query != "" {
			fmt.Fprintf(&b, ": %s", oneLine(query))
		}
	}
	if err := rows.Err(); err != nil {
		return b.String() + " " + err.Error()
	}
	return b.String()
}
