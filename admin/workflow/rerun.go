package workflow

import (
	"errors"
	"fmt"
)

// Errors of Rerun, wrapped with what was wrong.
var (
	// ErrUnknownNode: a key that is not a node of the workflow.
	ErrUnknownNode = errors.New("unknown node")
	// ErrNotFinished: the run still has a pending or running node. A second
	// click on "rerun" finds the run reopened by the first and gets this.
	ErrNotFinished = errors.New("workflow run not finished")
	// ErrRerunBlocked: a node to re-run would be skipped at once, by its
	// start rule or by the failure policy stop.
	ErrRerunBlocked = errors.New("rerun would skip its node at once")
)

// RerunPlan is what a rerun changes.
type RerunPlan struct {
	// Nodes are the nodes re-run — the given ones and everything
	// downstream of them — in topological order, all Pending in States.
	// The caller gives each a new node run (keyed by the rerun, so that
	// the same rerun applied twice creates each once).
	Nodes []string
	// Reopened are the other skipped nodes that are Pending again because
	// they may now start: skipped by the failure policy stop, not by a
	// failure that stays. Topological order.
	Reopened []string
	// States is the run's new state map, to decide on (Decide) as for a
	// new run.
	States map[string]State
}

// Rerun plans a rerun of a finished run (every node ended) from the nodes
// from: they and everything downstream of them become Pending; the rest
// keep their state, but for the nodes skipped only because the failure
// policy stop stopped the run, which are pending again (Reopened). states
// is not changed.
//
// Refused, with an error wrapping ErrUnknownNode, ErrNotFinished or
// ErrRerunBlocked and saying what to do: no node or an unknown one; a run
// not finished; a node of from that the first decision would skip at once —
// its start rule needs a parent that failed and is not re-run, or the
// failure policy is stop and a failed node is not re-run (re-run from that
// node as well). O(V+E).
func (g *Graph) Rerun(states map[string]State, from ...string) (RerunPlan, error) {
	if len(from) == 0 {
		return RerunPlan{}, fmt.Errorf("rerun: %w: name the node(s) to re-run from", ErrUnknownNode)
	}
	for _, k := range from {
		if !g.Has(k) {
			return RerunPlan{}, fmt.Errorf("rerun from %q: %w: no node has this key in workflow %s", k, ErrUnknownNode, g.def.Name)
		}
	}
	for _, v := range g.order {
		key := g.def.Nodes[v].Key
		if s, ok := states[key]; !ok || !s.Ended() {
			if !ok {
				s = Pending
			}
			return RerunPlan{}, fmt.Errorf("rerun: %w: node %s is %s; wait for the run to end, or cancel it", ErrNotFinished, key, s)
		}
	}
	rerun := g.downstream(from)
	next := make(map[string]State, len(g.order))
	for _, v := range g.order {
		key := g.def.Nodes[v].Key
		next[key] = states[key]
	}
	for _, v := range rerun {
		next[g.def.Nodes[v].Key] = Pending
	}
	var skipped []string // reopened on trial
	for _, v := range g.order {
		key := g.def.Nodes[v].Key
		if next[key] == Skipped {
			next[key] = Pending
			skipped = append(skipped, key)
		}
	}
	d := g.Decide(next)
	skippedNow := make(map[string]Skip, len(d.Skip))
	for _, s := range d.Skip {
		skippedNow[s.Key] = s
	}
	for _, k := range from {
		if s, ok := skippedNow[k]; ok {
			if s.Reason == SkipStopped {
				return RerunPlan{}, fmt.Errorf("rerun from %s: %w: node %s %s and is not re-run, and the failure policy is stop: re-run from %s as well",
					k, ErrRerunBlocked, s.Cause, states[s.Cause], s.Cause)
			}
			return RerunPlan{}, fmt.Errorf("rerun from %s: %w: its parent %s %s and is not re-run: re-run from %s",
				k, ErrRerunBlocked, s.Cause, states[s.Cause], s.Cause)
		}
	}
	plan := RerunPlan{Nodes: g.keys(rerun), States: next}
	for _, k := range skipped {
		if _, again := skippedNow[k]; again {
			next[k] = Skipped // skipped for a failure that stays
		} else {
			plan.Reopened = append(plan.Reopened, k)
		}
	}
	return plan, nil
}
