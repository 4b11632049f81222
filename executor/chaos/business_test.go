package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// business is the private database server of a cluster, which holds the
// platform database (the admin's) and the business database (the demo
// handlers'), and what the test does on it that differs by dialect: the
// DSNs, the test's own pools, and the SQL of the checks that is not
// portable (the keys are binary columns holding decimal ids).
type business interface {
	name() string // "MariaDB", "PostgreSQL"
	// server is the server the test kills and starts again.
	server() testenv.DBServer
	// setup creates the platform and the business database. It returns
	// the admin's --db-driver and --db-dsn, and the executors'
	// --demo-db-dsn, whose sessions end a transaction left idle for
	// idleTxTimeout (that of a frozen executor).
	setup(t testing.TB) (driver, platformDSN, bizDSN string)
	// testPool opens the test's pool on the business database, which
	// fails fast while the server is down and takes "?" placeholders.
	testPool(t testing.TB) *sql.DB
	// platformPool opens a pool on the platform database ("?"
	// placeholders).
	platformPool(t testing.TB) *sql.DB
	// number is SQL of the decimal key in the binary column col, as an
	// integer.
	number(col string) string
	// idemKey is SQL of an idempotency key "<job>|<scope>|<key>", from an
	// integer expression and two binary ones (or string literals).
	idemKey(job, scope, key string) string
	// analyze is the statement that refreshes the planner's statistics of
	// the business tables before the checks join them, or "" when the
	// server keeps them up to date itself.
	analyze() string
}

// mariaDB is a private MariaDB.
type mariaDB struct{ db *testenv.MariaDB }

func startMariaDB(t testing.TB) business { return &mariaDB{testenv.StartMariaDB(t)} }

func (*mariaDB) name() string               { return "MariaDB" }
func (m *mariaDB) server() testenv.DBServer { return m.db }

func (m *mariaDB) setup(t testing.TB) (driver, platformDSN, bizDSN string) {
	root, err := sql.Open("mysql", m.db.DSN(""))
	require.NoError(t, err)
	for _, q := range []string{
		"CREATE DATABASE " + platformDB + " CHARACTER SET utf8mb4",
		"CREATE DATABASE " + businessDB + " CHARACTER SET utf8mb4",
	} {
		if _, err = root.Exec(q); err != nil {
			break
		}
	}
	require.NoError(t, root.Close())
	require.NoError(t, err)

	cfg, err := mysql.ParseDSN(m.db.DSN(businessDB))
	require.NoError(t, err)
	cfg.MultiStatements = false
	cfg.Params = map[string]string{"idle_transaction_timeout": strconv.Itoa(int(idleTxTimeout / time.Second))}
	return "mysql", m.db.DSN(platformDB), cfg.FormatDSN()
}

func (m *mariaDB) testPool(t testing.TB) *sql.DB {
	db, err := m.db.FailFastPool(businessDB, 30*time.Second)
	require.NoError(t, err)
	return db
}

func (m *mariaDB) platformPool(t testing.TB) *sql.DB {
	db, err := sql.Open("mysql", m.db.DSN(platformDB))
	require.NoError(t, err)
	return db
}

func (*mariaDB) number(col string) string { return "CAST(" + col + " AS UNSIGNED)" }

func (*mariaDB) idemKey(job, scope, key string) string {
	return fmt.Sprintf("CONCAT(%s, '|', %s, '|', %s)", job, scope, key)
}

// InnoDB recalculates a table's persistent statistics itself once a tenth
// of its rows changed.
func (*mariaDB) analyze() string { return "" }

// postgreSQL is a private PostgreSQL server.
type postgreSQL struct{ db *testenv.PostgreSQL }

func startPostgreSQL(t testing.TB) business { return &postgreSQL{testenv.StartPostgreSQL(t)} }

func (*postgreSQL) name() string               { return "PostgreSQL" }
func (p *postgreSQL) server() testenv.DBServer { return p.db }

func (p *postgreSQL) setup(t testing.TB) (driver, platformDSN, bizDSN string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, p.db.CreateDatabase(ctx, platformDB))
	require.NoError(t, p.db.CreateDatabase(ctx, businessDB))
	// PostgreSQL takes server settings in the startup packet's options.
	bizDSN = fmt.Sprintf("%s&options=-c%%20idle_in_transaction_session_timeout%%3D%d", p.db.DSN(businessDB), idleTxTimeout.Milliseconds())
	db, err := sql.Open("pgx", bizDSN)
	require.NoError(t, err)
	defer db.Close()
	var timeout string
	require.NoError(t, db.QueryRowContext(ctx, "SHOW idle_in_transaction_session_timeout").Scan(&timeout))
	require.Equal(t, idleTxTimeout.String(), timeout, "the executors' sessions end idle transactions")
	return "postgres", p.db.DSN(platformDB), bizDSN
}

func (p *postgreSQL) testPool(t testing.TB) *sql.DB {
	db, err := p.db.FailFastPool(businessDB, 30*time.Second)
	require.NoError(t, err)
	return db
}

func (p *postgreSQL) platformPool(t testing.TB) *sql.DB {
	db, err := sql.Open(testenv.PostgresQMarkDriver, p.db.DSN(platformDB))
	require.NoError(t, err)
	return db
}

func (*postgreSQL) number(col string) string {
	return "CAST(convert_from(" + col + ", 'UTF8') AS BIGINT)"
}

func (*postgreSQL) idemKey(job, scope, key string) string {
	return fmt.Sprintf("convert_to(CAST(%s AS TEXT), 'UTF8') || CAST('|' AS BYTEA) || %s || CAST('|' AS BYTEA) || %s", job, scope, key)
}

// A run fills tables created empty with tens of thousands of rows within
// seconds, before autovacuum analyzed them: planned as empty tables, the
// checks' joins run for minutes.
func (*postgreSQL) analyze() string { return "ANALYZE ledger, dedup_record, external_calls" }
