// Package storetest gives tests a fresh, migrated platform database for each
// dialect: a MariaDB database of its own (deploy/dev/testenv) and a SQLite file
// in a temp dir. Test packages that use it call testenv.Main from TestMain.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// Dialects are the dialects every store test runs against.
var Dialects = []string{sqlfiles.MySQL, sqlfiles.SQLite}

// Open returns a fresh, migrated store of the dialect, closed at cleanup.
// A MariaDB store is a copy of a database migrated once per test process
// (testenv.MySQLFromTemplate): the migrations run once, not once per test.
func Open(t testing.TB, dialect string) *store.Store {
	t.Helper()
	if dialect == sqlfiles.MySQL {
		return openDSN(t, dialect, testenv.MySQLFromTemplate(t, "migrated", migrate))
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
	if dialect == sqlfiles.MySQL {
		dsn = testenv.MySQLFromTemplate(t, "migrated", migrate)
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

// migrate fills a template database: every migration applied.
func migrate(dsn string) error {
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{Driver: sqlfiles.MySQL, DSN: dsn})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Migrate(ctx)
	return err
}

// OpenEmpty returns a store of the dialect on a fresh, empty database (no
// migration applied), closed at cleanup.
func OpenEmpty(t testing.TB, dialect string) *store.Store {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "shardjob.db")
	if dialect == sqlfiles.MySQL {
		dsn = testenv.MySQL(t)
	}
	return openDSN(t, dialect, dsn)
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
