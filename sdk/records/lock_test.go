package records

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// expireLock moves a lock's lease into the past, as the database clock
// would after LockLease without renewal.
func (e *env) expireLock(t *testing.T, job, run int64, slot int) {
	t.Helper()
	_, err := e.db.Exec("UPDATE shard_lock SET lease_until = lease_until - 3600000 WHERE job_id = ? AND run_id = ? AND slot = ?", job, run, slot)
	require.NoError(t, err)
}

func TestLockFencing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.processor(t, Config{Mode: Transactional, Holder: "executor-a"})
		b := e.processor(t, Config{Mode: Transactional, Holder: "executor-b"})

		l5, err := a.Acquire(ctx, newTask(1, 10, 0, 5))
		require.NoError(t, err)
		require.Equal(t, int64(5), l5.Token())

		// A newer token takes over at once, although token 5's lease is live.
		l6, err := b.Acquire(ctx, newTask(1, 10, 0, 6))
		require.NoError(t, err)

		// The older holder is fenced off everywhere.
		var fe *FencedError
		_, err = a.Acquire(ctx, newTask(1, 10, 0, 5))
		require.ErrorAs(t, err, &fe)
		require.ErrorIs(t, err, ErrFenced)
		require.Equal(t, FencedError{JobID: 1, RunID: 10, Slot: 0, Token: 5, HolderToken: 6, Holder: "executor-b", Op: "acquire"}, *fe)
		require.ErrorIs(t, l5.Renew(ctx), ErrFenced)
		require.ErrorIs(t, l5.Release(ctx), ErrFenced)
		tx, err := e.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		require.ErrorIs(t, l5.Check(ctx, tx), ErrFenced)
		require.NoError(t, tx.Rollback())

		// The new holder renews, checks and releases.
		require.NoError(t, l6.Renew(ctx))
		require.NoError(t, l6.Renew(ctx)) // twice within a millisecond is fine too
		tx, err = e.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, l6.Check(ctx, tx))
		require.NoError(t, tx.Commit())
		require.NoError(t, l6.Release(ctx))
		require.NoError(t, l6.Release(ctx), "releasing twice")

		// Older tokens stay fenced after the release and after expiry:
		// the row keeps the token.
		e.expireLock(t, 1, 10, 0)
		_, err = a.Acquire(ctx, newTask(1, 10, 0, 5))
		require.ErrorIs(t, err, ErrFenced)
		require.Equal(t, 1, e.count(t, "SELECT COUNT(*) FROM shard_lock WHERE job_id = 1 AND run_id = 10 AND slot = 0 AND token = 6 AND released_at IS NOT NULL"))

		// A released lock is taken again by the same token (a second
		// Process call of the attempt) and by a newer one.
		_, err = b.Acquire(ctx, newTask(1, 10, 0, 6))
		require.NoError(t, err)
		_, err = a.Acquire(ctx, newTask(1, 10, 0, 7))
		require.NoError(t, err)

		// Other slots, other runs: other locks.
		_, err = a.Acquire(ctx, newTask(1, 10, 1, 3))
		require.NoError(t, err, "slot 1 has its own lock")
		_, err = a.Acquire(ctx, newTask(1, 11, 0, 4))
		require.NoError(t, err, "an overlapping run is not fenced by run 10's token 7")
		_, err = a.Acquire(ctx, newTask(2, 10, 0, 1))
		require.NoError(t, err, "another job")
	})
}

func TestLockSameTokenOtherHolder(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.processor(t, Config{Mode: Transactional, Holder: "executor-a", LockLease: time.Minute})
		b := e.processor(t, Config{Mode: Transactional, Holder: "executor-b"})
		la, err := a.Acquire(ctx, newTask(1, 10, 0, 5))
		require.NoError(t, err)
		_, err = a.Acquire(ctx, newTask(1, 10, 0, 5))
		require.NoError(t, err, "re-entrant for the same holder")

		// Same token, another instance (the assignment was delivered twice):
		// refused while the lease lives.
		_, err = b.Acquire(ctx, newTask(1, 10, 0, 5))
		var he *LockHeldError
		require.ErrorAs(t, err, &he)
		require.ErrorIs(t, err, ErrLockHeld)
		require.Equal(t, "executor-a", he.Holder)
		require.Greater(t, he.ExpiresIn, 50*time.Second)

		// After expiry (database clock) the same token may take it, and the
		// first instance is then fenced although its token is the same.
		e.expireLock(t, 1, 10, 0)
		lb, err := b.Acquire(ctx, newTask(1, 10, 0, 5))
		require.NoError(t, err)
		require.ErrorIs(t, la.Renew(ctx), ErrFenced)
		tx, err := e.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		require.ErrorIs(t, la.Check(ctx, tx), ErrFenced)
		require.NoError(t, tx.Rollback())
		require.NoError(t, lb.Release(ctx))
	})
}

func TestLockRowGoneIsFenced(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.processor(t, Config{Mode: Transactional})
		l, err := p.Acquire(ctx, newTask(1, 10, 0, 5))
		require.NoError(t, err)
		_, err = e.db.Exec("DELETE FROM shard_lock")
		require.NoError(t, err)
		tx, err := e.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		err = l.Check(ctx, tx)
		require.ErrorIs(t, err, ErrFenced)
		require.ErrorContains(t, err, "the lock row is gone")
		require.NoError(t, tx.Rollback())
		require.ErrorIs(t, l.Renew(ctx), ErrFenced)
	})
}

func TestPurgeLocks(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		p := e.processor(t, Config{Mode: Transactional})
		// 2500 locks that ended two days ago (more than two purge batches),
		// one released an hour ago, one live.
		old := time.Now().Add(-48 * time.Hour).UnixMilli()
		for chunk := range 5 {
			var rows []string
			for i := chunk * 500; i < (chunk+1)*500; i++ {
				rows = append(rows, fmt.Sprintf("(1, %d, 0, %d, 'h', %d, 0, NULL)", i, i+1, old))
			}
			_, err := e.db.Exec("INSERT INTO shard_lock (job_id, run_id, slot, token, holder, lease_until, acquired_at, released_at) VALUES " + strings.Join(rows, ", "))
			require.NoError(t, err)
		}
		recent, err := p.Acquire(ctx, newTask(2, 1, 0, 1))
		require.NoError(t, err)
		require.NoError(t, recent.Release(ctx))
		e.expireLock(t, 2, 1, 0) // lease ended an hour ago
		_, err = p.Acquire(ctx, newTask(3, 1, 0, 1))
		require.NoError(t, err)

		_, err = p.PurgeLocks(ctx, 0)
		require.Error(t, err)
		n, err := p.PurgeLocks(ctx, 24*time.Hour)
		require.NoError(t, err)
		require.Equal(t, int64(2500), n)
		require.Equal(t, 2, e.count(t, "SELECT COUNT(*) FROM shard_lock"))
		n, err = p.PurgeLocks(ctx, 30*time.Minute)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "the lock whose lease ended an hour ago")
		require.Equal(t, 1, e.count(t, "SELECT COUNT(*) FROM shard_lock WHERE job_id = 3"), "the live lock stays")
	})
}

// On MySQL a newer token's takeover waits for the transactions that passed
// the fencing check (they hold the lock row's shared lock), so each of them
// commits before the takeover, or sees it.
func TestLockTakeoverWaitsForCheckedTransactions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, DialectMySQL)
	ctx := context.Background()
	a := e.processor(t, Config{Mode: Transactional, Holder: "a"})
	b := e.processor(t, Config{Mode: Transactional, Holder: "b"})
	l5, err := a.Acquire(ctx, newTask(1, 10, 0, 5))
	require.NoError(t, err)
	tx, err := e.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, l5.Check(ctx, tx))

	acquired := make(chan error, 1)
	go func() {
		_, err := b.Acquire(ctx, newTask(1, 10, 0, 6))
		acquired <- err
	}()
	waitLockWait(t, e.db)
	_, err = tx.Exec("INSERT INTO effect (k, token) VALUES ('x', 5)")
	require.NoError(t, err, "token 5's checked transaction still writes")
	require.NoError(t, tx.Commit())
	require.NoError(t, recv(t, acquired, "the takeover"))

	tx, err = e.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	require.ErrorIs(t, l5.Check(ctx, tx), ErrFenced, "the next transaction sees the takeover")
	require.NoError(t, tx.Rollback())
	require.Equal(t, 1, e.count(t, "SELECT COUNT(*) FROM effect"))
}

// waitLockWait waits until a transaction on db's database waits for a
// lock. It polls (testenv.WaitFor): the server gives no signal.
func waitLockWait(t *testing.T, db *sql.DB) {
	t.Helper()
	testenv.WaitFor(t, waitTimeout, func() (bool, error) {
		var n int
		err := db.QueryRow("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'" +
			" AND trx_mysql_thread_id IN (SELECT id FROM information_schema.PROCESSLIST WHERE db = DATABASE())").Scan(&n)
		return n > 0, err
	}, "a transaction waiting for a lock")
}
