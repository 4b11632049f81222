// This file: running a slot's handler and turning its return into the
// slot's result, queued for delivery.

package sdk

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// startLocked runs s in a goroutine of its own.
func (e *Executor) startLocked(s *slot) {
	e.running++
	e.stats.Started++
	s.started = time.Now()
	ctx, cancel := context.WithCancelCause(e.baseCtx)
	s.cancel = cancel
	e.handlersWG.Add(1)
	go e.run(ctx, s)
}

func (e *Executor) run(ctx context.Context, s *slot) {
	defer e.handlersWG.Done()
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, s.timeout, &TimeoutError{Timeout: s.timeout})
		defer cancel()
	}
	// Per-slot lines are debug: at thousands of slots a second they would be
	// most of the log (and of the shipped lines); the admin records every
	// attempt's start and end anyway. A failed slot is logged at warn.
	s.task.Logger.Debug("slot started", "handler", s.task.Handler)
	var err error
	returned := false
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			s.task.Logger.Error("handler panicked", "panic", fmt.Sprint(v), "stack", string(pe.Stack))
			err = pe
		} else if !returned {
			err = errors.New("handler called runtime.Goexit instead of returning")
		}
		res := e.result(ctx, s, err)
		s.cancel(nil)
		if res.Status == protocol.SlotSucceeded {
			s.task.Logger.Debug("slot finished", "status", res.Status, "duration", time.Since(s.started).Round(time.Millisecond).String())
		} else {
			s.task.Logger.Warn("slot finished", "status", res.Status, "duration", time.Since(s.started).Round(time.Millisecond).String(), "err", res.Error)
		}
		e.finish(s, res)
	}()
	err = s.handler(ctx, s.task)
	returned = true
}

// result turns a handler's return into the slot's result: nil → succeeded;
// context cancelled by the admin or by Stop → cancelled; anything else
// (including a timeout and a panic) → failed, with its error class: timeout
// when the slot's timeout ended it, permanent when the error wraps a
// *PermanentError (Permanent), retryable otherwise (with the delay of a
// *RetryAfterError, RetryAfter).
func (e *Executor) result(ctx context.Context, s *slot, err error) protocol.SlotResult {
	t := s.task
	res := protocol.SlotResult{
		Token:      t.Token,
		StartedAt:  s.started.UnixMilli(),
		FinishedAt: time.Now().UnixMilli(),
	}
	res.Processed, res.Skipped, res.Failed, res.Uncertain = t.Counts()
	var pe *PanicError
	var ce *CancelledError
	var se *StoppingError
	cause := context.Cause(ctx) // nil unless ctx is done
	switch {
	case err == nil:
		res.Status, res.Result = protocol.SlotSucceeded, t.Result()
	case errors.As(err, &pe):
		// A panic is a bug, not a verdict on the input: retryable, even
		// when the panic value wraps a *PermanentError.
		res.Status, res.Error, res.ErrorClass = protocol.SlotFailed, err.Error(), protocol.ClassRetryable
	case cause != nil && (errors.As(cause, &ce) || errors.As(cause, &se)):
		res.Status, res.Error = protocol.SlotCancelled, withCause(cause, err)
	case cause != nil:
		res.Status, res.Error, res.ErrorClass = protocol.SlotFailed, withCause(cause, err), protocol.ClassRetryable
		var te *TimeoutError
		if errors.As(cause, &te) {
			res.ErrorClass = protocol.ClassTimeout
		}
	default:
		res.Status, res.Error = protocol.SlotFailed, err.Error()
		res.ErrorClass, res.RetryAfterMS = classify(err)
	}
	if len(res.Error) > maxErrorLen {
		res.Error = res.Error[:maxErrorLen] + "…"
	}
	return res
}

// withCause describes a handler error after its context ended: the cause,
// followed by the handler's own error unless it only echoes the context's.
func withCause(cause, err error) string {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, cause) {
		return cause.Error()
	}
	return cause.Error() + ": " + err.Error()
}

// finish records the result of a started slot and starts queued ones.
func (e *Executor) finish(s *slot, res protocol.SlotResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.slots, s.task.Token)
	e.running--
	e.finishLocked(res)
	e.startQueuedLocked()
	if e.running == 0 && e.idle != nil {
		close(e.idle)
		e.idle = nil
	}
}

// finishLocked queues res for delivery.
func (e *Executor) finishLocked(res protocol.SlotResult) {
	e.finished[res.Token] = time.Time{}
	e.pending = append(e.pending, res)
	if e.journal != nil {
		if err := e.journal.add(res); err != nil {
			e.log.Error("results journal: cannot record a result on disk; it is kept in memory", "token", res.Token, "err", err)
		}
	}
	e.stats.RecordsProcessed += uint64(max(res.Processed, 0))
	e.stats.RecordsSkipped += uint64(max(res.Skipped, 0))
	e.stats.RecordsFailed += uint64(max(res.Failed, 0))
	e.stats.RecordsUncertain += uint64(max(res.Uncertain, 0))
	switch res.Status {
	case protocol.SlotSucceeded:
		e.stats.Succeeded++
	case protocol.SlotCancelled:
		e.stats.Cancelled++
	default:
		e.stats.Failed++
	}
	kick(e.resWake)
	e.notifyLocked()
}
