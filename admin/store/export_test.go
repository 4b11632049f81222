package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// TxOf wraps a transaction begun on DB() (a test that freezes one).
func (s *Store) TxOf(tx *sqlx.Tx) *Tx { return &Tx{s: s, tx: tx} }

// MigrateTo applies the migrations up to version (tests of what one
// migration does to the data an older schema holds).
func (s *Store) MigrateTo(ctx context.Context, version int) (int, error) {
	return s.migrate(ctx, version)
}

// MigrateDown applies the down files of the migrations above version,
// newest first, and forgets them in schema_migrations.
func (s *Store) MigrateDown(ctx context.Context, version int) error {
	migs, err := Migrations(s.dialect)
	if err != nil {
		return err
	}
	current, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	for i := len(migs) - 1; i >= 0; i-- {
		m := migs[i]
		if m.Version > current || m.Version <= version {
			continue
		}
		for _, stmt := range splitStatements(m.Down) {
			if _, err := s.db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %04d_%s down: %w", m.Version, m.Name, err)
			}
		}
		if _, err := s.db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = ?`, m.Version); err != nil {
			return err
		}
	}
	return nil
}

// IsDuplicate exposes the duplicate-key classification to the tests of
// both dialects.
func IsDuplicate(err error) bool { return isDuplicate(err) }

// DeadlinesDueQuery is the text of RunsDeadlineDue for this store's
// dialect (a test reads its plan).
func (s *Store) DeadlinesDueQuery() string { return s.q.get(qRunsDeadlineDue) }

// AsReplica is s as the store of replica id (Config.Replica).
func (s *Store) AsReplica(id string) *Store {
	c := *s
	c.replica = id
	return &c
}

// CopyTableNames are the tables Copy moves.
func CopyTableNames() []string {
	out := make([]string, len(copyTables))
	for i, t := range copyTables {
		out[i] = t.name
	}
	return out
}
