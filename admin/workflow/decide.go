package workflow

// State is the state of one node in one workflow run.
type State string

// The node states. Pending, then Running once its node run exists (or
// Waiting first, for a node that waits for other runs), then one of the
// four ended states.
const (
	// Pending: not started; waits for its start rule (or the run's start).
	Pending State = "pending"
	// Running: its node run was created (it may still wait for an
	// executor); it ends succeeded, failed or cancelled.
	Running State = "running"
	// Waiting: its start rule was met and its node run exists, but it
	// waits for runs of other jobs or workflows (Node.WaitFor) before its
	// job run is created. For start rules it is not ended, as Running; the
	// failure policy stop skips it, as a Pending node.
	Waiting State = "waiting"
	// Succeeded, Failed: its node run ended so.
	Succeeded State = "succeeded"
	Failed    State = "failed"
	// Skipped: it never ran — its start rule could no longer be met, or the
	// failure policy stop stopped the run.
	Skipped State = "skipped"
	// Cancelled: its node run was cancelled by hand. For start rules and the
	// failure policy a cancelled node counts as a failed one.
	Cancelled State = "cancelled"
)

// Ended reports whether s is final for the run: succeeded, failed, skipped
// or cancelled.
func (s State) Ended() bool {
	return s == Succeeded || s == Failed || s == Skipped || s == Cancelled
}

// unsuccessful: ended without success.
func (s State) unsuccessful() bool { return s == Failed || s == Skipped || s == Cancelled }

// failure: counts as a failure of the run (failure policy, outcome).
func (s State) failure() bool { return s == Failed || s == Cancelled }

// RunStatus is how a finished workflow run ended; the words are the runs'
// (admin/store).
type RunStatus string

// The statuses of a finished workflow run.
const (
	// RunSucceeded: no node failed or was cancelled.
	RunSucceeded RunStatus = "succeeded"
	// RunPartiallyFailed: a node failed or was cancelled, and at least one
	// leaf (a node without children: an end of the workflow) succeeded.
	RunPartiallyFailed RunStatus = "partially_failed"
	// RunFailed: a node failed or was cancelled, and no leaf succeeded.
	RunFailed RunStatus = "failed"
)

// SkipReason says why a node is skipped.
type SkipReason string

// The reasons of a skip.
const (
	// SkipStartRule: the node's start rule can no longer be met; Cause is
	// its first parent (in edge order) that ended without success.
	SkipStartRule SkipReason = "start_rule"
	// SkipStopped: the failure policy is stop and a node failed or was
	// cancelled; Cause is the first such node in topological order.
	SkipStopped SkipReason = "stopped"
)

// Skip is a node the decision skips, with its reason and the node that
// caused it.
type Skip struct {
	Key    string     `json:"key"`
	Reason SkipReason `json:"reason"`
	Cause  string     `json:"cause"`
}

// Decision is what Decide found: the nodes to start now, the nodes to skip
// now, and, once no node is pending or running after them, how the run
// ended.
type Decision struct {
	// Ready are the pending nodes whose start rule is met, in topological
	// order: the caller creates their node runs (keyed (workflow run,
	// node), so creating one twice creates it once) and records them
	// Running.
	Ready []string
	// Skip are the pending (or, under stop, waiting) nodes that will never
	// start, in topological order: the caller records them Skipped.
	Skip []Skip
	// Finished: once Skip is applied, every node has ended (Ready is then
	// empty). Outcome is set only when Finished.
	Finished bool
	Outcome  Outcome
}

// Empty reports whether the decision changes nothing: no node to start or
// skip, the run not finished.
func (d Decision) Empty() bool { return len(d.Ready) == 0 && len(d.Skip) == 0 && !d.Finished }

// Outcome is how a finished run ended.
type Outcome struct {
	Status RunStatus `json:"status"`
	// Node counts by final state.
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Skipped   int `json:"skipped"`
	// FailedNodes are the failed and cancelled nodes in topological order
	// (for the run_failed alarm: "node x failed").
	FailedNodes []string `json:"failed_nodes,omitempty"`
}

// Apply returns states with the decision applied: Ready nodes Running,
// Skip nodes Skipped (a new map; states is not changed). It is what the
// caller's transaction writes, for tests and simulations.
func (d Decision) Apply(states map[string]State) map[string]State {
	out := make(map[string]State, len(states)+len(d.Ready)+len(d.Skip))
	for k, s := range states {
		out[k] = s
	}
	for _, k := range d.Ready {
		out[k] = Running
	}
	for _, s := range d.Skip {
		out[s.Key] = Skipped
	}
	return out
}

// Decide decides, from the state of every node of one run, which pending
// nodes start now, which are skipped now, and whether the run has finished
// and how. A key missing from states is Pending; keys that are not nodes
// are ignored; a state that is not one of the seven is taken for Running
// (not startable, not ended).
//
// The rules, for a pending node with parents (a node without parents is
// ready at once):
//
//	all_success  ready when every parent succeeded; skipped when one ended without success
//	all_done     ready when every parent ended;     never skipped by its rule
//	one_success  ready when one parent succeeded;   skipped when every parent ended without success
//
// A skip is itself an end: in one pass in topological order, a skip
// reaches down the graph as far as it goes (the children of a skipped
// all_success node are skipped, an all_done child of it becomes ready).
// A node made ready in the same pass is not ended yet: its children wait.
//
// With the failure policy stop, once a node has failed or been cancelled
// no node starts any more: every pending or waiting node is skipped
// (SkipStopped); the running ones finish. Otherwise a waiting node is, for
// its children, a node that has not ended.
//
// Decide is pure and idempotent: deciding again on the states with the
// decision applied (Decision.Apply) yields an empty decision, or the same
// Finished outcome. O(V+E).
func (g *Graph) Decide(states map[string]State) Decision {
	n := len(g.order)
	st := make([]State, n)
	for i := range n {
		s, ok := states[g.def.Nodes[i].Key]
		switch {
		case !ok:
			s = Pending
		case s == Pending || s == Running || s == Waiting || s.Ended():
		default:
			s = Running
		}
		st[i] = s
	}
	var d Decision
	stop := int32(-1) // the first failed node, when the policy is stop
	if g.def.FailurePolicy == Stop {
		for _, v := range g.order {
			if st[v].failure() {
				stop = v
				break
			}
		}
	}
	for _, v := range g.order {
		if st[v] != Pending && (st[v] != Waiting || stop < 0) {
			continue
		}
		key := g.def.Nodes[v].Key
		if stop >= 0 {
			st[v] = Skipped
			d.Skip = append(d.Skip, Skip{Key: key, Reason: SkipStopped, Cause: g.def.Nodes[stop].Key})
			continue
		}
		ready, cause := g.rule(v, st)
		switch {
		case ready:
			st[v] = Running // started: ended for nobody in this pass
			d.Ready = append(d.Ready, key)
		case cause >= 0:
			st[v] = Skipped
			d.Skip = append(d.Skip, Skip{Key: key, Reason: SkipStartRule, Cause: g.def.Nodes[cause].Key})
		}
	}
	if len(d.Ready) > 0 {
		return d
	}
	o := Outcome{}
	leafSucceeded := false
	for _, v := range g.order {
		switch st[v] {
		case Succeeded:
			o.Succeeded++
			leafSucceeded = leafSucceeded || len(g.children[v]) == 0
		case Failed, Cancelled:
			if st[v] == Failed {
				o.Failed++
			} else {
				o.Cancelled++
			}
			o.FailedNodes = append(o.FailedNodes, g.def.Nodes[v].Key)
		case Skipped:
			o.Skipped++
		default: // pending or running
			return d
		}
	}
	switch {
	case len(o.FailedNodes) == 0:
		o.Status = RunSucceeded
	case leafSucceeded:
		o.Status = RunPartiallyFailed
	default:
		o.Status = RunFailed
	}
	d.Finished, d.Outcome = true, o
	return d
}

// rule applies v's start rule to its parents' states: ready, or the parent
// that makes the rule impossible (-1: neither yet, the node waits).
func (g *Graph) rule(v int32, st []State) (ready bool, cause int32) {
	parents := g.parents[v]
	if len(parents) == 0 {
		return true, -1
	}
	switch g.def.Nodes[v].Start {
	case AllDone:
		for _, p := range parents {
			if !st[p].Ended() {
				return false, -1
			}
		}
		return true, -1
	case OneSuccess:
		for _, p := range parents {
			if st[p] == Succeeded {
				return true, -1
			}
		}
		for _, p := range parents {
			if !st[p].Ended() {
				return false, -1
			}
		}
		return false, parents[0]
	default: // AllSuccess
		waiting := false
		for _, p := range parents {
			switch {
			case st[p].unsuccessful():
				return false, p
			case st[p] != Succeeded:
				waiting = true
			}
		}
		return !waiting, -1
	}
}
