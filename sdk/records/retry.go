package records

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MySQL / MariaDB server errors that abort a statement or a transaction
// because of a conflict with another transaction, not because of what it
// does: running it again later succeeds.
const (
	mysqlLockWaitTimeout = 1205 // ER_LOCK_WAIT_TIMEOUT (statement rolled back)
	mysqlDeadlock        = 1213 // ER_LOCK_DEADLOCK (transaction rolled back)
	mysqlCheckRead       = 1020 // ER_CHECKREAD: "record has changed since last read" (MariaDB innodb_snapshot_isolation)
)

// PostgreSQL SQLSTATEs of the same kind (any driver whose errors have a
// SQLState method: pgx, lib/pq): a deadlock (the transaction was rolled
// back), a serialization failure, a lock not available (lock_timeout).
const (
	pgDeadlock             = "40P01"
	pgSerializationFailure = "40001"
	pgLockNotAvailable     = "55P03"
)

// SQLite primary result codes (the driver may report extended codes: the
// low byte is the primary code).
const (
	sqliteBusy   = 5 // SQLITE_BUSY: another connection writes
	sqliteLocked = 6 // SQLITE_LOCKED: a conflict inside one connection's shared cache
)

// errConflict is returned inside a transaction when a compare-and-set
// matched fewer rows than it read a moment before: another transaction
// changed them. The transaction is rolled back and run again.
var errConflict = errors.New("records: dedup rows changed concurrently")

// retryable reports whether err is a transient conflict between
// transactions (deadlock, lock wait timeout, SQLite busy, a lost
// compare-and-set), after which the whole transaction can simply run again.
// Such errors are retried with backoff and never reported as failures.
//
// A broken connection is not retryable: a COMMIT that failed that way may
// have committed.
func retryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errConflict) {
		return true
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case mysqlDeadlock, mysqlLockWaitTimeout, mysqlCheckRead:
			return true
		}
		return false
	}
	var state interface{ SQLState() string }
	if errors.As(err, &state) {
		switch state.SQLState() {
		case pgDeadlock, pgSerializationFailure, pgLockNotAvailable:
			return true
		}
		return false
	}
	// modernc.org/sqlite's *sqlite.Error, and any driver error with a
	// SQLite result code, without importing a driver here.
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case sqliteBusy, sqliteLocked:
			return true
		}
	}
	return false
}

// reconnectFor bounds how long the shard lock's idempotent operations
// (Acquire, Release) retry when the database cannot be reached: a database
// restarting or failing over for a few seconds must not fail whole queues of
// slots.
const reconnectFor = 15 * time.Second

// connectionError reports whether err says the database could not be
// reached or the connection broke. Only operations that are safe to run
// twice retry such errors (a COMMIT cut off that way may have committed).
func connectionError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op)
}

// idempotently runs f — an operation that may safely run twice — again after
// backoff while it fails with a transient conflict, or with a connection
// error for up to reconnectFor.
func idempotently(ctx context.Context, f func() error) error {
	var firstConnErr time.Time
	for attempt := 1; ; attempt++ {
		err := f()
		switch {
		case err == nil:
			return nil
		case retryable(err):
		case connectionError(err):
			if firstConnErr.IsZero() {
				firstConnErr = time.Now()
			} else if time.Since(firstConnErr) > reconnectFor {
				return err
			}
		default:
			return err
		}
		if berr := backoff(ctx, attempt); berr != nil {
			return errors.Join(berr, err)
		}
	}
}

// backoff waits before retry number attempt (1, 2, …): full jitter over an
// exponential ceiling from 2ms to 500ms. It returns ctx's error if ctx ends
// first.
func backoff(ctx context.Context, attempt int) error {
	ceiling := 2 * time.Millisecond << min(attempt-1, 8)
	ceiling = min(ceiling, 500*time.Millisecond)
	t := time.NewTimer(time.Duration(rand.Int64N(int64(ceiling)) + 1))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// inTx runs f in a transaction and commits, and runs it again (after
// backoff) for as long as it fails with a retryable error and ctx lives.
// onRetry, if not nil, is told about each retried error.
func inTx(ctx context.Context, db *sql.DB, onRetry func(error), f func(tx *sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := runTx(ctx, db, f)
		if err == nil || !retryable(err) {
			return err
		}
		if onRetry != nil {
			onRetry(err)
		}
		if berr := backoff(ctx, attempt); berr != nil {
			return errors.Join(berr, err)
		}
	}
}

func runTx(ctx context.Context, db *sql.DB, f func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return stopped(ctx, err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return stopped(ctx, err)
	}
	return stopped(ctx, tx.Commit())
}

// stopped gives the error of a transaction whose context ended the
// context's cause first: database/sql rolls such a transaction back on its
// own, and the statements and the commit after that fail with
// sql.ErrTxDone, which does not say why.
func stopped(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	if cause := context.Cause(ctx); !errors.Is(err, cause) {
		return fmt.Errorf("%w: %w", cause, err)
	}
	return err
}
