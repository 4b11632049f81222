package records

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk"
)

// TestMain fails the package when a goroutine (pipeline stages, lease
// renewal, handlers) outlives the tests, checked after the test databases
// were dropped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// waitTimeout bounds every wait of the tests on a signal.
const waitTimeout = 30 * time.Second

// env is one test's own database, of one dialect, with the schema.
type env struct {
	dialect string
	db      *sql.DB
	dsn     string // MySQL: the DSN of the database
}

// eachDialect runs f as a parallel subtest per dialect, each with its own
// database: a MariaDB database from testenv.MySQL, a PostgreSQL database
// from testenv.Postgres and a SQLite file.
func eachDialect(t *testing.T, f func(t *testing.T, e *env)) {
	t.Helper()
	for _, d := range dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			f(t, newEnv(t, d))
		})
	}
}

func newEnv(t testing.TB, dialect string, mysqlParams ...string) *env {
	t.Helper()
	switch dialect {
	case DialectMySQL:
		cfg, err := mysql.ParseDSN(testenv.MySQL(t))
		require.NoError(t, err)
		cfg.InterpolateParams = true
		cfg.MultiStatements = false
		for i := 0; i+1 < len(mysqlParams); i += 2 {
			if cfg.Params == nil {
				cfg.Params = map[string]string{}
			}
			cfg.Params[mysqlParams[i]] = mysqlParams[i+1]
		}
		return openEnv(t, dialect, cfg.FormatDSN())
	case DialectPostgres:
		return openEnv(t, dialect, testenv.Postgres(t))
	case DialectSQLite:
		path := filepath.Join(t.TempDir(), "records.db")
		return openEnv(t, dialect, "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	}
	t.Fatalf("unknown dialect %q", dialect)
	return nil
}

// openEnv opens dsn and creates the schema and the effect table.
func openEnv(t testing.TB, dialect, dsn string) *env {
	t.Helper()
	e := &env{dialect: dialect, dsn: dsn}
	var err error
	e.db, err = sql.Open(e.driverName(), dsn)
	require.NoError(t, err)
	e.db.SetMaxIdleConns(32)
	t.Cleanup(func() { _ = e.db.Close() }) // before testenv drops the database
	p, err := New(Config{DB: e.db, Dialect: dialect, Mode: Transactional})
	require.NoError(t, err)
	require.NoError(t, p.EnsureSchema(context.Background()))
	_, err = e.db.Exec("CREATE TABLE effect (k VARCHAR(255) NOT NULL, token BIGINT NOT NULL)")
	require.NoError(t, err)
	return e
}

// driverName is the database/sql driver of e's dialect.
func (e *env) driverName() string {
	if e.dialect == DialectPostgres {
		return testenv.PostgresQMarkDriver
	}
	return e.dialect
}

// processor returns a Processor on e with cfg (DB, Dialect and a test
// logger filled in).
func (e *env) processor(t testing.TB, cfg Config) *Processor {
	t.Helper()
	cfg.DB = e.db
	cfg.Dialect = e.dialect
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	p, err := New(cfg)
	require.NoError(t, err)
	return p
}

// count runs a COUNT query.
func (e *env) count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, e.db.QueryRow(query, args...).Scan(&n))
	return n
}

// statuses returns the number of dedup rows per status of a scope.
func (e *env) statuses(t testing.TB, job int64, scope string) map[string]int {
	t.Helper()
	rows, err := e.db.Query("SELECT status, COUNT(*) FROM dedup_record WHERE job_id = ? AND scope = ? GROUP BY status", job, scope)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		require.NoError(t, rows.Scan(&s, &n))
		out[s] = n
	}
	require.NoError(t, rows.Err())
	return out
}

type rowState struct {
	Status   string
	Attempts int
	Token    int64
	Error    string
}

func (e *env) row(t testing.TB, job int64, scope, key string) rowState {
	t.Helper()
	var r rowState
	require.NoError(t, e.db.QueryRow("SELECT status, attempts, token, error FROM dedup_record WHERE job_id = ? AND scope = ? AND record_key = ?",
		job, scope, key).Scan(&r.Status, &r.Attempts, &r.Token, &r.Error))
	return r
}

// effects returns how many effect rows each key has.
func (e *env) effects(t testing.TB) map[string]int {
	t.Helper()
	rows, err := e.db.Query("SELECT k FROM effect")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		out[k]++
	}
	require.NoError(t, rows.Err())
	return out
}

// insertEffect is the Transactional handler of most tests: one effect row
// per call, through the record's transaction.
func insertEffect(token int64) Func {
	return func(ctx context.Context, rec Record) error {
		_, err := rec.Tx.ExecContext(ctx, "INSERT INTO effect (k, token) VALUES (?, ?)", rec.Key, token)
		return err
	}
}

func newTask(job, run int64, slot int, token int64) *sdk.Task {
	return &sdk.Task{JobID: job, RunID: run, Slot: slot, SlotCount: slot + 1, Token: token, Attempt: 1}
}

// keys returns n keys "k00000", "k00001", …
func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("k%05d", i)
	}
	return out
}

// testLogger discards logs unless RECORDS_TEST_LOG=1 (not t.Log: a
// goroutine logging after its test ended would panic).
func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("RECORDS_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", t.Name())
	}
	return slog.New(slog.DiscardHandler)
}

// debugLogger logs at debug level into w, a testenv.Buffer of a test that
// checks the logs.
func debugLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// recv receives from c or fails the test after waitTimeout.
func recv[T any](t testing.TB, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
		panic("unreachable")
	}
}
