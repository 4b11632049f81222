package demo_test

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/executor/demo"
	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/records"
)

// TestMain checks, after the test databases were dropped, that no
// goroutine of the Processors (lease renewal, pipelines) outlived a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }

// ledgerEnv is one test's business database with the demo tables.
type ledgerEnv struct {
	dialect string
	l       *demo.Ledger
	// db runs the test's own statements, written with "?" placeholders:
	// the Ledger's pool on MySQL, a pool of testenv.PostgresQMarkDriver on
	// PostgreSQL (the Ledger's takes $1 only).
	db *sql.DB
}

// eachDialect runs fn in parallel subtests, one per dialect the demo
// handlers support.
func eachDialect(t *testing.T, fn func(t *testing.T, dialect string)) {
	for _, dialect := range []string{records.DialectMySQL, records.DialectPostgres} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			fn(t, dialect)
		})
	}
}

func newLedgerEnv(t *testing.T, dialect string) *ledgerEnv {
	t.Helper()
	dsn := testenv.MySQL(t)
	if dialect == records.DialectPostgres {
		dsn = testenv.Postgres(t)
	}
	db, err := demo.OpenDB(dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() }) // before testenv drops the database
	e := &ledgerEnv{dialect: dialect, db: db}
	if dialect == records.DialectPostgres {
		e.db, err = sql.Open(testenv.PostgresQMarkDriver, dsn)
		require.NoError(t, err)
		t.Cleanup(func() { _ = e.db.Close() })
	}
	e.l, err = demo.NewLedger(db, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, e.l.EnsureSchema(ctx))
	require.NoError(t, e.l.EnsureSchema(ctx), "EnsureSchema is idempotent")
	return e
}

func (e *ledgerEnv) count(t *testing.T, query string, args ...any) int64 {
	t.Helper()
	var n sql.NullInt64
	require.NoError(t, e.db.QueryRow(query, args...).Scan(&n), query)
	return n.Int64
}

// prefixed is SQL of the binary column col prefixed with the literal
// prefix (no quotes in it).
func (e *ledgerEnv) prefixed(prefix, col string) string {
	if e.dialect == records.DialectPostgres {
		return "CAST('" + prefix + "' AS BYTEA) || " + col
	}
	return "CONCAT('" + prefix + "', " + col + ")"
}

// ledgerTask is slot of total of run 7 of job 42, attempt token.
func ledgerTask(slot, total int, token int64, params string, out *testenv.Buffer) *sdk.Task {
	return &sdk.Task{
		JobID: 42, RunID: 7, Slot: slot, SlotCount: total, Params: params, Token: token, Attempt: 1,
		Logger: slog.New(slog.NewTextHandler(out, nil)).With("slot", slot, "token", token),
	}
}

// Every slot of a run books its part of the records once; a later attempt
// of a slot (newer token) skips what is booked, and the replaced attempt
// is fenced off.
func TestLedgerBooksEveryRecordOnce(t *testing.T) {
	t.Parallel()
	eachDialect(t, testLedgerBooksEveryRecordOnce)
}

func testLedgerBooksEveryRecordOnce(t *testing.T, dialect string) {
	e := newLedgerEnv(t, dialect)
	ctx := context.Background()
	const params = "records=100;batch=7;ms_per_record=0;concurrency=2"
	var out testenv.Buffer
	for slot := range 4 {
		require.NoError(t, e.l.Transactional(ctx, ledgerTask(slot, 4, int64(10+slot), params, &out)))
	}
	require.EqualValues(t, 100, e.count(t, "SELECT COUNT(*) FROM ledger WHERE job_id = 42"))
	require.EqualValues(t, 100*101/2, e.count(t, "SELECT SUM(amount) FROM ledger WHERE job_id = 42"), "every id booked once")
	require.EqualValues(t, 100, e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE job_id = 42 AND scope = 'run:7' AND status = 'done'"))
	require.EqualValues(t, 0, e.count(t, `SELECT COUNT(*) FROM ledger l JOIN dedup_record d
		ON d.job_id = l.job_id AND d.scope = 'run:7' AND d.record_key = l.source_key
		WHERE l.token <> d.token OR l.record_key <> `+e.prefixed("42|run:7|", "l.source_key")), "a ledger row is written by the token of its done row, under the idempotency key")
	require.EqualValues(t, 25, e.count(t, "SELECT COUNT(*) FROM ledger WHERE slot = 1 AND token = 11 AND source_key BETWEEN '26' AND '50'"))

	// Slot 1 again, newer token: everything is done already.
	retry := ledgerTask(1, 4, 20, params, &out)
	require.NoError(t, e.l.Transactional(ctx, retry))
	processed, skipped, failed, uncertain := retry.Counts()
	require.Equal(t, [4]int64{0, 25, 0, 0}, [4]int64{processed, skipped, failed, uncertain})
	require.EqualValues(t, 100, e.count(t, "SELECT COUNT(*) FROM ledger"))

	// The replaced attempt wakes up: fenced, writes nothing.
	err := e.l.Transactional(ctx, ledgerTask(1, 4, 11, params, &out))
	require.ErrorIs(t, err, records.ErrFenced)
	require.EqualValues(t, 100, e.count(t, "SELECT COUNT(*) FROM ledger"))
	require.Contains(t, out.String(), "ledger slot done")
	require.Contains(t, out.String(), "ledger slot stopped")

	// Another firing, same job scope: nothing is booked again.
	jobScope := "records=100;batch=50;scope=job"
	first := ledgerTask(0, 1, 30, jobScope, &out)
	require.NoError(t, e.l.Transactional(ctx, first))
	next := ledgerTask(0, 1, 31, jobScope, &out)
	next.RunID = 8
	require.NoError(t, e.l.Transactional(ctx, next))
	processed, skipped, _, _ = next.Counts()
	require.Equal(t, [2]int64{0, 100}, [2]int64{processed, skipped})
	require.EqualValues(t, 100, e.count(t, "SELECT COUNT(*) FROM ledger WHERE record_key LIKE '42|job|%'"))
}

// A record left pending by an attempt that died between its external call
// and its done mark is called again under uncertain=retry (flagged
// uncertain, attempt 2) and left alone, counted and listed, under
// uncertain=skip.
func TestLedgerExternalUncertainPolicies(t *testing.T) {
	t.Parallel()
	eachDialect(t, testLedgerExternalUncertainPolicies)
}

func testLedgerExternalUncertainPolicies(t *testing.T, dialect string) {
	for _, policy := range []string{"retry", "skip"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			e := newLedgerEnv(t, dialect)
			ctx := context.Background()
			params := "records=10;batch=4;uncertain=" + policy

			// Token 1 claimed records 3 and 5 and crashed; it had called
			// the remote system for 3 only. Its rows are what sdk/records
			// leaves behind (status pending, its token).
			for _, k := range []string{"3", "5"} {
				_, err := e.db.Exec(`INSERT INTO dedup_record (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at)
					VALUES (42, 'run:7', ?, 'pending', 1, 1, 7, '', 0, 0)`, []byte(k))
				require.NoError(t, err)
			}
			_, err := e.db.Exec(`INSERT INTO external_calls (idempotency_key, job_id, run_id, slot, token, attempt, uncertain)
				VALUES ('42|run:7|3', 42, 7, 0, 1, 1, FALSE)`)
			require.NoError(t, err)

			var out testenv.Buffer
			task := ledgerTask(0, 1, 2, params, &out)
			require.NoError(t, e.l.External(ctx, task))
			processed, skipped, failed, uncertain := task.Counts()
			calls := func(key string) int64 {
				return e.count(t, "SELECT COUNT(*) FROM external_calls WHERE idempotency_key = ?", []byte("42|run:7|"+key))
			}
			switch policy {
			case "retry":
				require.Equal(t, [4]int64{10, 0, 0, 2}, [4]int64{processed, skipped, failed, uncertain})
				require.EqualValues(t, 11, e.count(t, "SELECT COUNT(*) FROM external_calls"), "at least once: 10 records, 3 called twice")
				require.EqualValues(t, 2, calls("3"))
				require.EqualValues(t, 2, e.count(t, "SELECT COUNT(*) FROM external_calls WHERE token = 2 AND uncertain AND attempt = 2"),
					"the retried records are flagged uncertain, attempt 2")
				require.EqualValues(t, 10, e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE status = 'done'"))
			case "skip":
				require.Equal(t, [4]int64{8, 0, 0, 2}, [4]int64{processed, skipped, failed, uncertain})
				require.EqualValues(t, 9, e.count(t, "SELECT COUNT(*) FROM external_calls"), "at most once: 3 and 5 are not called again")
				require.EqualValues(t, 1, calls("3"))
				require.EqualValues(t, 0, calls("5"))
				require.EqualValues(t, 2, e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE status = 'pending' AND token = 1"))
				require.Contains(t, out.String(), "uncertain_keys=3,5")
			}
			require.EqualValues(t, 0, e.count(t, "SELECT COUNT(*) FROM external_calls WHERE token = 2 AND idempotency_key NOT LIKE '42|run:7|%'"))
		})
	}
}

func TestLedgerParams(t *testing.T) {
	t.Parallel()
	e := newLedgerEnv(t, records.DialectMySQL)
	ctx := context.Background()
	var out testenv.Buffer
	for _, tc := range []struct {
		external bool
		params   string
		want     string
	}{
		{true, "records=10", "uncertain=retry"},
		{true, "records=10;uncertain=maybe", "uncertain=retry"},
		{false, "records=10;uncertain=skip", "only demo.ledger-external"},
		{false, "records=10;batch=5000", "batch=5000"},
		{false, "records=10;concurrency=65", "concurrency=65"},
		{false, "records=-1", "records"},
		{false, "records=10;scope=run:3", "scope"},
	} {
		h := e.l.Transactional
		if tc.external {
			h = e.l.External
		}
		err := h(ctx, ledgerTask(0, 1, 1, tc.params, &out))
		require.ErrorContains(t, err, tc.want, "params %q", tc.params)
	}
	require.EqualValues(t, 0, e.count(t, "SELECT COUNT(*) FROM dedup_record"))

	_, err := demo.NewLedger(nil, nil)
	require.Error(t, err)
	_, err = demo.OpenDB("not a dsn")
	require.Error(t, err)
	_, err = demo.OpenDB("root@tcp(127.0.0.1:1)/")
	require.ErrorContains(t, err, "names no database")
	_, err = demo.OpenDB("postgres://postgres@127.0.0.1:1/")
	require.ErrorContains(t, err, "names no database")
	_, err = demo.OpenDB("postgresql://postgres@127.0.0.1:1/business?connect_timeout=x")
	require.ErrorContains(t, err, "PostgreSQL URL")
	pg, err := sql.Open(testenv.PostgresQMarkDriver, "postgres://postgres@127.0.0.1:1/business")
	require.NoError(t, err)
	t.Cleanup(func() { _ = pg.Close() })
	_, err = demo.NewLedger(pg, nil)
	require.ErrorContains(t, err, "pgx/v5/stdlib", "the ?-numbering test driver is not pgx's stdlib")
}

// A slot stops at once when its context ends, with the records done so far
// committed and the one under way not.
func TestLedgerHonoursCancellation(t *testing.T) {
	t.Parallel()
	eachDialect(t, testLedgerHonoursCancellation)
}

func testLedgerHonoursCancellation(t *testing.T, dialect string) {
	e := newLedgerEnv(t, dialect)
	for _, external := range []bool{false, true} {
		ctx, cancel := context.WithCancelCause(context.Background())
		var out testenv.Buffer
		params := "records=1000;batch=1;ms_per_record=20;scope=cancel"
		h := e.l.Transactional
		if external {
			params += "-ext;uncertain=skip"
			h = e.l.External
		}
		task := ledgerTask(0, 1, 1, params, &out)
		done := make(chan error, 1)
		go func() { done <- h(ctx, task) }()
		testenv.WaitFor(t, 30*time.Second, func() (bool, error) {
			processed, _, _, _ := task.Counts()
			return processed >= 3, nil
		}, "the slot did not start processing")
		stop := errors.New("stop now")
		cancel(stop)
		select {
		case err := <-done:
			// The cause, or context.Canceled when the cancel hit a
			// database call of sdk/records.
			require.True(t, errors.Is(err, stop) || errors.Is(err, context.Canceled), "err = %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("the handler did not return within 10s after its context was cancelled")
		}
		processed, _, _, _ := task.Counts()
		require.Less(t, processed, int64(1000))
		require.True(t, strings.Contains(out.String(), "ledger slot stopped"))
	}
	require.EqualValues(t, 0, e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE status = 'pending'"),
		"a graceful stop leaves nothing pending")
}

// A record already in the ledger is refused by the unique key, whatever
// the dialect's error, and reported as ErrAlreadyBooked.
func TestLedgerRefusesASecondBooking(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dialect string) {
		e := newLedgerEnv(t, dialect)
		_, err := e.db.Exec(`INSERT INTO ledger (record_key, source_key, job_id, run_id, slot, amount, token)
			VALUES (?, ?, 42, 7, 0, 1, 1)`, []byte("42|run:7|1"), []byte("1"))
		require.NoError(t, err)
		var out testenv.Buffer
		err = e.l.Transactional(context.Background(), ledgerTask(0, 1, 2, "records=1", &out))
		// The record fails (the slot's error carries the first record
		// error as text).
		require.ErrorContains(t, err, demo.ErrAlreadyBooked.Error())
		require.EqualValues(t, 1, e.count(t, "SELECT COUNT(*) FROM ledger"))
		require.EqualValues(t, 0, e.count(t, "SELECT COUNT(*) FROM dedup_record WHERE status = 'done'"))
	})
}
