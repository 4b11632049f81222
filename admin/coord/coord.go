package coord

import (
	"context"
	"errors"
	"time"
)

// Elector elects one leader among admin replicas.
type Elector interface {
	// Lead campaigns until ctx ends. Each time this replica wins, it calls
	// lead(termCtx, epoch) in the same goroutine; termCtx is cancelled as
	// soon as leadership MAY be lost; lead must return promptly after that,
	// and Lead then campaigns again. Lead returns ctx.Err() (or a fatal
	// error, or ErrClosed after Close).
	//
	// context.Cause(termCtx) tells why a term ended: ErrMaybeLost,
	// ErrSessionExpired, ErrNodeDeleted, ErrResigned, ErrClosed, or the
	// cause of ctx.
	Lead(ctx context.Context, lead func(ctx context.Context, epoch int64)) error
	// Members lists the admin replicas that are alive right now, with who
	// leads and since when.
	Members(ctx context.Context) ([]Member, error)
}

// Member is one admin replica.
type Member struct {
	ID      string    `json:"id"`
	Address string    `json:"address,omitempty"`
	Leader  bool      `json:"leader"`
	Since   time.Time `json:"since"` // when the replica joined
	Epoch   int64     `json:"epoch"` // the leader's epoch; 0 unless Leader
}

// Sentinel errors. Term cancellation causes (context.Cause of the termCtx
// given to lead) are among them.
var (
	// ErrClosed is returned by Lead after Close, and is the cause of a
	// term ended by Close.
	ErrClosed = errors.New("coord: elector closed")
	// ErrAlreadyCampaigning is returned by Lead when another Lead call on
	// the same elector is still running: one replica, one candidate.
	ErrAlreadyCampaigning = errors.New("coord: Lead is already running on this elector")
	// ErrInvalidConfig is wrapped by the configuration errors of NewZK and
	// NewLocal.
	ErrInvalidConfig = errors.New("coord: invalid configuration")
	// ErrMaybeLost ends a term when the connection to ZooKeeper stayed
	// down for MaybeLostAfter: the session may expire soon, or already did.
	ErrMaybeLost = errors.New("coord: zookeeper connection lost for longer than MaybeLostAfter; leadership may be lost")
	// ErrSessionExpired ends a term when the ZooKeeper session expired:
	// the election node is gone and another replica may lead.
	ErrSessionExpired = errors.New("coord: zookeeper session expired")
	// ErrNodeDeleted ends a term when the leader's election node
	// disappeared while the session lived (deleted by hand, or by a tool).
	ErrNodeDeleted = errors.New("coord: election node deleted")
	// ErrNotConnected is returned by Members when the elector is not
	// connected to ZooKeeper.
	ErrNotConnected = errors.New("coord: not connected to zookeeper")
	// ErrResigned ends a term after Resign.
	ErrResigned = errors.New("coord: leader resigned")
	// errTermOver is the cause set when lead returned by itself.
	errTermOver = errors.New("coord: lead returned")
)

// waitTimer waits for d, ctx or wake, whichever comes first, and reports
// whether ctx is still alive.
func waitTimer(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-ctx.Done():
		return false
	}
	return true
}

// backoff doubles d up to max.
func backoff(d, max time.Duration) time.Duration {
	if d <= 0 {
		return 50 * time.Millisecond
	}
	return min(2*d, max)
}
