package sdk

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// resultLoop delivers queued results in batches of ResultBatch (see
// deliveryLoop). A heartbeat answered by an admin cuts a backoff short.
func (e *Executor) resultLoop(ctx context.Context) {
	defer e.loops.Done()
	e.deliveryLoop(ctx, queue{
		pending: e.pendingCount, batch: e.cfg.ResultBatch, linger: e.flushInterval,
		wake: e.resWake, retryNow: e.resRetry, deliver: e.flushResults,
		failed: func(attempt int, retryIn time.Duration, err error) {
			level := e.log.Debug
			if attempt == 1 {
				level = e.log.Warn
			}
			level("results not delivered: retrying", "pending", e.pendingCount(), "attempt", attempt, "retry_in", retryIn.Round(time.Millisecond), "err", err)
		},
	})
}

// backoff returns a random delay in [0, min(backoffMax, backoffBase·2^(attempt-1))]
// ("full jitter").
func (e *Executor) backoff(attempt int) time.Duration {
	ceiling := e.backoffMax
	if attempt < 32 {
		ceiling = min(e.backoffMax, e.backoffBase<<(attempt-1))
	}
	return rand.N(ceiling + 1)
}

func (e *Executor) pendingCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.pending)
}

// flushResults sends the pending results in batches until none is left. It
// returns the first failure: no admin answered, or the admin acknowledged
// none of a batch.
func (e *Executor) flushResults(ctx context.Context) error {
	for {
		e.mu.Lock()
		batch := slices.Clone(e.pending[:batchEnd(e.pending, e.cfg.ResultBatch)])
		e.mu.Unlock()
		if len(batch) == 0 {
			return nil
		}
		var resp protocol.ResultsResponse
		admin, err := e.client.post(ctx, protocol.PathResults, protocol.ResultsRequest{InstanceID: e.cfg.InstanceID, Results: batch}, &resp)
		if err != nil {
			e.mu.Lock()
			e.stats.ResultFailures++
			e.notifyLocked()
			e.mu.Unlock()
			return err
		}
		if e.acknowledge(batch, &resp, admin) == 0 {
			return fmt.Errorf("admin %s acknowledged none of %d results", admin, len(batch))
		}
	}
}

// maxBatchResultBytes bounds the handler results (protocol.SlotResult.Result)
// sent in one request, well below the admin's 1 MiB default body limit:
// 256 results of 16 KiB each would exceed it.
const maxBatchResultBytes = 256 << 10

// batchEnd is how many of pending the next request sends: at most n, and
// no more than maxBatchResultBytes of handler results, but at least one.
func batchEnd(pending []protocol.SlotResult, n int) int {
	end, bytes := min(len(pending), n), 0
	for i := range end {
		bytes += len(pending[i].Result)
		if bytes > maxBatchResultBytes && i > 0 {
			return i
		}
	}
	return end
}

// acknowledge forgets the results of batch the admin accepted or rejected
// and returns how many they were. Rejected results had a stale token.
func (e *Executor) acknowledge(batch []protocol.SlotResult, resp *protocol.ResultsResponse, admin string) int {
	inBatch := make(map[int64]string, len(batch))
	for _, r := range batch {
		inBatch[r.Token] = r.Status
	}
	acked := make(map[int64]bool, len(batch))
	var accepted, rejected uint64
	for _, tok := range resp.Accepted {
		if _, ok := inBatch[tok]; ok && !acked[tok] {
			acked[tok] = true
			accepted++
		}
	}
	for _, tok := range resp.Rejected {
		if _, ok := inBatch[tok]; ok && !acked[tok] {
			acked[tok] = true
			rejected++
			e.log.Warn("stale token: result ignored by admin", "token", tok, "status", inBatch[tok], "admin", admin)
		}
	}
	if len(acked) == 0 {
		return 0
	}
	if e.journal != nil {
		tokens := make([]int64, 0, len(acked))
		for tok := range acked {
			tokens = append(tokens, tok)
		}
		pending := func() []protocol.SlotResult {
			e.mu.Lock()
			defer e.mu.Unlock()
			return slices.DeleteFunc(slices.Clone(e.pending), func(r protocol.SlotResult) bool { return acked[r.Token] })
		}
		if err := e.journal.ack(tokens, pending); err != nil {
			e.log.Error("results journal: cannot record acknowledgements", "err", err)
		}
	}
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending = slices.DeleteFunc(e.pending, func(r protocol.SlotResult) bool {
		if acked[r.Token] {
			e.finished[r.Token] = now
			return true
		}
		return false
	})
	e.stats.ResultsAccepted += accepted
	e.stats.ResultsRejected += rejected
	if len(e.slots)+len(e.pending) < e.cfg.MaxPendingResults {
		e.refusedLogged = false
	}
	e.notifyLocked()
	return len(acked)
}

// flushRemaining delivers every pending result, retrying with backoff, until
// none is left or ctx ends.
func (e *Executor) flushRemaining(ctx context.Context) error {
	var lastErr error
	for attempt := 1; ; attempt++ {
		err := e.flushResults(ctx)
		if err == nil {
			return nil
		}
		// Keep the admins' answer rather than the deadline that cut a request short.
		if lastErr == nil || ctx.Err() == nil {
			lastErr = err
		}
		t := time.NewTimer(e.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %d results (last error: %w)", ErrResultsUndelivered, e.pendingCount(), lastErr)
		case <-t.C:
		}
	}
}
