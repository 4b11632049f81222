package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// LocalGroup is a set of Local electors in one process that elect one
// leader among themselves: candidates queue in the order they start
// campaigning, the first one leads, and a leader whose term ends goes to
// the back of the queue. Epochs strictly increase per group.
type LocalGroup struct {
	mu      sync.Mutex
	last    int64    // last epoch handed out
	queue   []*Local // campaigning candidates, next leader first
	leader  *Local   // holds the turn (term running, or BaseEpoch being read)
	members []*Local // open electors, in join order
	// assignment is the partition assignment the leader published last.
	assignment []byte
	changed    chan struct{}
}

// NewLocalGroup returns an empty group.
func NewLocalGroup() *LocalGroup {
	return &LocalGroup{changed: make(chan struct{})}
}

func (g *LocalGroup) broadcastLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

func (g *LocalGroup) dequeueLocked(l *Local) {
	if i := slices.Index(g.queue, l); i >= 0 {
		g.queue = slices.Delete(g.queue, i, i+1)
	}
}

// LocalConfig configures NewLocal.
type LocalConfig struct {
	// Group is shared by the electors that compete with each other.
	// Default: a new group of one.
	Group *LocalGroup
	// ID identifies the replica in Members. Default "local".
	ID string
	// Address is shown by Members. Informational.
	Address string
	// Features are reported by Members and WatchMembers (see
	// ZKConfig.Features). Default none.
	Features []string
	// BaseEpoch returns the last epoch used before this process started
	// (the admin passes the epoch stored in the leader table), so that a
	// restart continues above it. It is called each time this elector
	// wins; the epoch is max(last epoch of the group, BaseEpoch()) + 1.
	// On error the turn passes on and the elector retries with backoff.
	// Default: no base (epochs start at 1).
	BaseEpoch func() (int64, error)
	// Logger receives leadership changes. Default slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns a copy of c with every unset field set to its
// default.
func (c LocalConfig) WithDefaults() LocalConfig {
	if c.Group == nil {
		c.Group = NewLocalGroup()
	}
	if c.ID == "" {
		c.ID = "local"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Local is the in-process Elector of standalone mode. Several Local
// electors sharing a LocalGroup behave like replicas electing a leader
// through ZooKeeper, without the network: the tests of the admin run two
// candidates in one process with it.
type Local struct {
	cfg         LocalConfig
	g           *LocalGroup
	log         *slog.Logger
	since       time.Time
	closeCtx    context.Context
	closeCancel context.CancelCauseFunc

	// guarded by g.mu
	closed     bool
	leadDone   chan struct{}           // non-nil while Lead runs
	termCancel context.CancelCauseFunc // non-nil while a term runs
	epoch      int64                   // of the running term
}

var (
	_ Elector = (*Local)(nil)
	_ Board   = (*Local)(nil)
)

// localCloseWait bounds how long Close waits for lead to return.
const localCloseWait = 10 * time.Second

// NewLocal returns an elector that joins cfg.Group as a member.
func NewLocal(cfg LocalConfig) *Local {
	cfg = cfg.WithDefaults()
	ctx, cancel := context.WithCancelCause(context.Background())
	l := &Local{
		cfg:         cfg,
		g:           cfg.Group,
		log:         cfg.Logger.With("component", "coord", "replica", cfg.ID),
		since:       time.Now().UTC().Truncate(time.Millisecond),
		closeCtx:    ctx,
		closeCancel: cancel,
	}
	g := l.g
	g.mu.Lock()
	g.members = append(g.members, l)
	g.broadcastLocked()
	g.mu.Unlock()
	return l
}

// Lead implements Elector. Only one Lead may run at a time on an elector.
func (l *Local) Lead(ctx context.Context, lead func(ctx context.Context, epoch int64)) error {
	g := l.g
	ctx, ended, finish, err := startLead(ctx, &g.mu, &l.closed, &l.leadDone, l.closeCtx, lead)
	if err != nil {
		return err
	}
	defer finish()

	var delay time.Duration
	for {
		if !l.awaitTurn(ctx) {
			return ended()
		}
		var base int64
		err = nil
		if l.cfg.BaseEpoch != nil {
			base, err = l.cfg.BaseEpoch()
		}
		if err != nil {
			l.release()
			delay = backoff(delay, 5*time.Second)
			l.log.Error("coord: cannot read the base epoch; passing the turn on", "err", err, "retryIn", delay)
			if !waitTimer(ctx, delay, nil) {
				return ended()
			}
			continue
		}

		if ctx.Err() != nil {
			l.release()
			return ended()
		}
		termCtx, termCancel := context.WithCancelCause(ctx)
		g.mu.Lock()
		epoch := max(g.last, base) + 1
		g.last = epoch
		l.termCancel, l.epoch = termCancel, epoch
		g.broadcastLocked()
		g.mu.Unlock()

		l.log.Info("coord: elected leader", "epoch", epoch)
		start := time.Now()
		lead(termCtx, epoch)
		termCancel(errTermOver)
		took := time.Since(start)
		l.log.Info("coord: term ended", "epoch", epoch, "cause", context.Cause(termCtx), "lasted", took.Round(time.Millisecond))
		l.release()

		if ctx.Err() != nil {
			return ended()
		}
		if took > time.Second || !errors.Is(context.Cause(termCtx), errTermOver) {
			delay = 0
			continue
		}
		// lead returned at once by itself: do not spin.
		delay = backoff(delay, 5*time.Second)
		if !waitTimer(ctx, delay, nil) {
			return ended()
		}
	}
}

// awaitTurn queues l and waits until it is first and nobody holds the
// turn; then l holds it. False when ctx ended (l left the queue).
func (l *Local) awaitTurn(ctx context.Context) bool {
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if !slices.Contains(g.queue, l) {
		g.queue = append(g.queue, l)
		g.broadcastLocked()
	}
	for {
		if ctx.Err() != nil {
			g.dequeueLocked(l)
			g.broadcastLocked()
			return false
		}
		if g.leader == nil && g.queue[0] == l {
			g.leader = l
			return true
		}
		changed := g.changed
		g.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
		g.mu.Lock()
	}
}

// release ends l's turn and sends it to the back of the queue (Lead
// queues it again).
func (l *Local) release() {
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.leader == l {
		g.leader = nil
	}
	l.termCancel, l.epoch = nil, 0
	g.dequeueLocked(l)
	g.broadcastLocked()
}

// Resign ends the running term, if any, with ErrResigned; the next
// candidate in the group leads, and this one queues again behind it (and
// leads again, with a new epoch, if it is alone).
func (l *Local) Resign() {
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.termCancel != nil {
		l.termCancel(ErrResigned)
	}
}

// Close ends the campaign (a running term is cancelled with ErrClosed, and
// Close waits up to 10s for Lead to return, so the next candidate does not
// lead while this one still does) and leaves the group. Do not call it
// from inside lead. Close is idempotent.
func (l *Local) Close() error {
	g := l.g
	g.mu.Lock()
	if l.closed {
		g.mu.Unlock()
		return nil
	}
	l.closed = true
	if i := slices.Index(g.members, l); i >= 0 {
		g.members = slices.Delete(g.members, i, i+1)
	}
	done := l.leadDone
	g.broadcastLocked()
	g.mu.Unlock()

	l.closeCancel(ErrClosed)
	if done != nil {
		t := time.NewTimer(localCloseWait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			l.log.Warn("coord: Close: lead did not return in time", "waited", localCloseWait)
		}
	}
	return nil
}

// Members implements Elector: the open electors of the group.
func (l *Local) Members(ctx context.Context) ([]Member, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Member, 0, len(g.members))
	for _, m := range g.members {
		mem := Member{ID: m.cfg.ID, Address: m.cfg.Address, Since: m.since, Features: slices.Clone(m.cfg.Features)}
		if g.leader == m && m.termCancel != nil {
			mem.Leader, mem.Epoch = true, m.epoch
		}
		out = append(out, mem)
	}
	slices.SortStableFunc(out, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// WatchMembers implements Board: the group's open electors.
func (l *Local) WatchMembers(ctx context.Context) ([]Replica, <-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.closed {
		return nil, nil, ErrClosed
	}
	out := make([]Replica, 0, len(g.members))
	for _, m := range g.members {
		out = append(out, Replica{ID: m.cfg.ID, Features: slices.Clone(m.cfg.Features)})
	}
	slices.SortFunc(out, func(a, b Replica) int { return strings.Compare(a.ID, b.ID) })
	out = slices.CompactFunc(out, func(a, b Replica) bool { return a.ID == b.ID })
	return out, g.changed, nil
}

// WatchAssignment implements Board: the group's assignment; always
// trusted while the elector is open (there is no session to lose).
func (l *Local) WatchAssignment(ctx context.Context) (Published, <-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return Published{}, nil, err
	}
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if l.closed {
		return Published{}, nil, ErrClosed
	}
	return Published{Data: g.assignment, Trusted: true}, g.changed, nil
}

// PublishAssignment implements Board: only the leader of the running term
// epoch replaces the group's assignment.
func (l *Local) PublishAssignment(ctx context.Context, epoch int64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case l.closed:
		return ErrClosed
	case g.leader != l || l.termCancel == nil || l.epoch != epoch:
		return fmt.Errorf("%w: publish the partition assignment of term %d", ErrNotLeading, epoch)
	}
	g.assignment = slices.Clone(data)
	g.broadcastLocked()
	return nil
}
