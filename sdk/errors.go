package sdk

import (
	"errors"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// Lifecycle errors.
var (
	// ErrAlreadyStarted is returned by Start on an executor that runs.
	ErrAlreadyStarted = errors.New("shardjob executor already started")
	// ErrStopped is returned by Start after Stop: an Executor runs once;
	// create a new one with New.
	ErrStopped = errors.New("shardjob executor stopped: an Executor cannot be restarted, create a new one with New")
	// ErrNoHandlers is returned by Start when Handle was never called.
	ErrNoHandlers = errors.New("no handler registered: call Handle before Start")
	// ErrResultsUndelivered is returned (wrapped) by Stop when some results
	// could not be delivered to any admin before it gave up.
	ErrResultsUndelivered = errors.New("results not delivered to any admin")
	// ErrHandlersStuck is returned (wrapped) by Stop when handlers had not
	// returned DrainTimeout after their context was cancelled (or when Stop's
	// context ended first).
	ErrHandlersStuck = errors.New("handlers did not return after cancellation")
)

// CancelledError is the cause (context.Cause) of a handler context cancelled
// by the admin.
type CancelledError struct {
	Reason string // as given by the admin; may be empty
}

func (e *CancelledError) Error() string {
	if e.Reason == "" {
		return "cancelled by admin"
	}
	return "cancelled by admin: " + e.Reason
}

// StoppingError is the cause of a handler context cancelled because the
// executor is stopping and the slot outlived DrainTimeout (or Stop's context).
type StoppingError struct {
	DrainTimeout time.Duration // zero when Stop's context ended first
}

func (e *StoppingError) Error() string {
	if e.DrainTimeout == 0 {
		return "cancelled: executor stopping (Stop's context ended)"
	}
	return fmt.Sprintf("cancelled: executor stopping and drain timeout %s exceeded", e.DrainTimeout)
}

// TimeoutError is the cause of a handler context cancelled because the
// assignment's timeout elapsed. A timed-out slot is reported failed.
type TimeoutError struct {
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timed out after %s", e.Timeout)
}

// PanicError is what a handler that panicked is reported with.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("handler panicked: %v", e.Value) }

// PermanentError marks a handler's error as permanent: the slot fails
// without retry, whatever the job's retry_max (docs/failures.md). Make one
// with Permanent, or put one in the chain of your own error type (an Unwrap
// that returns it): the executor finds it with errors.As.
type PermanentError struct {
	Err error
}

func (e *PermanentError) Error() string {
	if e.Err == nil {
		return "permanent failure"
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err so that the slot that returns it fails without retry:
// for failures that another attempt cannot fix (invalid input, a refused
// request, a constraint violated). Permanent(nil) is nil. A handler that
// panics, times out or returns any other error keeps the job's retry
// policy (retryable).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// RetryAfterError asks for the slot's retry no earlier than After after it
// failed. Make one with RetryAfter, or put one in the chain of your own
// error type: the executor finds it with errors.As.
type RetryAfterError struct {
	Err   error
	After time.Duration
}

func (e *RetryAfterError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("retry after %s", e.After)
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryAfter wraps err so that the slot that returns it is retried no
// earlier than d after it failed (a rate limit, a maintenance window): the
// admin waits the longer of its own backoff and d, with d capped at
// protocol.MaxRetryAfter (one hour). The retry still counts against the
// job's retry_max. RetryAfter(nil, d) is nil; d <= 0 asks for nothing more
// than the backoff.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &RetryAfterError{Err: err, After: d}
}

// classify is the error class and the retry delay (milliseconds, capped)
// that a failed slot's handler error asks for: permanent when a
// *PermanentError is in its chain (it wins over a retry-after), otherwise
// retryable, with the delay of a *RetryAfterError in the chain.
func classify(err error) (class string, retryAfterMS int64) {
	var pe *PermanentError
	if errors.As(err, &pe) {
		return protocol.ClassPermanent, 0
	}
	var ra *RetryAfterError
	if errors.As(err, &ra) && ra.After > 0 {
		return protocol.ClassRetryable, min(ra.After, protocol.MaxRetryAfter).Milliseconds()
	}
	return protocol.ClassRetryable, 0
}
