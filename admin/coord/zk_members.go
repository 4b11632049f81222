package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// memberData is stored in Root/members/<ID>.
type memberData struct {
	ID       string    `json:"id"`
	Address  string    `json:"address,omitempty"`
	Since    time.Time `json:"since"`
	Features []string  `json:"features,omitempty"`
}

// membersWait bounds how long Members waits for a connection.
const membersWait = 2 * time.Second

// errMemberTaken: the member node exists and belongs to another session,
// either a previous run of this replica whose session has not expired yet,
// or another replica configured with the same ID.
var errMemberTaken = errors.New("coord: member node held by another session")

// register creates this replica's member node in the current session.
func (e *ZKElector) register() error {
	data, _ := json.Marshal(memberData{ID: e.cfg.ID, Address: e.cfg.Address, Since: e.since, Features: e.cfg.Features})
	_, err := e.conn.Create(e.memberNode, data, zk.FlagEphemeral, e.acl)
	if !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	_, st, err := e.conn.Get(e.memberNode)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return e.register()
	case err != nil:
		return err
	case st.EphemeralOwner == e.conn.SessionID():
		return nil // ours: the reply of an earlier create was lost
	default:
		return fmt.Errorf("%w %#x (another replica with ID %q, or a previous run of this one whose session "+
			"has not expired yet)", errMemberTaken, st.EphemeralOwner, e.cfg.ID)
	}
}

// keepMember keeps the member node registered: again in every new session
// after an expiry, and again if someone deleted it.
func (e *ZKElector) keepMember(gen uint64, registered bool) {
	defer e.bg.Done()
	var delay time.Duration
	var watch <-chan zk.Event // on our member node, or on the foreign one we wait for
	for {
		e.mu.Lock()
		cur, up, changed := e.gen, e.readyLocked(), e.changed
		e.mu.Unlock()
		var retry *time.Timer
		if up && (!registered || cur != gen) {
			err := e.register()
			switch {
			case err == nil:
				if gen != cur || delay > 0 {
					e.log.Info("coord: registered as a member again", "node", e.memberNode)
				}
				gen, registered, delay = cur, true, 0
				watch = nil
			case errors.Is(err, errMemberTaken):
				e.log.Warn("coord: waiting for the member node to be released", "node", e.memberNode, "err", err)
				var ok bool
				ok, _, watch, err = e.conn.ExistsW(e.memberNode)
				if err == nil && !ok {
					continue // released meanwhile
				}
			}
			if err != nil {
				registered = false
				delay = backoff(delay, 5*time.Second)
				e.log.Debug("coord: member registration failed", "err", err, "retryIn", delay)
				retry = time.NewTimer(delay)
			}
		}
		if up && registered && watch == nil {
			var ok bool
			var err error
			ok, _, watch, err = e.conn.ExistsW(e.memberNode)
			if err == nil && !ok {
				registered = false
				continue
			}
		}
		var retryC <-chan time.Time
		if retry != nil {
			retryC = retry.C
		}
		select {
		case ev := <-watch:
			watch = nil
			if ev.Type == zk.EventNodeDeleted {
				registered = false
			}
		case <-changed:
		case <-retryC:
		case <-e.closeCtx.Done():
			if retry != nil {
				retry.Stop()
			}
			return
		}
		if retry != nil {
			retry.Stop()
		}
	}
}

// unregister deletes the member node if this session owns it.
func (e *ZKElector) unregister() {
	e.mu.Lock()
	ready := e.readyLocked()
	e.mu.Unlock()
	if !ready {
		return
	}
	_, st, err := e.conn.Get(e.memberNode)
	if err != nil || st.EphemeralOwner != e.conn.SessionID() {
		return
	}
	if err := e.conn.Delete(e.memberNode, st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) {
		e.log.Debug("coord: could not delete the member node; the session close removes it", "err", err)
	}
}

// Members implements Elector: the replicas with a member node, and the
// owner of the lowest election node as the leader. That is ZooKeeper's
// view: a leader whose connection broke may have stopped acting already.
// ZooKeeper calls are bounded by the client's own timeouts; ctx is checked
// between them.
func (e *ZKElector) Members(ctx context.Context) ([]Member, error) {
	if e.isClosed() {
		return nil, ErrClosed
	}
	wctx, cancel := context.WithTimeout(ctx, membersWait)
	err := e.awaitReady(wctx, -1)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w %s (waited %s)", ErrNotConnected, strings.Join(e.cfg.Servers, ","), membersWait)
	}
	names, _, err := e.conn.Children(e.membersPath)
	if err != nil {
		return nil, fmt.Errorf("coord: list members under %s: %w", e.membersPath, err)
	}
	members := make([]Member, 0, len(names))
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		md, ok, err := e.readMember(name)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // left meanwhile
		}
		members = append(members, Member{ID: md.ID, Address: md.Address, Since: md.Since, Features: md.Features})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	leader, epoch, err := e.leader()
	if err != nil {
		return nil, err
	}
	if leader.ID != "" {
		i := slices.IndexFunc(members, func(m Member) bool { return m.ID == leader.ID })
		if i < 0 {
			// Leading but not (yet) registered as a member: show it anyway.
			members = append(members, Member{ID: leader.ID, Address: leader.Address})
			i = len(members) - 1
		}
		members[i].Leader = true
		members[i].Epoch = epoch
	}
	slices.SortFunc(members, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return members, nil
}

// leader reads the owner of the lowest election node.
func (e *ZKElector) leader() (candidateData, int64, error) {
	for range 5 {
		children, _, err := e.conn.Children(e.electionPath)
		if err != nil {
			return candidateData{}, 0, fmt.Errorf("coord: list candidates under %s: %w", e.electionPath, err)
		}
		cands := sortCandidates(children)
		if len(cands) == 0 {
			return candidateData{}, 0, nil
		}
		data, _, err := e.conn.Get(path.Join(e.electionPath, cands[0].name))
		if errors.Is(err, zk.ErrNoNode) {
			continue // the leader just left: look again
		}
		if err != nil {
			return candidateData{}, 0, fmt.Errorf("coord: read candidate %s: %w", cands[0].name, err)
		}
		var cd candidateData
		if err := json.Unmarshal(data, &cd); err != nil || cd.ID == "" {
			cd = candidateData{ID: "(unknown: " + cands[0].name + ")"}
		}
		return cd, epochOf(cands[0].seq), nil
	}
	return candidateData{}, 0, fmt.Errorf("coord: the leadership under %s kept changing while reading it", e.electionPath)
}

// readMember reads the member node name (Root/members/<ID>): its data as
// this package writes it, or the name alone for a node written by anything
// else (still a live member, with no features). ok is false when the node
// is gone (the member left meanwhile).
func (e *ZKElector) readMember(name string) (md memberData, ok bool, err error) {
	data, _, err := e.conn.Get(e.membersPath + "/" + name)
	if errors.Is(err, zk.ErrNoNode) {
		return memberData{}, false, nil
	}
	if err != nil {
		return memberData{}, false, fmt.Errorf("coord: read member %s: %w", name, err)
	}
	if err := json.Unmarshal(data, &md); err != nil || md.ID == "" {
		md = memberData{ID: name}
	}
	return md, true, nil
}
