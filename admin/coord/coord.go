package coord

import (
	"context"
	"errors"
	"slices"
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

// Board is what the scheduling partitions need from the coordinator
// (docs/architecture.md, "Partitions"): the live replicas, watched, and
// one assignment that only the leader writes and every replica watches.
// The assignment is opaque here (admin/ownership encodes it).
type Board interface {
	// WatchMembers returns the live replicas, sorted by ID, each with the
	// features it registered, and a channel closed at the next change (or
	// connection change, or when ctx ends).
	WatchMembers(ctx context.Context) ([]Replica, <-chan struct{}, error)
	// WatchAssignment returns the assignment published last and a channel
	// closed at the next change of it or of Trusted (or when ctx ends).
	WatchAssignment(ctx context.Context) (Published, <-chan struct{}, error)
	// PublishAssignment replaces the assignment; it fails with
	// ErrNotLeading unless this replica leads the term of epoch.
	PublishAssignment(ctx context.Context, epoch int64, data []byte) error
}

// Published is the assignment as a replica sees it.
type Published struct {
	// Data is what the leader published last; nil before the first.
	Data []byte
	// Trusted is false while this replica may have lost its session: it
	// must not act on any assignment then.
	Trusted bool
	// Stale is true when Data was read before the connection went down
	// (the session may still live: Trusted says whether to act on it).
	Stale bool
}

// Member is one admin replica.
type Member struct {
	ID      string    `json:"id"`
	Address string    `json:"address,omitempty"`
	Leader  bool      `json:"leader"`
	Since   time.Time `json:"since"` // when the replica joined
	Epoch   int64     `json:"epoch"` // the leader's epoch; 0 unless Leader
	// Features are what the replica said it can do when it registered
	// (ZKConfig.Features); empty for a version that registers none.
	Features []string `json:"features,omitempty"`
}

// Replica is one live member as Board.WatchMembers reports it.
type Replica struct {
	ID string
	// Features are the replica's registered features (ZKConfig.Features,
	// LocalConfig.Features). A replica of an older version registers none:
	// the leader uses them to give work only to replicas that do it
	// (admin/ownership).
	Features []string
}

// Has reports whether the replica registered feature f.
func (r Replica) Has(f string) bool { return slices.Contains(r.Features, f) }

// ReplicaIDs returns the IDs of rs, in order.
func ReplicaIDs(rs []Replica) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	return ids
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
	// ErrNotLeading is returned by PublishAssignment when the replica does
	// not lead the term it names (any more).
	ErrNotLeading = errors.New("coord: not the leader of this term")
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
