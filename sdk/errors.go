package sdk

import (
	"errors"
	"fmt"
	"time"
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
