// Package storetest gives tests a fresh, migrated platform database for each
// dialect: a MariaDB database and a PostgreSQL database of its own
// (deploy/dev/testenv) and a SQLite file in a temp dir. Test packages that use it call testenv.Main from TestMain.
package storetest

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// Dialects are the dialects every store test runs against.
var Dialects = sqlfiles.Dialects

// Open returns a fresh, migrated store of the dialect, closed at cleanup.
// A MariaDB store is a copy of a database migrated once per test process
// (testenv.MySQLFromTemplate): the migrations run once, not once per test;
// a PostgreSQL store is a database created from a migrated template
// (testenv.PostgresFromTemplate).
func Open(t testing.TB, dialect string) *store.Store {
	t.Helper()
	switch dialect {
	case sqlfiles.MySQL:
		return openDSN(t, dialect, testenv.MySQLFromTemplate(t, "migrated", migrate(dialect)))
	case sqlfiles.Postgres:
		return openDSN(t, dialect, testenv.PostgresFromTemplate(t, "migrated", migrate(dialect)))
	}
	s := OpenEmpty(t, dialect)
	_, err := s.Migrate(context.Background())
	require.NoError(t, err)
	return s
}

// OpenWith is Open with the store's Config edited by edit before it opens
// (a MariaDB store on one connection, to read its session's counters).
func OpenWith(t testing.TB, dialect string, edit func(*store.Config)) *store.Store {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "shardjob.db")
	switch dialect {
	case sqlfiles.MySQL:
		dsn = testenv.MySQLFromTemplate(t, "migrated", migrate(dialect))
	case sqlfiles.Postgres:
		dsn = testenv.PostgresFromTemplate(t, "migrated", migrate(dialect))
	}
	cfg := store.Config{Driver: dialect, DSN: dsn}
	edit(&cfg)
	s, err := store.Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	if dialect == sqlfiles.SQLite {
		_, err = s.Migrate(context.Background())
		require.NoError(t, err)
	}
	return s
}

// migrate returns the filler of a template database of the dialect:
// every migration applied.
func migrate(dialect string) func(dsn string) error {
	return func(dsn string) error {
		ctx := context.Background()
		s, err := store.Open(ctx, store.Config{Driver: dialect, DSN: dsn})
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.Migrate(ctx)
		return err
	}
}

// OpenEmpty returns a store of the dialect on a fresh, empty database (no
// migration applied), closed at cleanup.
func OpenEmpty(t testing.TB, dialect string) *store.Store {
	t.Helper()
	return openDSN(t, dialect, EmptyDSN(t, dialect))
}

// EmptyDSN returns the DSN of a fresh, empty database of the dialect,
// dropped (or removed) when the test ends: for tests that open several
// stores on one database.
func EmptyDSN(t testing.TB, dialect string) string {
	t.Helper()
	switch dialect {
	case sqlfiles.MySQL:
		return testenv.MySQL(t)
	case sqlfiles.Postgres:
		return testenv.Postgres(t)
	}
	return filepath.Join(t.TempDir(), "shardjob.db")
}

// openDSN opens a store of the dialect on dsn, closed at cleanup.
func openDSN(t testing.TB, dialect, dsn string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Config{Driver: dialect, DSN: dsn})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// EachDialect runs fn in a parallel subtest per dialect, each with its own
// fresh store.
func EachDialect(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	for _, d := range Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			fn(t, Open(t, d))
		})
	}
}

// SteppedDialects are the dialects whose every migration is a step of its
// own, so that a test can stop at, or go down to, any version: MySQL and
// SQLite. PostgreSQL starts at a baseline (version 46), so the tests of what
// an older migration does to the rows it finds do not run on it.
var SteppedDialects = []string{sqlfiles.MySQL, sqlfiles.SQLite}

// Stepped reports whether dialect is one of SteppedDialects.
func Stepped(dialect string) bool { return dialect != sqlfiles.Postgres }

// InsertID runs the insert q (with "?" placeholders) on the store's
// database and returns the id of its row: on PostgreSQL, which has no
// LastInsertId, the statement gets "RETURNING id".
func InsertID(t testing.TB, s *store.Store, q string, args ...any) int64 {
	t.Helper()
	if s.Dialect() == sqlfiles.Postgres {
		q += " RETURNING id"
	}
	res, err := s.DB().Exec(q, args...)
	require.NoError(t, err, q)
	id, err := res.LastInsertId()
	require.NoError(t, err)
	return id
}

// FillJobPartitions gives every job of the database behind db that has
// no partition its partition (partition.Of with the default count), in one
// statement: for tests and benchmarks that load jobs in bulk with their own
// SQL, so that the admins need not fill them before firing. dialect is the
// store driver ("mysql", "postgres", "sqlite"); db takes "?" placeholders.
func FillJobPartitions(tb testing.TB, db *sql.DB, dialect string) {
	tb.Helper()
	queries, err := store.Queries(dialect)
	require.NoError(tb, err)
	_, err = db.ExecContext(context.Background(), queries["JobsPartitionFillAll"], partition.DefaultCount)
	require.NoError(tb, err, "fill the partition of the jobs loaded")
}
