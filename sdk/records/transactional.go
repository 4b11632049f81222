package records

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// errRedoCarefully rolls a Transactional batch back after a handler failure,
// to run it again with a savepoint around each record (wraps errConflict so
// that inTx runs it again).
var errRedoCarefully = fmt.Errorf("%w: a record failed; running the batch again with savepoints", errConflict)

// transactional runs the Transactional mode pipeline: a reader hands batches
// of keys to Concurrency workers, each running one batch per transaction
// (see batch).
func (r *run) transactional(ctx context.Context) {
	batches := make(chan []string)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(batches)
		for {
			if ctx.Err() != nil {
				r.fail(context.Cause(ctx))
				return
			}
			keys, end, err := r.next(ctx)
			if err != nil {
				r.fail(err)
				return
			}
			batch, err := r.prepare(keys)
			if err != nil {
				r.fail(err)
				return
			}
			if len(batch) > 0 {
				select {
				case batches <- batch:
				case <-ctx.Done():
					r.fail(context.Cause(ctx))
					return
				}
			}
			if end {
				r.sourceDone.Store(true)
				return
			}
		}
	})
	for range r.p.cfg.Concurrency {
		wg.Go(func() {
			for b := range batches {
				if ctx.Err() != nil {
					r.fail(context.Cause(ctx))
					continue
				}
				if err := r.batch(ctx, b); err != nil {
					r.fail(err)
				}
			}
		})
	}
	wg.Wait()
}

// batch processes one batch of keys in one transaction:
//
//  1. fencing check (Lock.Check);
//  2. claim (new rows are inserted as done: nobody sees them before the
//     commit, which carries the effects with them);
//  3. the handler, for each record, with the transaction;
//  4. mark: taken-over rows done, failed records failed (with their error);
//  5. commit — effects and marks together, or neither.
//
// A batch first runs without savepoints. When a handler fails, the
// transaction is rolled back and run again with a SAVEPOINT before each
// record and ROLLBACK TO SAVEPOINT after a failure, so that the failure
// undoes only its own record's writes. A deadlock or lock wait timeout —
// in the claim or in a handler's statements — rolls the whole batch back
// and runs it again after a backoff: the handler may be called more than
// once for a record, but only the last call's effects commit.
func (r *run) batch(ctx context.Context, keys []string) error {
	exact, careful := false, false
	var res claimResult
	var done []string
	var failed []failure
	err := inTx(ctx, r.p.cfg.DB, r.retried, func(tx *sql.Tx) error {
		done, failed = done[:0], failed[:0]
		now, err := r.check(ctx, tx, "claim")
		if err != nil {
			return err
		}
		if res, err = r.claim(ctx, tx, keys, now, statusDone, &exact); err != nil {
			return err
		}
		var takenDone []string
		for _, c := range res.todo {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
			if careful {
				if _, err := tx.ExecContext(ctx, "SAVEPOINT rec"); err != nil {
					return fmt.Errorf("records: savepoint: %w", err)
				}
			}
			ferr := r.call(ctx, c, tx)
			switch {
			case ferr == nil:
				done = append(done, c.key)
				if !c.inserted {
					takenDone = append(takenDone, c.key)
				}
				if careful {
					if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT rec"); err != nil {
						return fmt.Errorf("records: release savepoint: %w", err)
					}
				}
			case retryable(ferr):
				return ferr // the server rolled the transaction back (deadlock) or may have: all again
			case ctx.Err() != nil:
				return context.Cause(ctx)
			case !careful:
				careful = true
				return errRedoCarefully
			default:
				if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT rec"); err != nil {
					return fmt.Errorf("records: handler of %q failed (%v), and rolling back to its savepoint failed: %w", c.key, ferr, err)
				}
				failed = append(failed, failure{c.key, ferr})
			}
		}
		if n, err := r.markDone(ctx, tx, takenDone, now); err != nil {
			return err
		} else if n != int64(len(takenDone)) {
			return fmt.Errorf("%w: marked %d of %d records done", errConflict, n, len(takenDone))
		}
		if n, err := r.markFailed(ctx, tx, failed, now); err != nil {
			return err
		} else if n != int64(len(failed)) {
			return fmt.Errorf("%w: marked %d of %d records failed", errConflict, n, len(failed))
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.afterClaim(res)
	r.processed.Add(int64(len(done)))
	r.task.AddProcessed(int64(len(done)))
	r.recordFailures(failed)
	r.progress()
	return nil
}
