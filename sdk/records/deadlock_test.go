package records

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// retrySignal returns a hook that sends every retried error to the channel.
func retrySignal() (*testHooks, <-chan error) {
	c := make(chan error, 1024)
	return &testHooks{retried: func(err error) {
		select {
		case c <- err:
		default:
		}
	}}, c
}

func mysqlNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// blocker is a transaction of another client that inserted the dedup row of
// key and holds its lock.
func blocker(t *testing.T, e *env, key string, heavy bool) *sql.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := e.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	if heavy {
		// Many changed rows make this transaction the heavier one: InnoDB
		// picks the lighter transaction of a deadlock as its victim.
		for i := range 200 {
			_, err := tx.Exec("INSERT INTO effect (k, token) VALUES (?, 0)", fmt.Sprint(i))
			require.NoError(t, err)
		}
	}
	_, err = tx.Exec("INSERT INTO dedup_record (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at) VALUES (7, 'run:1', ?, 'done', 1, 99, 1, '', 0, 0)", key)
	require.NoError(t, err)
	return tx
}

// A real deadlock on the unique key (1213) is retried, not reported: the
// claim of [a b c] inserts a, then waits for b, held by another client,
// which then inserts a.
func TestDeadlockOnClaimIsRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, DialectMySQL)
	hooks, retried := retrySignal()
	p := e.processor(t, Config{Mode: External, Uncertain: Skip})
	p.hooks = hooks
	other := blocker(t, e, "b", true)

	type out struct {
		res Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := p.Process(context.Background(), newTask(7, 1, 0, 1), KeysOf([]string{"a", "b", "c"}), func(context.Context, Record) error { return nil })
		done <- out{res, err}
	}()
	waitLockWait(t, e.db) // the claim holds a and waits for b
	_, err := other.Exec("INSERT INTO dedup_record (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at) VALUES (7, 'run:1', 'a', 'done', 1, 99, 1, '', 0, 0)")
	require.NoError(t, err, "the claim was the deadlock's victim")
	require.Equal(t, uint16(1213), mysqlNumber(recv(t, retried, "the claim retried")))
	require.NoError(t, other.Rollback())

	o := recv(t, done, "Process")
	require.NoError(t, o.err)
	require.Equal(t, int64(3), o.res.Processed)
	require.GreaterOrEqual(t, o.res.Retries, int64(1))
	require.Equal(t, map[string]int{"done": 3}, e.statuses(t, 7, "run:1"))
}

// A lock wait timeout (1205) is retried until the lock is free.
func TestLockWaitTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, DialectMySQL, "innodb_lock_wait_timeout", "1")
	hooks, retried := retrySignal()
	p := e.processor(t, Config{Mode: Transactional})
	p.hooks = hooks
	other := blocker(t, e, "b", false)
	done := make(chan error, 1)
	go func() {
		res, err := p.Process(context.Background(), newTask(7, 1, 0, 1), KeysOf([]string{"a", "b", "c"}), insertEffect(1))
		if err == nil && res.Processed != 3 {
			err = fmt.Errorf("processed %d records, want 3", res.Processed)
		}
		done <- err
	}()
	require.Equal(t, uint16(1205), mysqlNumber(recv(t, retried, "the claim timed out and retried")))
	require.NoError(t, other.Rollback())
	require.NoError(t, recv(t, done, "Process"))
	require.Equal(t, 3, e.count(t, "SELECT COUNT(*) FROM effect"))
}

// Processors of overlapping runs share a scope and claim overlapping keys
// in different orders and batch cuts, concurrently, in both modes: whatever
// deadlocks and conflicts arise are retried, and every record is done
// exactly once (Transactional) or at least once with every record done
// (External).
func TestConcurrentProcessorsOverlappingKeys(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, e *env) {
				const n, procs = 600, 4
				all := keys(n)
				var wg sync.WaitGroup
				results := make([]Result, procs)
				errs := make([]error, procs)
				for i := range procs {
					p := e.processor(t, Config{Mode: mode, Uncertain: Retry, Scope: ScopeJob, BatchSize: 17 + 13*i, Concurrency: 3})
					src := append([]string(nil), all...)
					rand.New(rand.NewPCG(uint64(i), 7)).Shuffle(len(src), func(a, b int) { src[a], src[b] = src[b], src[a] })
					wg.Go(func() {
						results[i], errs[i] = p.Process(context.Background(), newTask(7, int64(100+i), 0, int64(1+i)), KeysOf(src), handlerFor(e, mode, int64(i), nil))
					})
				}
				wg.Wait()
				for i := range procs {
					require.NoError(t, errs[i], "processor %d", i)
				}
				// A record may be skipped as "pending under another live
				// attempt" by every processor but the one applying it.
				var processed int64
				var retries int64
				for _, r := range results {
					processed += r.Processed
					retries += r.Retries
					require.Zero(t, r.Failed)
				}
				require.Equal(t, int64(n), processed, "every record processed by exactly one processor")
				require.Equal(t, map[string]int{"done": n}, e.statuses(t, 7, "job"))
				eff := e.effects(t)
				require.Len(t, eff, n)
				for k, c := range eff {
					require.Equal(t, 1, c, k)
				}
				t.Logf("%s/%s: %d transactions retried", mode, e.dialect, retries)
			})
		})
	}
}
