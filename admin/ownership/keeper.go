package ownership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/coord"
	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/store"
)

// Claimer records partition ownership in the database (admin/store).
type Claimer interface {
	ClaimPartitions(ctx context.Context, holder string, claims []store.PartitionClaim) ([]int, error)
}

// Config configures a Keeper.
type Config struct {
	// ID is this admin replica's id, as the coordinator knows it (the
	// member node's name). Required.
	ID string
	// Count is the installation's number of partitions. Default
	// partition.DefaultCount (256). Every replica must use the same.
	Count int
	// Board is the coordinator: members, and the published assignment.
	// Required.
	Board coord.Board
	// Store claims the partitions' epochs. Required.
	Store Claimer
	// Require is the feature (coord.Replica.Features) a replica must have
	// registered to be given partitions; "" gives them to every member.
	// The admin requires FeatureFireByPartition, so that during a rolling
	// upgrade an admin of an older version, which registers no features
	// and does not fire by partition, gets none: the upgraded admins fire
	// every partition.
	Require string
	// RetryDelay is the wait after a failed coordinator or database call.
	// Default 1s.
	RetryDelay time.Duration
	// Logger receives hand-overs. Default slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns a copy of c with every unset field set to its
// default.
func (c Config) WithDefaults() Config {
	if c.Count == 0 {
		c.Count = partition.DefaultCount
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// FeatureFireByPartition is the feature an admin registers with the
// coordinator when it fires the due jobs of the partitions it owns
// (admin/scheduler FireOwned, schema 53 on).
const FeatureFireByPartition = "fire-by-partition"

// Published is the assignment as the leader writes it to the coordinator.
type Published struct {
	// Leader and Term say who computed it, in which leader term.
	Leader string `json:"leader"`
	Term   int64  `json:"term"`
	// LeftOut are the live replicas given no partitions because they did
	// not register Config.Require (older versions), sorted.
	LeftOut []string `json:"left_out,omitempty"`
	partition.Assignment
}

// Decode reads a published assignment; nil data is the empty assignment.
func Decode(data []byte) (Published, error) {
	var p Published
	if len(data) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return Published{}, fmt.Errorf("decode the partition assignment: %w", err)
	}
	if err := p.Validate(); err != nil {
		return Published{}, fmt.Errorf("decode the partition assignment: %w", err)
	}
	return p, nil
}

// Keeper keeps one replica's share of the partitions: during a leader term
// Rebalance publishes the assignment; on every replica Run claims the
// partitions the assignment gives it and reports them through Owned.
type Keeper struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	owned   map[int]int64 // partition → epoch, claimed in the database
	changed chan struct{} // closed and replaced when owned changes
}

// New returns a Keeper for cfg.
func New(cfg Config) (*Keeper, error) {
	cfg = cfg.WithDefaults()
	switch {
	case cfg.ID == "":
		return nil, errors.New("ownership: Config.ID is empty: give the admin replica's id")
	case cfg.Board == nil || cfg.Store == nil:
		return nil, errors.New("ownership: Config.Board and Config.Store are required")
	case cfg.Count < 1 || cfg.Count > partition.MaxCount:
		return nil, fmt.Errorf("ownership: Config.Count %d is out of range 1-%d", cfg.Count, partition.MaxCount)
	}
	return &Keeper{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "ownership", "replica", cfg.ID),
		owned:   map[int]int64{},
		changed: make(chan struct{}),
	}, nil
}

// Owned returns the partitions this replica owns now, with the epoch each
// was claimed at (every scheduling write of partition p checks that
// epoch: store.Tx.CheckPartitionEpoch), and a channel closed at the next
// change.
func (k *Keeper) Owned() (map[int]int64, <-chan struct{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return maps.Clone(k.owned), k.changed
}

// setOwned replaces the owned set (and signals) if it differs.
func (k *Keeper) setOwned(owned map[int]int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if maps.Equal(owned, k.owned) {
		return
	}
	k.owned = owned
	close(k.changed)
	k.changed = make(chan struct{})
}

// Rebalance keeps the published assignment balanced over the live
// replicas while this replica leads the term `term` (an epoch of the
// coordinator). It returns nil when ctx (the term) ends, and an error when
// it finds the term over otherwise (the coordinator refused a publication,
// or the published assignment comes from a later term). Each change
// moves the fewest partitions (partition.Rebalance) and gives every moved
// partition a new epoch, above all earlier ones: partition.NextEpoch(term,
// n) for the term's n-th computation.
func (k *Keeper) Rebalance(ctx context.Context, term int64) error {
	var seq int64
	var left string // the members left out, last logged
	for {
		replicas, membersChanged, err := k.cfg.Board.WatchMembers(ctx)
		if err != nil {
			if !k.retry(ctx, "watch the members", err) {
				return nil
			}
			continue
		}
		members, out := k.eligible(replicas)
		if s := fmt.Sprint(out); s != left {
			left = s
			if len(out) > 0 {
				k.log.Warn("ownership: admins that did not register the feature "+k.cfg.Require+
					" get no partitions: they run an older version; upgrade them", "admins", out, "given", members)
			}
		}
		pub, assignmentChanged, err := k.cfg.Board.WatchAssignment(ctx)
		if err != nil {
			if !k.retry(ctx, "watch the assignment", err) {
				return nil
			}
			continue
		}
		prev, err := Decode(pub.Data)
		if err != nil {
			k.log.Warn("ownership: the published assignment is unreadable; computing one from scratch", "err", err)
			prev = Published{}
		}
		if prev.Term > term {
			return fmt.Errorf("ownership: the assignment was published in term %d, after ours (%d): a later leader exists", prev.Term, term)
		}
		seq++
		next, moved, err := partition.Rebalance(prev.Assignment, members, k.cfg.Count, partition.NextEpoch(term, seq))
		if err != nil {
			return fmt.Errorf("ownership: rebalance in term %d: %w", term, err)
		}
		if moved > 0 || pub.Data == nil || !slices.Equal(prev.LeftOut, out) {
			data, err := json.Marshal(Published{Leader: k.cfg.ID, Term: term, LeftOut: out, Assignment: next})
			if err != nil {
				return fmt.Errorf("ownership: encode the assignment: %w", err)
			}
			if err := k.cfg.Board.PublishAssignment(ctx, term, data); err != nil {
				if errors.Is(err, coord.ErrNotLeading) || ctx.Err() != nil {
					return fmt.Errorf("ownership: term %d is over: %w", term, err)
				}
				if !k.retry(ctx, "publish the assignment", err) {
					return nil
				}
				continue
			}
			k.log.Info("ownership: published the partition assignment", "term", term, "members", len(members),
				"moved", moved, "loads", next.Loads())
			continue // read it back, with a new watch
		}
		select {
		case <-membersChanged:
		case <-assignmentChanged:
		case <-ctx.Done():
			return nil
		}
	}
}

// eligible splits the replicas into the IDs that may own partitions and
// the IDs left out for lack of the required feature.
func (k *Keeper) eligible(rs []coord.Replica) (in, out []string) {
	for _, r := range rs {
		if k.cfg.Require == "" || r.Has(k.cfg.Require) {
			in = append(in, r.ID)
		} else {
			out = append(out, r.ID)
		}
	}
	return in, out
}

// Run keeps this replica's owned partitions in step with the published
// assignment until ctx ends: it drops at once the partitions the
// assignment moved away, and all of them while the coordinator's session
// may be lost; it claims the partitions the assignment gives it, at their
// epochs, and owns those the database granted. It returns nil when ctx
// ends, owning nothing.
func (k *Keeper) Run(ctx context.Context) error {
	defer k.setOwned(map[int]int64{})
	for {
		pub, changed, err := k.cfg.Board.WatchAssignment(ctx)
		if err != nil {
			if errors.Is(err, coord.ErrClosed) {
				return nil
			}
			if !k.retry(ctx, "watch the assignment", err) {
				return nil
			}
			continue
		}
		if !k.follow(ctx, pub) {
			if !k.retry(ctx, "claim partitions", nil) {
				return nil
			}
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		}
	}
}

// follow applies one view of the assignment; false when a claim failed
// and must be tried again.
func (k *Keeper) follow(ctx context.Context, pub coord.Published) bool {
	if !pub.Trusted {
		k.mu.Lock()
		had := len(k.owned)
		k.mu.Unlock()
		if had > 0 {
			k.log.Warn("ownership: the coordinator session may be lost; dropping every partition", "dropped", had)
		}
		k.setOwned(map[int]int64{})
		return true
	}
	a, err := Decode(pub.Data)
	if err != nil {
		k.log.Warn("ownership: the published assignment is unreadable; owning nothing until the leader publishes again", "err", err)
		k.setOwned(map[int]int64{})
		return true
	}
	if a.Count() != 0 && a.Count() != k.cfg.Count {
		// Published for another partition count (by a leader started
		// before a repartition, or misconfigured: the database refuses an
		// admin whose count is not the installation's). None of it is
		// ours to claim.
		k.log.Warn("ownership: the published assignment is for another partition count; owning nothing until the leader publishes one for ours",
			"published", a.Count(), "ours", k.cfg.Count, "leader", a.Leader)
		k.setOwned(map[int]int64{})
		return true
	}
	want := map[int]int64{}
	for _, o := range a.Owned(k.cfg.ID) {
		want[o.Partition] = o.Epoch
	}
	cur, _ := k.Owned()
	kept := map[int]int64{}
	var claims []store.PartitionClaim
	for p, epoch := range want {
		if cur[p] == epoch {
			kept[p] = epoch
			continue
		}
		claims = append(claims, store.PartitionClaim{Partition: p, Epoch: epoch})
	}
	if dropped := len(cur) - len(kept); dropped > 0 {
		k.log.Info("ownership: partitions moved away", "dropped", dropped, "term", a.Term)
	}
	k.setOwned(maps.Clone(kept)) // drop before claiming anything
	if len(claims) == 0 {
		return true
	}
	won, err := k.cfg.Store.ClaimPartitions(ctx, k.cfg.ID, claims)
	if err != nil {
		k.log.Warn("ownership: claiming partitions failed", "partitions", len(claims), "err", err)
		return false
	}
	for _, p := range won {
		kept[p] = want[p]
	}
	k.setOwned(kept)
	k.log.Info("ownership: claimed partitions", "claimed", len(won), "refused", len(claims)-len(won), "owned", len(kept), "term", a.Term)
	return true
}

// retry logs err and waits RetryDelay; false when ctx ended.
func (k *Keeper) retry(ctx context.Context, what string, err error) bool {
	if err != nil && ctx.Err() == nil {
		k.log.Warn("ownership: "+what+" failed; retrying", "err", err, "in", k.cfg.RetryDelay)
	}
	t := time.NewTimer(k.cfg.RetryDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
