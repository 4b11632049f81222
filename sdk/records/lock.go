package records

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/sdk"
)

// slotID names one shard lock: one slot of one run of one job.
type slotID struct {
	job, run int64
	slot     int
}

// Lock is a shard lock held by one attempt (token) of one slot. Process
// takes, renews and releases its own; Acquire gives one to handlers that
// want to fence writes of their own (Check inside their transactions).
//
// A Lock is safe for concurrent use.
type Lock struct {
	p      *Processor
	id     slotID
	token  int64
	holder string
}

// Token returns the fencing token the lock was taken with.
func (l *Lock) Token() int64 { return l.token }

// Acquire takes the shard lock of task's job, run and slot with task.Token,
// in the database:
//
//   - no lock yet: taken;
//   - held by an older token: taken over at once, whatever its lease (the
//     older attempt's next Check, Renew or dedup write fails with ErrFenced);
//   - held by a newer token: refused with a *FencedError, for as long as the
//     row exists (Release marks it released but keeps the token);
//   - held by the same token: taken again by the same holder (re-entrant),
//     by another holder only when the lease has expired or was released
//     (database clock), else *LockHeldError.
//
// Runs of the same job (different RunID) have different locks and do not
// fence each other. Deadlocks between concurrent acquirers are retried.
func (p *Processor) Acquire(ctx context.Context, task *sdk.Task) (*Lock, error) {
	if err := checkTask(task); err != nil {
		return nil, err
	}
	l := &Lock{p: p, id: slotID{task.JobID, task.RunID, task.Slot}, token: task.Token, holder: p.cfg.Holder}
	if err := l.acquire(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Lock) acquire(ctx context.Context) error {
	q, id := l.p.q, l.id
	leaseMs := l.p.cfg.LockLease.Milliseconds()
	// Taking the lock again with the same token is a re-entry, so the whole
	// transaction may run twice: retry a database that is briefly away.
	return idempotently(ctx, func() error {
		return runTx(ctx, l.p.cfg.DB, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, q.get(qLockInsert), id.job, id.run, id.slot, l.token, l.holder, leaseMs)
			if err != nil {
				return fmt.Errorf("records: acquire shard lock: %w", err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				return nil // first holder
			}
			cur, err := l.read(ctx, tx)
			if err != nil {
				return err
			}
			switch {
			case cur.token > l.token:
				return l.fenced("acquire", cur.token, cur.holder)
			case cur.token < l.token, cur.holder == l.holder, cur.released, cur.leaseUntil <= cur.now:
				// newer token, re-entry, or an expired/released lease of the same token
			default:
				return &LockHeldError{JobID: id.job, RunID: id.run, Slot: id.slot, Token: l.token,
					Holder: cur.holder, ExpiresIn: time.Duration(cur.leaseUntil-cur.now) * time.Millisecond}
			}
			if _, err := tx.ExecContext(ctx, q.get(qLockTake), l.token, l.holder, leaseMs, id.job, id.run, id.slot); err != nil {
				return fmt.Errorf("records: take over shard lock: %w", err)
			}
			return nil
		})
	})
}

type lockRow struct {
	token      int64
	holder     string
	leaseUntil int64
	released   bool
	now        int64
}

// read returns the lock row (locked FOR UPDATE on MySQL when inside a
// transaction), or a *FencedError when there is none.
func (l *Lock) read(ctx context.Context, qr interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (lockRow, error) {
	var r lockRow
	var released sql.NullInt64
	err := qr.QueryRowContext(ctx, l.p.q.get(qLockRead), l.id.job, l.id.run, l.id.slot).
		Scan(&r.token, &r.holder, &r.leaseUntil, &released, &r.now)
	if errors.Is(err, sql.ErrNoRows) {
		return r, l.fenced("read", 0, "")
	}
	if err != nil {
		return r, fmt.Errorf("records: read shard lock: %w", err)
	}
	r.released = released.Valid
	return r, nil
}

func (l *Lock) fenced(op string, holderToken int64, holder string) *FencedError {
	return &FencedError{JobID: l.id.job, RunID: l.id.run, Slot: l.id.slot, Token: l.token,
		HolderToken: holderToken, Holder: holder, Op: op}
}

// Check verifies, inside tx, that the lock still belongs to this token and
// holder, and returns a *FencedError if not. Call it first in every
// transaction whose writes must be fenced: on MySQL it takes a shared lock
// on the lock row (a takeover waits until tx ends, so tx either commits
// before the takeover or sees it); on SQLite it takes the write lock.
func (l *Lock) Check(ctx context.Context, tx *sql.Tx) error {
	_, err := l.check(ctx, tx, "check")
	return err
}

// check is Check that also returns the database clock (Unix ms).
func (l *Lock) check(ctx context.Context, tx *sql.Tx, op string) (now int64, err error) {
	var token int64
	var holder string
	err = tx.QueryRowContext(ctx, l.p.q.get(qLockCheck), l.id.job, l.id.run, l.id.slot).Scan(&token, &holder, &now)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, l.fenced(op, 0, "")
	}
	if err != nil {
		return 0, fmt.Errorf("records: check shard lock: %w", err)
	}
	if token != l.token || holder != l.holder {
		return 0, l.fenced(op, token, holder)
	}
	return now, nil
}

// Renew extends the lease to LockLease from now (database clock). It
// returns a *FencedError when the lock was taken over or released.
func (l *Lock) Renew(ctx context.Context) error {
	id := l.id
	res, err := l.p.cfg.DB.ExecContext(ctx, l.p.q.get(qLockRenew), l.p.cfg.LockLease.Milliseconds(),
		id.job, id.run, id.slot, l.token, l.holder)
	if err != nil {
		return fmt.Errorf("records: renew shard lock: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	// 0 rows: lost, released, or (MySQL without clientFoundRows) renewed
	// twice within one millisecond.
	cur, err := l.read(ctx, l.p.cfg.DB)
	if err != nil {
		return err
	}
	if cur.token != l.token || cur.holder != l.holder || cur.released {
		return l.fenced("renew", cur.token, cur.holder)
	}
	return nil
}

// Release ends the lease. The row stays (with its token, so that older
// tokens remain fenced off) until PurgeLocks deletes it. Releasing a lock
// that was taken over returns a *FencedError; releasing twice is not an
// error.
func (l *Lock) Release(ctx context.Context) error {
	id := l.id
	var res sql.Result
	// Releasing twice is harmless: retry deadlocks and a database briefly away.
	err := idempotently(ctx, func() (err error) {
		res, err = l.p.cfg.DB.ExecContext(ctx, l.p.q.get(qLockRelease), id.job, id.run, id.slot, l.token, l.holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("records: release shard lock: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	cur, err := l.read(ctx, l.p.cfg.DB)
	if err != nil {
		return err
	}
	if cur.token != l.token || cur.holder != l.holder {
		return l.fenced("release", cur.token, cur.holder)
	}
	return nil
}

// purgeBatch is the number of lock rows one purge statement deletes.
const purgeBatch = 1000

// PurgeLocks deletes the shard locks whose lease ended more than olderThan
// ago (database clock): released locks, and locks of attempts that died
// without releasing. It deletes in batches of 1000 rows, each its own
// statement, so that it never holds many locks, and returns how many rows
// it deleted. Run it periodically (hourly, say) from one instance; the
// dedup-archive job (records.Archive, slot 0) does it after each pass.
//
// Choose olderThan well above the longest an attempt can live (job timeout)
// plus the longest pause to fence (24h is a good default): a purged lock no
// longer fences its run's old tokens. An older attempt waking up after its
// lock was purged can take the lock again; it then still cannot process a
// record twice in Transactional mode (the record's dedup row is done), but
// it may claim records that nobody finished.
func (p *Processor) PurgeLocks(ctx context.Context, olderThan time.Duration) (int64, error) {
	if olderThan <= 0 {
		return 0, fmt.Errorf("records: PurgeLocks: olderThan is %s: must be positive (24h is a good default)", olderThan)
	}
	return purgeLocks(ctx, p.cfg.DB, p.q, olderThan)
}

// purgeLocks is PurgeLocks on db with the queries q of its dialect.
func purgeLocks(ctx context.Context, db *sql.DB, q queries, olderThan time.Duration) (int64, error) {
	var total int64
	for {
		res, err := db.ExecContext(ctx, q.get(qLockPurge), olderThan.Milliseconds(), purgeBatch)
		if err != nil {
			if retryable(err) {
				if berr := backoff(ctx, 1); berr != nil {
					return total, berr
				}
				continue
			}
			return total, fmt.Errorf("records: purge shard locks: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n < purgeBatch {
			return total, nil
		}
	}
}

// checkTask validates what Process and Acquire need from a task.
func checkTask(t *sdk.Task) error {
	switch {
	case t == nil:
		return errors.New("records: task is nil")
	case t.Token <= 0:
		return fmt.Errorf("records: task token is %d: the fencing token must be positive (take it from the sdk.Task the executor passed to the handler)", t.Token)
	case t.Slot < 0:
		return fmt.Errorf("records: task slot is %d: must be >= 0", t.Slot)
	}
	return nil
}
