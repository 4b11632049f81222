package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

// The duplicate-key classification reads the drivers' typed errors
// (MySQL/MariaDB error number, SQLite extended result code), never the
// message: a unique key and a primary key count, other constraints and
// other errors do not, and a message that merely reads like one does not.
// (That the inserts by a natural key turn a duplicate into ErrConflict is
// tested with them: TestJobsCRUD, the users and API token tests.)
func TestIsDuplicateReadsTheDriversErrors(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		db := s.DB()
		_, err := db.ExecContext(ctx, `CREATE TABLE dup_probe (id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(32) NOT NULL, UNIQUE (name))`)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `INSERT INTO dup_probe (id, name) VALUES (1, 'a')`)
		require.NoError(t, err)

		_, err = db.ExecContext(ctx, `INSERT INTO dup_probe (id, name) VALUES (2, 'a')`)
		require.Error(t, err)
		require.True(t, store.IsDuplicate(err), "unique key: %v", err)
		require.True(t, store.IsDuplicate(fmt.Errorf("create: %w", err)), "wrapped")

		_, err = db.ExecContext(ctx, `INSERT INTO dup_probe (id, name) VALUES (1, 'b')`)
		require.Error(t, err)
		require.True(t, store.IsDuplicate(err), "primary key: %v", err)

		_, err = db.ExecContext(ctx, `INSERT INTO dup_probe (id, name) VALUES (3, NULL)`)
		require.Error(t, err)
		require.False(t, store.IsDuplicate(err), "NOT NULL is another constraint: %v", err)

		_, err = db.ExecContext(ctx, `INSERT INTO no_such_table (id) VALUES (1)`)
		require.Error(t, err)
		require.False(t, store.IsDuplicate(err), "%v", err)

		require.False(t, store.IsDuplicate(nil))
		require.False(t, store.IsDuplicate(errors.New("UNIQUE constraint failed: dup_probe.name")), "a message is not a driver's error")
		require.False(t, store.IsDuplicate(errors.New("Error 1062 (23000): Duplicate entry 'a' for key 'name'")), "a message is not a driver's error")
	})
}
