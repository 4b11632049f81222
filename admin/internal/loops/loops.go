package loops

import (
	"context"
	"errors"
	"sync"
)

// Loop is a background loop: Run works until ctx ends, then returns once
// all it started has stopped. It returns nil (or ctx's error) when it
// stopped because ctx ended, another error when it failed.
type Loop interface {
	Run(ctx context.Context) error
}

// Func is a Loop made of a function.
type Func func(ctx context.Context) error

// Run calls f.
func (f Func) Run(ctx context.Context) error { return f(ctx) }

// Quiet is a Loop made of a function that never fails (the Run(ctx) of
// the watchdog, the samplers and the like).
func Quiet(run func(ctx context.Context)) Loop {
	return Func(func(ctx context.Context) error {
		run(ctx)
		return nil
	})
}

// Group is a set of loops started together by Start. Its methods are safe
// for concurrent use, Stop included.
type Group struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	failed chan struct{} // closed at the first failure
	err    error         // the first failure, set before failed is closed
}

// Start runs each loop in its own goroutine, with a context derived from
// ctx: the loops stop when ctx ends or at Stop.
func Start(ctx context.Context, loops ...Loop) *Group {
	ctx, cancel := context.WithCancel(ctx)
	g := &Group{cancel: cancel, failed: make(chan struct{})}
	for _, l := range loops {
		g.wg.Go(func() {
			if err := l.Run(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				g.once.Do(func() {
					g.err = err
					close(g.failed)
				})
			}
		})
	}
	return g
}

// Failed is closed when a loop of the group failed: it returned an error
// other than its context's.
func (g *Group) Failed() <-chan struct{} { return g.failed }

// Err is the first failure of a loop of the group, or nil.
func (g *Group) Err() error {
	select {
	case <-g.failed:
		return g.err
	default:
		return nil
	}
}

// Cancel ends the loops' context without waiting for them (see Wait).
func (g *Group) Cancel() { g.cancel() }

// Wait waits until every loop has returned and returns the first failure,
// or nil.
func (g *Group) Wait() error {
	g.wg.Wait()
	return g.Err()
}

// Stop cancels the loops and waits until every one has returned (Cancel,
// then Wait). It returns the first failure, or nil.
func (g *Group) Stop() error {
	g.Cancel()
	return g.Wait()
}
