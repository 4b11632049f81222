package records

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// outcome is what became of one claimed record in External mode.
type outcome struct {
	c        claimed
	err      error // the handler's error; nil: applied
	giveBack bool  // not applied because the call was stopped: give the record back without spending an attempt
}

// external runs the External mode pipeline:
//
//	claimer ──claimed records──▶ Concurrency workers ──outcomes──▶ marker
//
// The claimer reads a batch from the Source and claims it (one
// transaction: fencing check, INSERT IGNORE, decisions); the records it owns
// go to the workers, which call the handler; the marker writes outcomes in
// batches (one transaction: fencing check, one UPDATE for the done records,
// one for the failed ones) when BatchSize outcomes are ready or
// FlushInterval after the oldest unwritten one. The claimer reads the next
// batch from the Source while the workers process the current one, but
// claims it only when every record of the current one is finished, so that
// a crash leaves as few records claimed and not started (uncertain) as
// possible: at most one batch. The claim of batch N+1 still overlaps the
// mark of batch N, which is what keeps the database busy.
//
// When the call stops early (cancelled, fenced, an error), the workers hand
// back the records they did not start; unless fenced (or crashed), the
// marker writes the outcomes it has and gives the records that were never
// started back (failed, attempt not spent), within finalWriteTimeout.
func (r *run) external(ctx, parent context.Context) {
	conc := r.p.cfg.Concurrency
	work := make(chan claimed, conc)
	outcomes := make(chan outcome, conc)

	var unfinished sync.WaitGroup // the records of the current batch
	var producers sync.WaitGroup
	producers.Go(func() {
		defer close(work)
		r.claimLoop(ctx, outcomes, work, &unfinished)
	})
	for range conc {
		producers.Go(func() {
			for c := range work {
				outcomes <- r.apply(ctx, c)
				unfinished.Done()
			}
		})
	}
	var marker sync.WaitGroup
	marker.Go(func() { r.markLoop(ctx, parent, outcomes) })
	producers.Wait()
	close(outcomes)
	marker.Wait()
}

// apply hands one claimed record to the handler, unless the call stopped.
func (r *run) apply(ctx context.Context, c claimed) outcome {
	if ctx.Err() != nil {
		r.fail(context.Cause(ctx))
		return outcome{c: c, giveBack: true}
	}
	err := r.call(ctx, c, nil)
	if err != nil && ctx.Err() != nil && !errors.Is(err, ErrUncertain) {
		// Stopped while the handler ran, and it says it did not apply the
		// record.
		return outcome{c: c, giveBack: true}
	}
	return outcome{c: c, err: err}
}

// claimLoop reads and claims batches until the Source ends or ctx is done.
// unfinished counts the records of the last batch not finished yet.
func (r *run) claimLoop(ctx context.Context, outcomes chan<- outcome, work chan<- claimed, unfinished *sync.WaitGroup) {
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
		unfinished.Wait() // claim no further ahead than one batch
		if ctx.Err() != nil {
			r.fail(context.Cause(ctx))
			return
		}
		if len(batch) > 0 {
			var res claimResult
			exact := false
			// The claim commits or not whatever the call's cancellation:
			// cut short in its commit, it could commit unseen and leave its
			// records pending (uncertain) though no handler got them. Once
			// it has committed, a stopped call gives them back (below, and
			// apply).
			cctx, cancel := finalWriteContext(ctx)
			err := inTx(cctx, r.p.cfg.DB, r.retried, func(tx *sql.Tx) error {
				now, err := r.check(cctx, tx, "claim")
				if err != nil {
					return err
				}
				res, err = r.claim(cctx, tx, batch, now, statusPending, &exact)
				return err
			})
			cancel()
			if err != nil {
				r.fail(err)
				return
			}
			r.afterClaim(res)
			r.mu.Lock()
			for _, c := range res.todo {
				r.inflight[c.key] = true
			}
			r.mu.Unlock()
			r.progress()
			unfinished.Add(len(res.todo))
			for i, c := range res.todo {
				select {
				case work <- c:
				case <-ctx.Done():
					r.fail(context.Cause(ctx))
					for _, rest := range res.todo[i:] {
						outcomes <- outcome{c: rest, giveBack: true}
						unfinished.Done()
					}
					return
				}
			}
		}
		if end {
			r.sourceDone.Store(true)
			return
		}
	}
}

// markLoop writes outcomes in batches until outcomes is closed.
func (r *run) markLoop(ctx, parent context.Context, outcomes <-chan outcome) {
	var pending []outcome
	var timer *time.Timer
	var tick <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	flush := func() {
		if timer != nil {
			timer.Stop()
			tick = nil
		}
		r.flush(ctx, parent, pending)
		pending = pending[:0]
	}
	for {
		select {
		case o, ok := <-outcomes:
			if !ok {
				flush()
				return
			}
			pending = append(pending, o)
			if len(pending) >= r.p.cfg.BatchSize {
				flush()
			} else if tick == nil {
				if timer == nil {
					timer = time.NewTimer(r.p.cfg.FlushInterval)
				} else {
					timer.Reset(r.p.cfg.FlushInterval)
				}
				tick = timer.C
			}
		case <-tick:
			tick = nil
			flush()
		}
	}
}

// flush writes a batch of outcomes in one transaction, with a deadline of
// its own (finalWriteTimeout) that the call's cancellation does not cut
// short, unless the attempt was fenced or crashed.
func (r *run) flush(ctx, parent context.Context, outs []outcome) {
	if len(outs) == 0 {
		return
	}
	var done, giveBack, giveBackUncertain []string
	var failed []failure
	var uncertain []string
	for _, o := range outs {
		switch {
		case o.giveBack && o.c.uncertain:
			giveBackUncertain = append(giveBackUncertain, o.c.key)
		case o.giveBack:
			giveBack = append(giveBack, o.c.key)
		case o.err == nil:
			done = append(done, o.c.key)
		case errors.Is(o.err, ErrUncertain):
			uncertain = append(uncertain, o.c.key)
		default:
			failed = append(failed, failure{o.c.key, o.err})
		}
	}
	defer func() {
		r.mu.Lock()
		for _, o := range outs {
			delete(r.inflight, o.c.key)
		}
		r.mu.Unlock()
		r.progress()
	}()
	if r.stopWrites.Load() {
		return // fenced or crashed: the records stay pending under this token
	}
	if h := r.p.hooks; h != nil && h.beforeMark != nil {
		keys := make([]string, 0, len(outs))
		for _, o := range outs {
			keys = append(keys, o.c.key)
		}
		if err := h.beforeMark(keys); err != nil {
			r.stopWrites.Store(true)
			r.fail(err)
			return
		}
	}
	// The outcomes of records already handed to the handler are always
	// written, with a deadline of their own: a cancellation arriving during
	// this short transaction must not leave applied records pending
	// (uncertain) when the attempt was merely stopped.
	wctx, cancel := finalWriteContext(parent)
	defer cancel()
	var lost int64
	err := inTx(wctx, r.p.cfg.DB, r.retried, func(tx *sql.Tx) error {
		lost = 0
		now, err := r.check(wctx, tx, "mark")
		if err != nil {
			return err
		}
		n, err := r.markDone(wctx, tx, done, now)
		if err != nil {
			return err
		}
		lost += int64(len(done)) - n
		if n, err = r.markFailed(wctx, tx, failed, now); err != nil {
			return err
		}
		lost += int64(len(failed)) - n
		if err := r.giveBack(wctx, tx, qDedupUnclaim, giveBack, now); err != nil {
			return err
		}
		if err := r.giveBack(wctx, tx, qDedupUnclaimUncertain, giveBackUncertain, now); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		// The outcomes are not recorded: the records stay pending (uncertain
		// for the next attempt).
		if !errors.Is(err, ErrFenced) {
			err = fmt.Errorf("records: record outcomes: %w", err)
		}
		r.fail(err)
		return
	}
	r.processed.Add(int64(len(done)))
	r.task.AddProcessed(int64(len(done)))
	r.recordFailures(failed)
	r.leaveUncertain(uncertain, "the handler returned ErrUncertain")
	if lost > 0 {
		// Another attempt took these rows over while this one held its lock:
		// possible only when this lock's lease had expired (renewals failed)
		// and an overlapping run judged the records abandoned.
		r.uncertain.Add(lost)
		r.task.AddUncertain(lost)
		r.log.Error("records: records were taken over by another attempt before their outcome was recorded; they may be applied twice",
			"alarm", true, "count", lost, "scope", r.scope)
	}
}

// markDone marks keys done, and returns how many rows it changed.
func (r *run) markDone(ctx context.Context, tx *sql.Tx, keys []string, now int64) (int64, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 4+len(keys))
	args = append(args, now, r.task.JobID, r.scopeArg, r.task.Token)
	for _, k := range keys {
		args = append(args, r.keyArg(k))
	}
	n, err := execN(ctx, tx, r.p.q.expand(qDedupDone, len(keys)), args...)
	if err != nil {
		return 0, fmt.Errorf("records: mark done: %w", err)
	}
	return n, nil
}

// markFailed marks records failed with their errors, in one statement.
func (r *run) markFailed(ctx context.Context, tx *sql.Tx, fs []failure, now int64) (int64, error) {
	if len(fs) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 3*len(fs)+4)
	for _, f := range fs {
		args = append(args, r.keyArg(f.key), errText(f.err))
	}
	args = append(args, now, r.task.JobID, r.scopeArg, r.task.Token)
	for _, f := range fs {
		args = append(args, r.keyArg(f.key))
	}
	q := r.p.q.expand(qDedupFail, len(fs))
	n, err := execN(ctx, tx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("records: mark failed: %w", err)
	}
	return n, nil
}

// giveBack returns claimed records that were not applied, without spending
// an attempt: with query DedupUnclaim they become failed (retried by the
// next attempt whatever its policy); with DedupUnclaimUncertain, for records
// taken over as uncertain, they stay pending (uncertain for the next attempt
// too, as they were for this one).
func (r *run) giveBack(ctx context.Context, tx *sql.Tx, query query, keys []string, now int64) error {
	if len(keys) == 0 {
		return nil
	}
	args := make([]any, 0, 4+len(keys))
	args = append(args, now, r.task.JobID, r.scopeArg, r.task.Token)
	for _, k := range keys {
		args = append(args, r.keyArg(k))
	}
	if _, err := execN(ctx, tx, r.p.q.expand(query, len(keys)), args...); err != nil {
		return fmt.Errorf("records: give back records not applied: %w", err)
	}
	return nil
}
