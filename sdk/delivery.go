package sdk

import (
	"context"
	"time"
)

// queue is one kind of report an executor delivers to the admins in
// batches (results, handler logs): what deliveryLoop needs to know of it.
type queue struct {
	pending  func() int                  // items waiting
	batch    int                         // deliver at once when this many wait
	linger   time.Duration               // else at the latest this long after the first one
	wake     <-chan struct{}             // signalled when items are queued
	retryNow <-chan struct{}             // cuts a backoff short (nil: never)
	deliver  func(context.Context) error // sends until the queue is empty or a batch fails
	// failed is told of each failed delivery before the backoff (logging).
	failed func(attempt int, retryIn time.Duration, err error)
}

// deliveryLoop empties q until ctx ends: at the latest q.linger after the
// first item is queued (sooner when a batch is full), retrying with capped,
// fully jittered exponential backoff (Executor.backoff) until an admin
// acknowledges the items.
func (e *Executor) deliveryLoop(ctx context.Context, q queue) {
	attempt := 0
	for {
		if q.pending() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-q.wake:
				continue
			}
		}
		if attempt == 0 && !q.lingerForBatch(ctx) {
			return
		}
		err := q.deliver(ctx)
		if err == nil {
			attempt = 0
			continue
		}
		if ctx.Err() != nil {
			return
		}
		attempt++
		d := e.backoff(attempt)
		q.failed(attempt, d, err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-q.retryNow:
			t.Stop()
		}
	}
}

// lingerForBatch waits up to q.linger for a batch to fill up. It returns
// false when ctx ends.
func (q queue) lingerForBatch(ctx context.Context) bool {
	if q.pending() >= q.batch {
		return true
	}
	t := time.NewTimer(q.linger)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case <-q.wake:
			if q.pending() >= q.batch {
				return true
			}
		}
	}
}
