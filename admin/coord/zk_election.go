package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// candidatePrefix is the name given to CreateProtectedEphemeralSequential;
// the node is named "_c_<guid>-n-<10-digit sequence>".
const candidatePrefix = "n-"

// errors that end a campaign round; Lead then starts a new round.
var (
	errSessionChanged = errors.New("coord: the session of the candidate node expired")
	errNodeGone       = errors.New("coord: the candidate node disappeared")
	errNotTrusted     = errors.New("coord: won, but the connection is not trusted any more")
)

// candidateData is stored in an election node: who owns it.
type candidateData struct {
	ID      string `json:"id"`
	Address string `json:"address,omitempty"`
}

// candidate is one child of the election node.
type candidate struct {
	name string
	seq  int64
}

// parseSeq returns the sequence number ZooKeeper appended to a candidate
// node name; epochOf turns it into the epoch of that candidate if it wins.
func parseSeq(name string) (int64, bool) {
	name = path.Base(name)
	i := strings.LastIndex(name, candidatePrefix) // the GUID before it is hex: no 'n'
	if i < 0 {
		return 0, false
	}
	seq, err := strconv.ParseInt(name[i+len(candidatePrefix):], 10, 64)
	if err != nil || seq < 0 {
		return 0, false
	}
	return seq, true
}

// epochOf is the epoch of the candidate with sequence number seq: seq+1,
// because the first sequence number under a new election node is 0, and
// the leader table starts at epoch 0, which no claim could then pass
// ("WHERE epoch < ?").
func epochOf(seq int64) int64 { return seq + 1 }

// sortCandidates keeps the children that are candidate nodes, lowest
// sequence first. Names start with a random GUID, so only the parsed
// sequence orders them.
func sortCandidates(children []string) []candidate {
	out := make([]candidate, 0, len(children))
	for _, c := range children {
		if seq, ok := parseSeq(c); ok {
			out = append(out, candidate{name: c, seq: seq})
		}
	}
	slices.SortFunc(out, func(a, b candidate) int { return int(min(max(a.seq-b.seq, -1), 1)) })
	return out
}

// isFatal reports errors that retrying will not fix.
func isFatal(err error) bool {
	for _, f := range []error{zk.ErrNoAuth, zk.ErrAuthFailed, zk.ErrBadArguments, zk.ErrInvalidACL,
		zk.ErrInvalidPath, zk.ErrNoChildrenForEphemerals, zk.ErrBadVersion} {
		if errors.Is(err, f) {
			return true
		}
	}
	return false
}

// Lead implements Elector. Only one Lead may run at a time on an elector.
func (e *ZKElector) Lead(ctx context.Context, lead func(ctx context.Context, epoch int64)) error {
	ctx, ended, finish, err := startLead(ctx, &e.mu, &e.closed, &e.leadDone, e.closeCtx, lead)
	if err != nil {
		return err
	}
	defer finish()

	var delay time.Duration
	for {
		if ctx.Err() != nil {
			return ended()
		}
		node, gen, err := e.enlist(ctx)
		if err == nil {
			var term time.Duration
			term, err = e.campaign(ctx, node, gen, lead)
			e.resign(node)
			if err == nil && term > time.Second {
				delay = 0 // a real term: campaign again at once
				continue
			}
		}
		switch {
		case ctx.Err() != nil:
			return ended()
		case isFatal(err):
			e.log.Error("coord: election failed", "err", err)
			return fmt.Errorf("coord: zookeeper election under %s: %w", e.electionPath, err)
		case errors.Is(err, zk.ErrClosing), errors.Is(err, zk.ErrConnectionClosed) && e.isClosed():
			return ErrClosed
		}
		// Transient trouble, or a term that ended at once (lead returned
		// immediately): do not spin.
		delay = backoff(delay, 5*time.Second)
		if err != nil && !errors.Is(err, errSessionChanged) {
			e.log.Debug("coord: campaign round ended", "err", err, "retryIn", delay)
		}
		if !waitTimer(ctx, delay, nil) {
			return ended()
		}
	}
}

func (e *ZKElector) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// awaitTrusted waits until the client has a trusted session and returns
// its generation and id.
func (e *ZKElector) awaitTrusted(ctx context.Context) (uint64, int64, error) {
	for {
		e.mu.Lock()
		ok, gen, id, changed := e.readyLocked() && e.trusted, e.gen, e.sessionID, e.changed
		e.mu.Unlock()
		if ok {
			return gen, id, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, 0, context.Cause(ctx)
		}
	}
}

// enlist creates a new candidate node, after removing leftovers of this
// session: a node whose create reply was lost, or one resign could not
// delete. Such a node would otherwise stand in the queue with nobody
// behind it, and block the election if it were the lowest.
func (e *ZKElector) enlist(ctx context.Context) (string, uint64, error) {
	gen, sid, err := e.awaitTrusted(ctx)
	if err != nil {
		return "", 0, err
	}
	children, _, err := e.conn.Children(e.electionPath)
	if errors.Is(err, zk.ErrNoNode) {
		e.log.Warn("coord: the election node was deleted; recreating it (its sequence restarts, so epochs restart "+
			"too: the leader table fence will refuse them until they pass the stored epoch)", "path", e.electionPath)
		err = e.ensurePath(e.electionPath)
	}
	if err != nil {
		return "", 0, err
	}
	for _, c := range children {
		p := e.electionPath + "/" + c
		_, st, err := e.conn.Get(p)
		if err != nil || st.EphemeralOwner != sid {
			continue
		}
		if err := e.conn.Delete(p, st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return "", 0, fmt.Errorf("delete leftover candidate %s: %w", p, err)
		}
		e.log.Info("coord: deleted a leftover candidate node of this session", "node", p)
	}
	data, _ := json.Marshal(candidateData{ID: e.cfg.ID, Address: e.cfg.Address})
	node, err := e.conn.CreateProtectedEphemeralSequential(e.electionPath+"/"+candidatePrefix, data, e.acl)
	if err != nil {
		return "", 0, fmt.Errorf("create candidate under %s: %w", e.electionPath, err)
	}
	if _, ok := parseSeq(node); !ok {
		return "", 0, fmt.Errorf("create candidate under %s: unexpected node name %q", e.electionPath, node)
	}
	e.log.Debug("coord: candidate", "node", node)
	return node, gen, nil
}

// campaign waits until node is the lowest candidate, watching only its
// predecessor, then runs a term. It returns how long the term lasted.
func (e *ZKElector) campaign(ctx context.Context, node string, gen uint64, lead func(context.Context, int64)) (time.Duration, error) {
	name := path.Base(node)
	var delay time.Duration
	for {
		if err := e.awaitReady(ctx, int64(gen)); err != nil {
			return 0, err
		}
		children, _, err := e.conn.Children(e.electionPath)
		if err != nil {
			if isFatal(err) || errors.Is(err, zk.ErrClosing) {
				return 0, err
			}
			delay = backoff(delay, time.Second)
			if !e.pause(ctx, delay) {
				return 0, context.Cause(ctx)
			}
			continue
		}
		cands := sortCandidates(children)
		idx := slices.IndexFunc(cands, func(c candidate) bool { return c.name == name })
		if idx < 0 {
			if e.sessionGen() != gen {
				return 0, errSessionChanged
			}
			return 0, errNodeGone
		}
		if idx == 0 {
			return e.runTerm(ctx, node, epochOf(cands[0].seq), gen, lead)
		}
		pred := e.electionPath + "/" + cands[idx-1].name
		_, _, watch, err := e.conn.GetW(pred) // GetW leaves no watch behind when pred is gone
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			if isFatal(err) || errors.Is(err, zk.ErrClosing) {
				return 0, err
			}
			delay = backoff(delay, time.Second)
			if !e.pause(ctx, delay) {
				return 0, context.Cause(ctx)
			}
			continue
		}
		delay = 0
		if h := e.cfg.hooks.watching; h != nil {
			h(node, pred)
		}
		if err := e.awaitEvent(ctx, gen, watch); err != nil {
			return 0, err
		}
	}
}

// pause waits for d or a session change; false when ctx ended.
func (e *ZKElector) pause(ctx context.Context, d time.Duration) bool {
	e.mu.Lock()
	changed := e.changed
	e.mu.Unlock()
	return waitTimer(ctx, d, changed)
}

// awaitEvent waits for the watch to fire, the session to expire or ctx.
// Disconnections within the session keep the watch: the client sets it
// again on reconnect and the server fires it if the node changed meanwhile.
func (e *ZKElector) awaitEvent(ctx context.Context, gen uint64, watch <-chan zk.Event) error {
	for {
		e.mu.Lock()
		g, changed := e.gen, e.changed
		e.mu.Unlock()
		if g != gen {
			return errSessionChanged
		}
		select {
		case <-watch:
			return nil
		case <-changed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// runTerm registers the term where the session state machine can cancel
// it, checks that the node still exists (and watches it), and calls lead.
func (e *ZKElector) runTerm(ctx context.Context, node string, epoch int64, gen uint64,
	lead func(context.Context, int64)) (time.Duration, error) {
	termCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(errTermOver)

	e.mu.Lock()
	if e.gen != gen || !e.trusted {
		e.mu.Unlock()
		return 0, errNotTrusted
	}
	e.term = &zkTerm{cancel: cancel, node: node, epoch: epoch}
	reconnects := e.reconnects
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.term = nil
		e.mu.Unlock()
	}()

	_, _, watch, err := e.conn.GetW(node)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, errNodeGone
	}
	if err != nil {
		return 0, err
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.guardTerm(termCtx, cancel, node, watch, reconnects)
	}()

	e.log.Info("coord: elected leader", "epoch", epoch, "node", node)
	start := time.Now()
	lead(termCtx, epoch)
	cancel(errTermOver)
	wg.Wait()
	took := time.Since(start)
	e.log.Info("coord: term ended", "epoch", epoch, "cause", context.Cause(termCtx), "lasted", took.Round(time.Millisecond))
	return took, nil
}

// guardTerm cancels the term when the leader's node is deleted, and checks
// that it still exists after every reconnection within the session.
// Disconnection and expiry are handled by the session state machine.
func (e *ZKElector) guardTerm(ctx context.Context, cancel context.CancelCauseFunc, node string,
	watch <-chan zk.Event, reconnects uint64) {
	for {
		e.mu.Lock()
		changed, rc, up := e.changed, e.reconnects, e.readyLocked()
		e.mu.Unlock()
		if up && (rc != reconnects || watch == nil) {
			reconnects = rc
			var err error
			if watch == nil {
				_, _, watch, err = e.conn.GetW(node)
			} else {
				var ok bool
				if ok, _, err = e.conn.Exists(node); err == nil && !ok {
					err = zk.ErrNoNode
				}
			}
			if errors.Is(err, zk.ErrNoNode) {
				e.log.Warn("coord: the leader's election node is gone after a reconnection", "node", node)
				cancel(ErrNodeDeleted)
				return
			}
			// Other errors: the connection dropped again; the state
			// machine decides.
		}
		select {
		case ev, ok := <-watch:
			switch {
			case !ok:
				watch = nil
			case ev.Type == zk.EventNodeDeleted:
				e.log.Warn("coord: the leader's election node was deleted", "node", node)
				cancel(ErrNodeDeleted)
				return
			case ev.Type == zk.EventNotWatching:
				switch {
				case errors.Is(ev.Err, zk.ErrSessionExpired):
					cancel(ErrSessionExpired)
				case errors.Is(ev.Err, zk.ErrClosing):
					cancel(ErrClosed)
				default:
					cancel(ErrMaybeLost)
				}
				return
			default: // data changed: watch again
				watch = nil
			}
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// resign deletes a candidate node (best effort: if the connection is down,
// enlist sweeps it later, and an expired session took it already).
func (e *ZKElector) resign(node string) {
	e.mu.Lock()
	ready := e.readyLocked()
	e.mu.Unlock()
	if !ready {
		e.log.Debug("coord: not connected; the next round deletes the candidate node", "node", node)
		return
	}
	err := e.conn.Delete(node, -1)
	switch {
	case err == nil:
		e.log.Debug("coord: candidate node deleted", "node", node)
	case errors.Is(err, zk.ErrNoNode):
	default:
		e.log.Debug("coord: could not delete candidate node; the next round sweeps it", "node", node, "err", err)
	}
}
