package records

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sql/namedsql"
	"github.com/shardjob/shardjob/sql/namedsql/gen"
)

func TestConnectionErrorsRetriedOnlyByIdempotentOperations(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	require.True(t, connectionError(refused))
	require.True(t, connectionError(fmt.Errorf("x: %w", mysql.ErrInvalidConn)))
	require.True(t, connectionError(driver.ErrBadConn))
	require.False(t, connectionError(context.Canceled))
	require.False(t, connectionError(&mysql.MySQLError{Number: 1062}))
	require.False(t, retryable(refused), "a transaction is not run again after a broken connection (its COMMIT may have happened)")

	calls := 0
	require.NoError(t, idempotently(context.Background(), func() error {
		calls++
		switch calls {
		case 1:
			return refused
		case 2:
			return &mysql.MySQLError{Number: mysqlDeadlock}
		}
		return nil
	}))
	require.Equal(t, 3, calls)

	calls = 0
	dup := &mysql.MySQLError{Number: 1062}
	require.ErrorIs(t, idempotently(context.Background(), func() error { calls++; return dup }), dup)
	require.Equal(t, 1, calls, "other errors are returned at once")
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	db := &sql.DB{} // never used
	ok := Config{DB: db, Dialect: DialectMySQL, Mode: External, Uncertain: Skip}
	require.NoError(t, ok.Validate())
	require.NoError(t, ok.WithDefaults().Validate())

	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no db", Config{Dialect: DialectMySQL, Mode: Transactional}, "DB is nil"},
		{"dialect", Config{DB: db, Dialect: "oracle", Mode: Transactional}, `Dialect "oracle"`},
		{"no mode", Config{DB: db, Dialect: DialectSQLite}, "Mode is not set: choose records.Transactional"},
		{"external needs a policy", Config{DB: db, Dialect: DialectSQLite, Mode: External}, "Uncertain is not set"},
		{"batch", Config{DB: db, Dialect: DialectSQLite, Mode: Transactional, BatchSize: 5000}, "BatchSize is 5000: must be in [1, 4000]"},
		{"lease", Config{DB: db, Dialect: DialectSQLite, Mode: Transactional, LockLease: 1}, "LockLease is 1ns"},
		{"scope", Config{DB: db, Dialect: DialectSQLite, Mode: Transactional, Scope: "run:7"}, `reserved for ScopeRun`},
		{"long scope", Config{DB: db, Dialect: DialectSQLite, Mode: Transactional, Scope: Scope(strings.Repeat("s", 129))}, "at most 128"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		require.ErrorIs(t, err, ErrInvalidConfig, c.name)
		require.ErrorContains(t, err, c.want, c.name)
		_, err = New(c.cfg)
		require.ErrorIs(t, err, ErrInvalidConfig, c.name)
	}

	d := Config{DB: db, Dialect: DialectSQLite, Mode: Transactional}.WithDefaults()
	require.Equal(t, DefaultBatchSize, d.BatchSize)
	require.Equal(t, 1, d.Concurrency, "SQLite, Transactional: one writer at a time")
	require.Equal(t, DefaultConcurrency, Config{Dialect: DialectSQLite, Mode: External}.WithDefaults().Concurrency)
	require.Equal(t, DefaultTransactionalConcurrency, Config{Dialect: DialectMySQL, Mode: Transactional}.WithDefaults().Concurrency)
	require.Equal(t, DefaultMaxRecordAttempts, d.MaxRecordAttempts)
	require.Equal(t, DefaultLockLease, d.LockLease)
	require.Equal(t, Retry, d.Uncertain, "Transactional mode defaults to Retry")
	require.NotEmpty(t, d.Holder)
	require.NotNil(t, d.Logger)
}

func TestScopeResolve(t *testing.T) {
	t.Parallel()
	require.Equal(t, "run:1001", ScopeRun.resolve(1001))
	require.Equal(t, "job", ScopeJob.resolve(1001))
	require.Equal(t, "date:2026-11-30", Scope("date:2026-11-30").resolve(1001))
}

func TestQueriesLoadForEveryDialect(t *testing.T) {
	t.Parallel()
	// queries_gen.go is current and every query is used by some code.
	require.NoError(t, gen.Check("."))
	for _, d := range dialects {
		q, err := loadQueries(d)
		require.NoError(t, err, d)
		for n, text := range q.texts {
			require.NotEmpty(t, text, "%s: %s", d, query(n))
			require.NotContains(t, text, "{{now_ms}}", "%s: %s", d, query(n))
		}
	}
	q, _ := loadQueries(DialectMySQL)
	require.Contains(t, q.get(qLockCheck), "LOCK IN SHARE MODE")
	require.Contains(t, q.get(qDedupRead), "FOR UPDATE")
	q, _ = loadQueries(DialectSQLite)
	require.Contains(t, q.get(qLockCheck), "RETURNING")
	require.NotContains(t, q.get(qDedupRead), "FOR UPDATE")
	q, _ = loadQueries(DialectPostgres)
	require.Contains(t, q.get(qLockCheck), "FOR SHARE")
	require.Contains(t, q.get(qLockCheck), "slot = $3")
	require.True(t, strings.HasSuffix(q.get(qLockInsert), "ON CONFLICT DO NOTHING"), q.get(qLockInsert))
	require.Equal(t, "$1", q.expand(qDedupRead, 2)[strings.Index(q.expand(qDedupRead, 2), "job_id = ")+len("job_id = "):][:2])
	require.Contains(t, q.expand(qDedupRead, 2), "IN ($3, $4)")

	parse := func(text string) error {
		qs, err := namedsql.Parse(text)
		if err == nil {
			_, err = parseQueries(qs, DialectMySQL)
		}
		return err
	}
	require.ErrorContains(t, parse("-- name: X\nSELECT {{nope}};\n"), "unknown macro")
	require.ErrorContains(t, parse("-- name: X\nSELECT 1;\n-- name: X\nSELECT 2;\n"), "defined twice")
	require.ErrorContains(t, parse("-- name: X.oracle\nSELECT 1;\n"), "unknown dialect")
	// Over two files, each parsed alone.
	a, _ := namedsql.Parse("-- name: X\nSELECT 1;\n")
	_, err := parseQueries(append(a, a...), DialectMySQL)
	require.ErrorContains(t, err, "defined twice")
}

func TestExpand(t *testing.T) {
	t.Parallel()
	require.Equal(t, "SELECT 1 WHERE k IN (?, ?, ?)", expand("SELECT 1 WHERE k IN ({{list}})", 3))
	require.Equal(t, "INSERT INTO t (a, b) VALUES (?, 1), (?, 1)", expand("INSERT INTO t (a, b) VALUES {{rows}} (?, 1)", 2))
	require.Equal(t, "SET e = CASE k WHEN ? THEN ? WHEN ? THEN ? END WHERE k IN (?, ?)",
		expand("SET e = CASE k {{cases}}END WHERE k IN ({{list}})", 2))
	for _, d := range []string{DialectMySQL, DialectSQLite} {
		q, _ := loadQueries(d)
		for _, n := range []int{1, 7} {
			for name, text := range q.texts {
				out := expand(text, n)
				require.NotContains(t, out, "{{", "%s %s", d, query(name))
				want := strings.Count(text, "?")
				switch {
				case strings.Contains(text, "{{rows}}"):
					want *= n
				case strings.Contains(text, "{{cases}}"):
					want += 3 * n
				case strings.Contains(text, "{{list}}"):
					want += n
				}
				require.Equal(t, want, strings.Count(out, "?"), "%s %s n=%d", d, query(name), n)
			}
		}
	}
}

func TestDDLStatements(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		ddl, err := DDL(d)
		require.NoError(t, err)
		stmts := splitStatements(ddl)
		require.NotEmpty(t, stmts)
		for _, s := range stmts {
			require.Contains(t, s, "IF NOT EXISTS", "every statement of the DDL is idempotent: %s", s)
		}
	}
	_, err := DDL("oracle")
	require.Error(t, err)
}

type codedErr struct{ code int }

func (e codedErr) Error() string { return fmt.Sprintf("sqlite error %d", e.code) }
func (e codedErr) Code() int     { return e.code }

// The classifier decides what is retried and never surfaced as a failure.
func TestRetryable(t *testing.T) {
	t.Parallel()
	yes := []error{
		&mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"},
		&mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded; try restarting transaction"},
		&mysql.MySQLError{Number: 1020, Message: "Record has changed since last read"},
		fmt.Errorf("records: claim: insert dedup rows: %w", &mysql.MySQLError{Number: 1213}),
		codedErr{5},   // SQLITE_BUSY
		codedErr{517}, // SQLITE_BUSY_SNAPSHOT
		codedErr{6},   // SQLITE_LOCKED
		errConflict,
		errAmbiguousClaim,
		errRedoCarefully,
		fmt.Errorf("wrapped: %w", errConflict),
	}
	no := []error{
		nil,
		&mysql.MySQLError{Number: 1062, Message: "Duplicate entry"},
		&mysql.MySQLError{Number: 1146, Message: "Table doesn't exist"},
		codedErr{19}, // SQLITE_CONSTRAINT
		codedErr{1},
		driver.ErrBadConn, // a COMMIT lost this way may have committed
		mysql.ErrInvalidConn,
		context.Canceled,
		io.EOF,
		&FencedError{},
		errors.New("deadlock"), // only real server errors count
	}
	for _, err := range yes {
		require.True(t, retryable(err), "%v", err)
	}
	for _, err := range no {
		require.False(t, retryable(err), "%v", err)
	}
}

func drain(t *testing.T, src Source, max int) []string {
	t.Helper()
	var out []string
	for {
		ks, err := src.Next(context.Background(), max)
		require.NoError(t, err)
		if len(ks) == 0 {
			return out
		}
		require.LessOrEqual(t, len(ks), max)
		out = append(out, ks...)
	}
}

func TestSources(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"a", "b", "c"}, drain(t, KeysOf([]string{"a", "b", "c"}), 2))
	require.Empty(t, drain(t, KeysOf(nil), 2))
	require.Equal(t, int64(3), KeysOf([]string{"a", "b", "c"}).(Sized).Len())

	require.Equal(t, []string{"5", "6", "7", "8"}, drain(t, IDRangeSource(5, 8), 3))
	require.Equal(t, []string{"-1", "0", "1"}, drain(t, IDRangeSource(-1, 1), 10))
	require.Empty(t, drain(t, IDRangeSource(0, -1), 10), "IDRange's empty part")
	require.Equal(t, []string{"9223372036854775806", "9223372036854775807"},
		drain(t, IDRangeSource(math.MaxInt64-1, math.MaxInt64), 10), "no overflow at the top")
	require.Equal(t, int64(4), IDRangeSource(5, 8).(Sized).Len())
	require.Equal(t, int64(math.MaxInt64), IDRangeSource(math.MinInt64, math.MaxInt64).(Sized).Len())

	calls := 0
	f := SourceFunc(func(ctx context.Context, max int) ([]string, error) {
		calls++
		if calls == 1 {
			return []string{"x"}, io.EOF
		}
		return nil, errors.New("called after EOF")
	})
	ks, err := f.Next(context.Background(), 10)
	require.Equal(t, []string{"x"}, ks)
	require.ErrorIs(t, err, io.EOF)
}

func TestErrorsMessages(t *testing.T) {
	t.Parallel()
	err := error(&FencedError{JobID: 1, RunID: 2, Slot: 3, Token: 4, HolderToken: 5, Holder: "h", Op: "mark"})
	require.ErrorIs(t, err, ErrFenced)
	require.Equal(t, "mark refused: shard lock of job 1 run 2 slot 3 is held by token 5 (h), not by token 4: this attempt was replaced and writes nothing more", err.Error())
	err = &FencedError{JobID: 1, RunID: 2, Slot: 3, Token: 4, Op: "claim"}
	require.Contains(t, err.Error(), "held by nobody (the lock row is gone")
	require.ErrorIs(t, &LockHeldError{}, ErrLockHeld)

	require.NoError(t, Result{Processed: 3}.Err())
	err = Result{Failed: 2, Exhausted: 1, FirstError: errors.New("boom")}.Err()
	require.ErrorIs(t, err, ErrRecordsFailed)
	require.Equal(t, "records failed: 2 records failed in this attempt, 1 records are left failed after the maximum number of attempts; first error: boom", err.Error())

	require.Equal(t, "héllo", truncate("héllo wörld", 5))
	require.Len(t, []rune(errText(errors.New(strings.Repeat("é", 2000)))), 1024)
	require.Equal(t, "bad ? byte", errText(errors.New("bad \xff byte")))
}
