// Package storetest gives tests a fresh, migrated platform database for each
// dialect: a MariaDB database of its own (admin/testenv) and a SQLite file
// in a temp dir. Test packages that use it call testenv.Main from TestMain.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// Dialects are the dialects every store test runs against.
var Dialects = []string{sqlfiles.MySQL, sqlfiles.SQLite}

// Open returns a fresh, migrated store of the dialect, closed at cleanup.
func Open(t testing.TB, dialect string) *store.Store {
	t.Helper()
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "shardjob.db")
	if dialect == sqlfiles.MySQL {
		dsn = testenv.MySQL(t)
	}
	s, err := store.Open(ctx, store.Config{Driver: dialect, DSN: dsn})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = s.Migrate(ctx)
	require.NoError(t, err)
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
