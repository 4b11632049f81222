package workflow

import "time"

// Definition returns the definition the graph was validated from, with its
// defaults applied. The caller must not change its slices.
func (g *Graph) Definition() Definition { return g.def }

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.order) }

// Has reports whether key is a node of the graph.
func (g *Graph) Has(key string) bool {
	_, ok := g.index[key]
	return ok
}

// Node returns the node of key (with its defaults).
func (g *Graph) Node(key string) (Node, bool) {
	i, ok := g.index[key]
	if !ok {
		return Node{}, false
	}
	return g.def.Nodes[i], true
}

func (g *Graph) keys(idx []int32) []string {
	out := make([]string, len(idx))
	for i, v := range idx {
		out[i] = g.def.Nodes[v].Key
	}
	return out
}

// Order is a topological order of the keys: every edge goes forward, and of
// the nodes whose parents are all placed the one defined first comes next —
// a definition written in dependency order keeps its order.
func (g *Graph) Order() []string { return g.keys(g.order) }

// Layer is the layer of a node: the number of edges on the longest path to
// it from a root (roots are in layer 0); -1 for an unknown key.
func (g *Graph) Layer(key string) int {
	i, ok := g.index[key]
	if !ok {
		return -1
	}
	return int(g.layer[i])
}

// Layers lists the keys of each layer, each layer in topological order.
// Every edge goes from a layer to a later one.
func (g *Graph) Layers() [][]string {
	out := make([][]string, g.layers)
	for _, v := range g.order {
		l := g.layer[v]
		out[l] = append(out[l], g.def.Nodes[v].Key)
	}
	return out
}

// Roots are the nodes without parents, in topological order: they start
// when the run starts.
func (g *Graph) Roots() []string {
	return g.filter(func(v int32) bool { return len(g.parents[v]) == 0 })
}

// Leaves are the nodes without children, in topological order: the ends of
// the workflow, which decide between failed and partially_failed.
func (g *Graph) Leaves() []string {
	return g.filter(func(v int32) bool { return len(g.children[v]) == 0 })
}

func (g *Graph) filter(keep func(int32) bool) []string {
	var out []string
	for _, v := range g.order {
		if keep(v) {
			out = append(out, g.def.Nodes[v].Key)
		}
	}
	return out
}

// Parents are the keys key waits for, in edge order; nil for an unknown key.
func (g *Graph) Parents(key string) []string {
	i, ok := g.index[key]
	if !ok {
		return nil
	}
	return g.keys(g.parents[i])
}

// Children are the keys that wait for key, in edge order; nil for an
// unknown key.
func (g *Graph) Children(key string) []string {
	i, ok := g.index[key]
	if !ok {
		return nil
	}
	return g.keys(g.children[i])
}

// Downstream lists the nodes reachable from the given ones, the given ones
// included, in topological order; unknown keys are ignored. O(V+E).
func (g *Graph) Downstream(keys ...string) []string {
	return g.keys(g.downstream(keys))
}

// downstream marks the nodes reachable from keys and returns them in
// topological order.
func (g *Graph) downstream(keys []string) []int32 {
	in := make([]bool, len(g.order))
	var stack []int32
	for _, k := range keys {
		if i, ok := g.index[k]; ok && !in[i] {
			in[i] = true
			stack = append(stack, i)
		}
	}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range g.children[v] {
			if !in[w] {
				in[w] = true
				stack = append(stack, w)
			}
		}
	}
	var out []int32
	for _, v := range g.order {
		if in[v] {
			out = append(out, v)
		}
	}
	return out
}

// CriticalPath is the longest chain of the workflow weighted by the nodes'
// durations (a missing or negative duration counts 0): the shortest time the
// run can take with unlimited executors and no scheduling overhead, and the
// chain that takes it, from a root to a leaf. Ties go to the node first in
// topological order, so the same inputs name the same path. O(V+E).
func (g *Graph) CriticalPath(durations map[string]time.Duration) (time.Duration, []string) {
	n := len(g.order)
	finish := make([]time.Duration, n)
	via := make([]int32, n) // the parent the longest chain comes through, -1 for none
	end := int32(-1)
	for _, v := range g.order {
		start, from := time.Duration(0), int32(-1)
		for _, p := range g.parents[v] {
			if from < 0 || finish[p] > start || (finish[p] == start && g.rank[p] < g.rank[from]) {
				start, from = finish[p], p
			}
		}
		d := durations[g.def.Nodes[v].Key]
		if d < 0 {
			d = 0
		}
		finish[v], via[v] = start+d, from
		if len(g.children[v]) == 0 && (end < 0 || finish[v] > finish[end]) {
			end = v
		}
	}
	var path []int32
	for v := end; v >= 0; v = via[v] {
		path = append(path, v)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return finish[end], g.keys(path)
}
