package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"

	sqlfiles "github.com/shardjob/shardjob/sql"
)

// Tx is one transaction on the platform database, for the packages that
// decide what to write in it (admin/runstate settles runs, the scheduler
// claims due jobs): its methods are typed data access, and the *sqlx.Tx
// stays inside the store. A Tx is valid only during the function given to
// Store.Tx.
type Tx struct {
	s  *Store
	tx *sqlx.Tx
}

// Tx runs fn in a transaction, committing when fn returns nil. On MySQL
// the transaction is READ COMMITTED (no gap locks: concurrent claimers with
// SKIP LOCKED do not deadlock on index gaps), and a deadlock or lock-wait
// timeout runs fn again (see retry), so fn must be restartable: it starts
// from scratch each call and keeps no state of an earlier call.
func (s *Store) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error { return fn(&Tx{s: s, tx: tx}) })
}

// Now reads the database clock (Unix ms) inside the transaction.
func (t *Tx) Now(ctx context.Context) (int64, error) { return t.s.dbNow(ctx, t.tx) }

// The batch API of packages that run their own named queries on the
// platform database (admin/retention, whose queries are in
// sql/queries_retention.sql and whose names are typed in that package):
// q is the text of one of those queries for this store's dialect, as
// Queries returns it. The store runs them; the *sqlx types stay here.

// Scan runs the read-only query q without locks and calls each for every
// row, with the row's Scan.
func (s *Store) Scan(ctx context.Context, q string, args []any, each func(scan func(dest ...any) error) error) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Batch runs fn in one transaction (READ COMMITTED on MySQL: the locks are
// on the rows written only), committing when fn returns nil. Unlike Tx it
// does not run fn again after a deadlock: the caller's next pass does.
func (s *Store) Batch(ctx context.Context, fn func(tx *Tx) error) error {
	var opts *sql.TxOptions
	if s.dialect == sqlfiles.MySQL {
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	tx, err := s.db.BeginTxx(ctx, opts)
	if err != nil {
		return err
	}
	if err := fn(&Tx{s: s, tx: tx}); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// SelectIDs runs the query q, whose "IN (?)" lists take slices in args
// (expanded by sqlx.In), and returns the first column of each row.
func (t *Tx) SelectIDs(ctx context.Context, q string, args ...any) ([]int64, error) {
	q, args, err := sqlx.In(q, args...)
	if err != nil {
		return nil, err
	}
	var out []int64
	if err := t.tx.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, err
	}
	return out, nil
}

// ExecIn runs the statement q, whose "IN (?)" lists take slices in args,
// and returns how many rows it changed.
func (t *Tx) ExecIn(ctx context.Context, q string, args ...any) (int64, error) {
	q, args, err := sqlx.In(q, args...)
	if err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}
