package coord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"
)

// watchWait bounds how long WatchAssignment and WatchMembers wait for a
// connection before they answer from what they last read.
const watchWait = membersWait

// WatchMembers implements Board: the replicas with a member node, sorted
// by ID, each with the features in its node, and a channel closed when
// they change, when the connection state changes, or when ctx ends. A
// member node's data is written when it is created and never changed, so
// the watch on the children is enough.
func (e *ZKElector) WatchMembers(ctx context.Context) ([]Replica, <-chan struct{}, error) {
	changed, err := e.readyForWatch(ctx)
	if err != nil {
		return nil, nil, err
	}
	names, _, watch, err := e.conn.ChildrenW(e.membersPath)
	if err != nil {
		return nil, nil, fmt.Errorf("coord: watch the members under %s: %w", e.membersPath, err)
	}
	slices.Sort(names)
	out := make([]Replica, 0, len(names))
	for _, name := range names {
		md, ok, err := e.readMember(name)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue // left meanwhile: the watch fires
		}
		out = append(out, Replica{ID: name, Features: md.Features})
	}
	return out, e.either(ctx, watch, changed), nil
}

// WatchAssignment implements Board: the assignment the leader published
// last (nil before the first), whether this replica may act on it, and a
// channel closed when either changes or ctx ends.
//
// Trusted is false from the moment the session may be lost (the
// connection stayed down for MaybeLostAfter, or the session expired) until
// a session is up again: a replica must then stop scheduling its
// partitions, since the leader may already have given them to others.
// While the connection is down but the session may live, it answers from
// the assignment it read last.
func (e *ZKElector) WatchAssignment(ctx context.Context) (Published, <-chan struct{}, error) {
	if e.isClosed() {
		return Published{}, nil, ErrClosed
	}
	e.mu.Lock()
	ready, trusted, changed := e.readyLocked(), e.trusted, e.changed
	last := e.assignment
	e.mu.Unlock()
	if !ready {
		// No request while disconnected (see the package doc): the caller
		// hears of the next connection change.
		return Published{Data: last, Trusted: trusted, Stale: true}, e.either(ctx, nil, changed), nil
	}
	data, _, watch, err := e.conn.GetW(e.partitionsPath)
	if errors.Is(err, zk.ErrNoNode) {
		// Deleted by hand: create it again, empty (the leader publishes
		// into it when it sees the empty assignment).
		if err = e.ensurePath(e.partitionsPath); err == nil {
			data, _, watch, err = e.conn.GetW(e.partitionsPath)
		}
	}
	if err != nil {
		return Published{}, nil, fmt.Errorf("coord: watch the partition assignment %s: %w", e.partitionsPath, err)
	}
	if len(data) == 0 {
		data = nil
	}
	e.mu.Lock()
	e.assignment = data
	trusted = e.trusted
	e.mu.Unlock()
	return Published{Data: data, Trusted: trusted}, e.either(ctx, watch, changed), nil
}

// PublishAssignment implements Board: it writes data as the assignment,
// in one ZooKeeper transaction with a check that this replica's election
// node still exists, so that only the leader of the running term epoch
// writes it (a former leader whose session expired fails the check).
func (e *ZKElector) PublishAssignment(ctx context.Context, epoch int64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	term, ready, closed := e.term, e.readyLocked(), e.closed
	e.mu.Unlock()
	switch {
	case closed:
		return ErrClosed
	case term == nil || term.epoch != epoch:
		return fmt.Errorf("%w: publish the partition assignment of term %d", ErrNotLeading, epoch)
	case !ready:
		return fmt.Errorf("%w %s: publish the partition assignment", ErrNotConnected, strings.Join(e.cfg.Servers, ","))
	}
	publish := func() error {
		_, err := e.conn.Multi(
			&zk.CheckVersionRequest{Path: term.node, Version: -1},
			&zk.SetDataRequest{Path: e.partitionsPath, Data: data, Version: -1},
		)
		return err
	}
	err := publish()
	if errors.Is(err, zk.ErrNoNode) {
		// Either node may be missing: the assignment's (deleted by hand) is
		// created again, the election node's means another leader.
		if cerr := e.ensurePath(e.partitionsPath); cerr != nil {
			return fmt.Errorf("coord: publish the partition assignment: create %s: %w", e.partitionsPath, cerr)
		}
		err = publish()
	}
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%w: the election node %s is gone: %w", ErrNotLeading, term.node, err)
	}
	if err != nil {
		return fmt.Errorf("coord: publish the partition assignment: %w", err)
	}
	return nil
}

// readyForWatch waits up to watchWait for a connection and returns the
// channel closed at the next change of the connection state.
func (e *ZKElector) readyForWatch(ctx context.Context) (<-chan struct{}, error) {
	if e.isClosed() {
		return nil, ErrClosed
	}
	wctx, cancel := context.WithTimeout(ctx, watchWait)
	err := e.awaitReady(wctx, -1)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w %s (waited %s)", ErrNotConnected, strings.Join(e.cfg.Servers, ","), watchWait)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed, nil
}

// either returns a channel closed when the zk watch fires, changed (the
// connection state as of before the request) is closed, the elector closes or ctx ends, whichever comes first.
// The goroutine behind it ends then too.
func (e *ZKElector) either(ctx context.Context, watch <-chan zk.Event, changed <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		select {
		case <-watch:
		case <-changed:
		case <-e.closeCtx.Done():
		case <-ctx.Done():
		}
	}()
	return out
}
