package workflow

import (
	"container/heap"
	"fmt"
	"strings"

	"github.com/shardjob/shardjob/sdk/names"
)

// Graph is a valid definition, indexed: the only way to get one is
// Validate, so every method may rely on unique keys, known endpoints and
// no cycle. It is read-only and safe for concurrent use.
type Graph struct {
	def      Definition       // with defaults
	index    map[string]int32 // key → definition index
	parents  [][]int32        // by definition index, in edge order
	children [][]int32        // by definition index, in edge order
	order    []int32          // topological, ties by definition index
	rank     []int32          // definition index → position in order
	layer    []int32          // longest path from a root, in edges
	layers   int              // number of layers
}

// Validate checks a definition (with its defaults applied) and returns its
// Graph, or FieldErrors naming every field that is wrong: name, app,
// failure_policy; nodes (none, too many), nodes[i].key (rule, duplicate),
// nodes[i].job, nodes[i].handler, nodes[i].params, nodes[i].slots,
// nodes[i].start, nodes[i].wait_for[j] (and its .name, .app),
// nodes[i].wait_timeout, nodes[i].on_timeout; edges (too many, a cycle), edges[i].from, edges[i].to
// (unknown key), edges[i] (self-edge, duplicate).
//
// A cycle is named in order, first node repeated at the end:
// "a → b → c → a" — the first cycle a depth-first search meets, taking
// nodes and edges in definition order, so the same definition always names
// the same cycle. Edges with an error of their own are left out of the
// cycle search. O(V+E) but for the topological order's heap
// (O(V log V + E)).
func Validate(d Definition) (*Graph, error) {
	d = d.WithDefaults()
	errs := FieldErrors{}
	if p := names.Problem(d.Name); p != "" {
		errs["name"] = p
	}
	if p := names.Problem(d.App); p != "" {
		errs["app"] = p
	}
	if d.FailurePolicy != Stop && d.FailurePolicy != Continue {
		errs["failure_policy"] = fmt.Sprintf("%q is not a failure policy: stop (default) or continue", d.FailurePolicy)
	}
	switch {
	case len(d.Nodes) == 0:
		errs["nodes"] = "at least one node is required"
		return nil, errs
	case len(d.Nodes) > MaxNodes:
		errs["nodes"] = fmt.Sprintf("%d nodes: at most %d", len(d.Nodes), MaxNodes)
		return nil, errs
	case len(d.Edges) > MaxEdges:
		errs["edges"] = fmt.Sprintf("%d edges: at most %d", len(d.Edges), MaxEdges)
		return nil, errs
	}
	g := &Graph{def: d, index: make(map[string]int32, len(d.Nodes))}
	params := 0
	for i, n := range d.Nodes {
		checkNode(errs, i, n)
		checkWaits(errs, d, i, n)
		params += len(n.Params)
		if p := names.Problem(n.Key); p != "" {
			errs[fmt.Sprintf("nodes[%d].key", i)] = p
		} else if j, dup := g.index[n.Key]; dup {
			errs[fmt.Sprintf("nodes[%d].key", i)] = fmt.Sprintf("%q is the key of nodes[%d] already", n.Key, j)
		} else {
			g.index[n.Key] = int32(i)
		}
	}
	checkReferences(errs, d)
	if params > MaxTotalParamsBytes {
		errs["nodes"] = fmt.Sprintf("the inline params of all nodes take %d bytes: at most %d together", params, MaxTotalParamsBytes)
	}
	g.parents = make([][]int32, len(d.Nodes))
	g.children = make([][]int32, len(d.Nodes))
	seen := make(map[[2]int32]int, len(d.Edges))
	for i, e := range d.Edges {
		from, okFrom := g.index[e.From]
		to, okTo := g.index[e.To]
		if !okFrom {
			errs[fmt.Sprintf("edges[%d].from", i)] = unknownKey(e.From)
		}
		if !okTo {
			errs[fmt.Sprintf("edges[%d].to", i)] = unknownKey(e.To)
		}
		if !okFrom || !okTo {
			continue
		}
		if from == to {
			errs[fmt.Sprintf("edges[%d]", i)] = fmt.Sprintf("an edge from %s to itself: a node cannot wait for itself", e.From)
			continue
		}
		if j, dup := seen[[2]int32{from, to}]; dup {
			errs[fmt.Sprintf("edges[%d]", i)] = fmt.Sprintf("%s → %s is edges[%d] already", e.From, e.To, j)
			continue
		}
		seen[[2]int32{from, to}] = i
		g.children[from] = append(g.children[from], to)
		g.parents[to] = append(g.parents[to], from)
	}
	if cycle := g.findCycle(); cycle != nil {
		keys := make([]string, len(cycle))
		for i, v := range cycle {
			keys[i] = d.Nodes[v].Key
		}
		errs["edges"] = "a cycle: " + strings.Join(keys, " → ") + " (remove one of its edges)"
	}
	if len(errs) > 0 {
		return nil, errs
	}
	g.sortTopologically()
	return g, nil
}

func unknownKey(k string) string {
	if k == "" {
		return "required: the key of a node"
	}
	return fmt.Sprintf("%q is not the key of a node", k)
}

// checkNode checks what a node runs and its start rule.
func checkNode(errs FieldErrors, i int, n Node) {
	at := func(field string) string { return fmt.Sprintf("nodes[%d].%s", i, field) }
	switch n.Start {
	case AllSuccess, AllDone, OneSuccess:
	default:
		errs[at("start")] = fmt.Sprintf("%q is not a start rule: all_success (default), all_done or one_success", n.Start)
	}
	if n.Job != nil {
		ref := n.Job
		switch {
		case ref.ID < 0:
			errs[at("job")] = fmt.Sprintf("id %d: a job id is positive", ref.ID)
		case ref.ID > 0 && (ref.Name != "" || ref.App != ""):
			errs[at("job")] = "a job by id or by name (and app), not both"
		case ref.ID == 0 && !names.Valid(ref.Name):
			errs[at("job")] = "a job id, or a job name: " + names.Rule
		case ref.App != "" && !names.Valid(ref.App):
			errs[at("job")] = "app: " + names.Rule
		}
		if n.Handler != "" {
			errs[at("handler")] = "a node runs a job or an inline handler, not both"
		}
		if n.Params != "" {
			errs[at("params")] = "only for an inline handler: a job runs with its own params"
		}
		if n.SlotCount != 0 {
			errs[at("slots")] = "only for an inline handler: a job runs with its own slots"
		}
		for field, v := range map[string]int64{"retry_max": int64(n.RetryMax), "retry_backoff_ms": n.RetryBackoffMS, "timeout_ms": n.TimeoutMS} {
			if v != 0 {
				errs[at(field)] = "only for an inline handler: a job runs with its own " + field
			}
		}
		return
	}
	if n.Handler == "" || len(n.Handler) > MaxHandlerLen || strings.ContainsAny(n.Handler, " ,\t\n") {
		errs[at("handler")] = fmt.Sprintf("a job or an inline handler is required: the name a handler is registered under on the executors (no spaces or commas, at most %d characters)", MaxHandlerLen)
	}
	if len(n.Params) > MaxParamsBytes {
		errs[at("params")] = fmt.Sprintf("at most %d bytes", MaxParamsBytes)
	}
	if n.SlotCount < 1 || n.SlotCount > MaxSlots {
		errs[at("slots")] = fmt.Sprintf("%d is outside 1-%d", n.SlotCount, MaxSlots)
	}
	if n.RetryMax < 0 || n.RetryMax > MaxRetries {
		errs[at("retry_max")] = fmt.Sprintf("%d is outside 0-%d", n.RetryMax, MaxRetries)
	}
	if n.RetryBackoffMS < 0 {
		errs[at("retry_backoff_ms")] = "milliseconds, 0 or more"
	}
	if n.TimeoutMS < 0 {
		errs[at("timeout_ms")] = "milliseconds, 0 (none) or more"
	}
}

// findCycle returns the first cycle an iterative depth-first search meets,
// roots and children in definition order, as node indexes with the first
// repeated at the end; nil when there is none. O(V+E).
func (g *Graph) findCycle() []int32 {
	const (
		unseen = iota
		onStack
		done
	)
	n := len(g.children)
	mark := make([]uint8, n)
	type frame struct{ v, next int32 }
	var stack []frame
	for root := range n {
		if mark[root] != unseen {
			continue
		}
		stack = append(stack[:0], frame{v: int32(root)})
		mark[root] = onStack
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if int(top.next) == len(g.children[top.v]) {
				mark[top.v] = done
				stack = stack[:len(stack)-1]
				continue
			}
			w := g.children[top.v][top.next]
			top.next++
			switch mark[w] {
			case unseen:
				mark[w] = onStack
				stack = append(stack, frame{v: w})
			case onStack: // a back edge: the cycle is the stack from w up
				var cycle []int32
				for i := len(stack) - 1; i >= 0; i-- {
					cycle = append(cycle, stack[i].v)
					if stack[i].v == w {
						break
					}
				}
				for i, j := 0, len(cycle)-1; i < j; i, j = i+1, j-1 {
					cycle[i], cycle[j] = cycle[j], cycle[i]
				}
				return append(cycle, w)
			}
		}
	}
	return nil
}

// sortTopologically fills order, rank and layer: Kahn's algorithm taking
// the ready node of smallest definition index first, so a definition
// written in dependency order keeps its order; the layer of a node is the
// longest path to it from a root.
func (g *Graph) sortTopologically() {
	n := len(g.parents)
	indeg := make([]int32, n)
	ready := make(minHeap, 0, n)
	for v := range n {
		indeg[v] = int32(len(g.parents[v]))
		if indeg[v] == 0 {
			ready = append(ready, int32(v))
		}
	}
	heap.Init(&ready)
	g.order = make([]int32, 0, n)
	g.rank = make([]int32, n)
	g.layer = make([]int32, n)
	for ready.Len() > 0 {
		v := heap.Pop(&ready).(int32)
		g.rank[v] = int32(len(g.order))
		g.order = append(g.order, v)
		if int(g.layer[v]) >= g.layers {
			g.layers = int(g.layer[v]) + 1
		}
		for _, w := range g.children[v] {
			if l := g.layer[v] + 1; l > g.layer[w] {
				g.layer[w] = l
			}
			indeg[w]--
			if indeg[w] == 0 {
				heap.Push(&ready, w)
			}
		}
	}
}

type minHeap []int32

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(int32)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
