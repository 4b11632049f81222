// This file: cancelling slots (by the admin, or by Stop) and giving queued
// slots back to the admin unstarted (release).

package sdk

import (
	"slices"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// cancelRunning cancels the context of every running slot with cause and
// returns how many there were.
func (e *Executor) cancelRunning(cause error) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, s := range e.slots {
		if s.cancel != nil {
			s.cancel(cause)
			n++
		}
	}
	return n
}

// cancel cancels the given tokens: a running slot's context is cancelled (it
// reports cancelled when its handler returns), a queued slot is finished as
// cancelled at once. Unknown and finished tokens are ignored. It returns the
// tokens found.
func (e *Executor) cancel(tokens []int64, reason, source string) []int64 {
	found := []int64{}
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, tok := range tokens {
		s, ok := e.slots[tok]
		if !ok {
			continue
		}
		found = append(found, tok)
		cause := &CancelledError{Reason: reason}
		if s.cancel != nil {
			s.task.Logger.Info("cancelling slot", "reason", reason, "source", source)
			s.cancel(cause)
			continue
		}
		s.task.Logger.Info("cancelling queued slot before it started", "reason", reason, "source", source)
		if i := slices.Index(e.queue, s); i >= 0 {
			e.queue = slices.Delete(e.queue, i, i+1)
		}
		delete(e.slots, tok)
		e.finishLocked(protocol.SlotResult{
			Token: tok, Status: protocol.SlotCancelled, Error: cause.Error() + " (before it started)",
			StartedAt: now.UnixMilli(), FinishedAt: now.UnixMilli(),
		})
	}
	return found
}

// release gives back the given tokens that are queued (accepted, not
// started): they leave the queue and will never start on this executor. A
// running, finished or unknown token is kept as it is. It returns the tokens
// given back. The decision is taken under the executor's lock, so a token is
// either started here or released, never both.
func (e *Executor) release(tokens []int64, reason string) []int64 {
	released := []int64{}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, tok := range tokens {
		s, ok := e.slots[tok]
		if !ok || s.cancel != nil {
			continue
		}
		if i := slices.Index(e.queue, s); i >= 0 {
			e.queue = slices.Delete(e.queue, i, i+1)
		}
		delete(e.slots, tok)
		e.released[tok] = true
		e.stats.Released++
		released = append(released, tok)
		s.task.Logger.Info("queued slot given back to the admin before it started", "reason", reason)
	}
	if len(released) > 0 {
		e.notifyLocked()
	}
	return released
}

// forgetReleased drops released tokens the admin reports as no longer
// current for this executor.
func (e *Executor) forgetReleased(tokens []int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, tok := range tokens {
		delete(e.released, tok)
	}
}
