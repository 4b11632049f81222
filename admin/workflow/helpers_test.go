package workflow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// spec builds a definition from "a>b a>c b>d c>d": nodes in the order they
// first appear (inline handler "noop"), then edges. A word without '>' is a
// node without edges; "x:one_success", wherever x appears, sets its start
// rule.
func spec(policy FailurePolicy, s string) Definition {
	d := Definition{Name: "wf", App: "app", FailurePolicy: policy}
	seen := map[string]int{}
	node := func(w string) string {
		key, rule, _ := strings.Cut(w, ":")
		i, ok := seen[key]
		if !ok {
			i = len(d.Nodes)
			seen[key] = i
			d.Nodes = append(d.Nodes, Node{Key: key, Handler: "noop"})
		}
		if rule != "" {
			d.Nodes[i].Start = StartRule(rule)
		}
		return key
	}
	for _, w := range strings.Fields(s) {
		from, to, isEdge := strings.Cut(w, ">")
		a := node(from)
		if isEdge {
			d.Edges = append(d.Edges, Edge{From: a, To: node(to)})
		}
	}
	return d
}

func mustGraph(t testing.TB, d Definition) *Graph {
	t.Helper()
	g, err := Validate(d)
	require.NoError(t, err)
	return g
}

// diamond20: a fans out to b01..b18, which fan in to z (20 nodes).
func diamond20(policy FailurePolicy) Definition {
	var b strings.Builder
	for i := 1; i <= 18; i++ {
		fmt.Fprintf(&b, "a>b%02d b%02d>z ", i, i)
	}
	return spec(policy, b.String())
}

// layered builds layers×width nodes; each node of a layer after the first
// waits for 3 nodes of the layer before (deterministically spread), so
// the graph has layers layers and width×3 edges per layer pair.
func layered(layers, width int) Definition {
	d := Definition{Name: "big", App: "app", FailurePolicy: Continue}
	key := func(l, i int) string { return fmt.Sprintf("n%d_%d", l, i) }
	for l := range layers {
		for i := range width {
			d.Nodes = append(d.Nodes, Node{Key: key(l, i), Handler: "noop"})
			if l == 0 {
				continue
			}
			for _, p := range []int{i, (i + 1) % width, (i + 37) % width} {
				d.Edges = append(d.Edges, Edge{From: key(l-1, p), To: key(l, i)})
			}
		}
	}
	return d
}

// states builds a state map from "a=succeeded b=failed".
func states(s string) map[string]State {
	out := map[string]State{}
	for _, w := range strings.Fields(s) {
		k, v, _ := strings.Cut(w, "=")
		out[k] = State(v)
	}
	return out
}

// requireTopological checks that order is a permutation of the graph's keys
// in which every edge goes forward.
func requireTopological(t testing.TB, g *Graph, order []string) {
	t.Helper()
	at := map[string]int{}
	for i, k := range order {
		_, dup := at[k]
		require.False(t, dup, "key %s twice in the order", k)
		at[k] = i
	}
	require.Len(t, at, len(g.def.Nodes))
	for _, e := range g.def.Edges {
		require.Less(t, at[e.From], at[e.To], "edge %s → %s goes backwards", e.From, e.To)
	}
}
