package coord

import (
	"context"
	"errors"
	"sync"
)

// startLead is the start of Lead that Local and ZKElector share: at most
// one Lead at a time per elector, and a context for it that also ends, with
// cause ErrClosed, when the elector closes (closeCtx).
//
// Under mu — the elector's lock, which guards *closed and *leadDone — it
// checks that the elector is open and no Lead runs, and marks one running
// (*leadDone, closed when that Lead has returned: Close waits on it). It
// returns the Lead's context; ended, the error Lead returns once that
// context is done (ErrClosed when the elector closed, else the caller's
// context error); and finish, which Lead must defer.
func startLead(ctx context.Context, mu sync.Locker, closed *bool, leadDone *chan struct{}, closeCtx context.Context,
	lead func(ctx context.Context, epoch int64)) (leadCtx context.Context, ended func() error, finish func(), err error) {
	if lead == nil {
		return nil, nil, nil, errors.New("coord: Lead: lead func is nil")
	}
	mu.Lock()
	if *closed {
		mu.Unlock()
		return nil, nil, nil, ErrClosed
	}
	if *leadDone != nil {
		mu.Unlock()
		return nil, nil, nil, ErrAlreadyCampaigning
	}
	done := make(chan struct{})
	*leadDone = done
	mu.Unlock()

	leadCtx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(closeCtx, func() { cancel(ErrClosed) })
	ended = func() error {
		if errors.Is(context.Cause(leadCtx), ErrClosed) {
			return ErrClosed
		}
		return leadCtx.Err()
	}
	finish = func() {
		stop()
		cancel(nil)
		mu.Lock()
		*leadDone = nil
		mu.Unlock()
		close(done)
	}
	return leadCtx, ended, finish, nil
}
