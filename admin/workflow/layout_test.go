package workflow

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLayoutSmall(t *testing.T) {
	t.Parallel()
	l := mustGraph(t, spec("", "a>b b>c")).Layout()
	require.Equal(t, Layout{Layers: 3, Rows: 1, Nodes: []Placed{
		{Key: "a", Layer: 0, Row: 0, Point: Point{0, 0}},
		{Key: "b", Layer: 1, Row: 0, Point: Point{1, 0}},
		{Key: "c", Layer: 2, Row: 0, Point: Point{2, 0}},
	}, Edges: []Route{
		{From: "a", To: "b", Points: []Point{{0, 0}, {1, 0}}},
		{From: "b", To: "c", Points: []Point{{1, 0}, {2, 0}}},
	}}, l)

	// x → q and y → p cross in the first order (p, q by definition); the
	// barycenter sweep swaps p and q.
	l = mustGraph(t, spec("", "x y p q x>q y>p")).Layout()
	require.Zero(t, l.Crossings)
	require.Equal(t, []Placed{
		{Key: "x", Layer: 0, Row: 0, Point: Point{0, 0}},
		{Key: "y", Layer: 0, Row: 1, Point: Point{0, 1}},
		{Key: "p", Layer: 1, Row: 1, Point: Point{1, 1}},
		{Key: "q", Layer: 1, Row: 0, Point: Point{1, 0}},
	}, l.Nodes)

	// A long edge bends in every layer it crosses; a narrow layer is
	// centred on the widest.
	l = mustGraph(t, spec("", "a>b b>c a>c")).Layout()
	require.Equal(t, 2, l.Rows, "b and the bend point of a → c")
	require.Equal(t, Point{0, 0.5}, l.Nodes[0].Point)
	require.Len(t, l.Edges[2].Points, 3)
	require.Equal(t, []float64{0, 1, 2}, []float64{l.Edges[2].Points[0].X, l.Edges[2].Points[1].X, l.Edges[2].Points[2].X})
	require.Zero(t, l.Crossings)
}

// requireLayout checks a layout against its graph: every node placed once,
// at its layer, rows unique per layer, every route from its parent's point
// to its child's with one point per layer, or straight.
func requireLayout(t testing.TB, g *Graph, l Layout) {
	t.Helper()
	require.Len(t, l.Nodes, g.Len())
	at := map[string]Point{}
	cells := map[[2]int]bool{}
	for i, p := range l.Nodes {
		require.Equal(t, g.def.Nodes[i].Key, p.Key)
		require.Equal(t, g.Layer(p.Key), p.Layer)
		require.Equal(t, float64(p.Layer), p.X)
		require.False(t, cells[[2]int{p.Layer, p.Row}], "two nodes at layer %d row %d", p.Layer, p.Row)
		cells[[2]int{p.Layer, p.Row}] = true
		require.True(t, p.Row >= 0 && p.Row < l.Rows && p.Y >= 0 && p.Y <= float64(l.Rows-1), "%+v", p)
		at[p.Key] = p.Point
	}
	require.Len(t, l.Edges, len(g.def.Edges))
	bends := 0
	for i, r := range l.Edges {
		e := g.def.Edges[i]
		require.Equal(t, e.From, r.From)
		require.Equal(t, e.To, r.To)
		require.Equal(t, at[e.From], r.Points[0])
		require.Equal(t, at[e.To], r.Points[len(r.Points)-1])
		if len(r.Points) > 2 {
			bends += len(r.Points) - 2
			for k := 1; k < len(r.Points); k++ {
				require.Equal(t, r.Points[k-1].X+1, r.Points[k].X, "one point per layer")
			}
		}
	}
	require.LessOrEqual(t, bends, MaxLayoutBends)
}

func TestLayoutLarge(t *testing.T) {
	t.Parallel()
	g := mustGraph(t, diamond20(Stop))
	l := g.Layout()
	requireLayout(t, g, l)
	require.Equal(t, 18, l.Rows)
	require.Zero(t, l.Crossings)
	require.Equal(t, Point{0, 8.5}, l.Nodes[0].Point, "a centred")

	g = mustGraph(t, layered(10, 100))
	l = g.Layout()
	requireLayout(t, g, l)
	require.Equal(t, l, g.Layout(), "deterministic")
	// The crossing reduction keeps the best order, the first one included.
	layers := make([][]int32, g.layers)
	for _, v := range g.order {
		layers[g.layer[v]] = append(layers[g.layer[v]], v)
	}
	pos := make([]float64, g.Len())
	for _, layer := range layers {
		for i, v := range layer {
			pos[v] = float64(i)
		}
	}
	first := crossings(layers, g.children, pos, g.layer)
	t.Logf("1,000-node layered DAG: %d crossings in the first order, %d after the sweeps", first, l.Crossings)
	require.LessOrEqual(t, l.Crossings, first)
}

// The bend budget: a 2,000-node chain with an edge from its head to every
// node has 2 million layer crossings; the edges beyond the budget are
// straight and the layout stays bounded.
func TestLayoutBendBudget(t *testing.T) {
	t.Parallel()
	g := mustGraph(t, chainFan(MaxNodes))
	l := g.Layout()
	requireLayout(t, g, l)
	straight := 0
	for _, r := range l.Edges {
		if len(r.Points) == 2 && r.Points[1].X-r.Points[0].X > 1 {
			straight++
		}
	}
	require.Positive(t, straight, "some long edges are drawn straight")
}

// chainFan is a chain of n nodes with an edge from its head to every node:
// the longest edges a graph of n nodes can have.
func chainFan(n int) Definition {
	d := Definition{Name: "w", App: "a"}
	for i := range n {
		d.Nodes = append(d.Nodes, Node{Key: fmt.Sprintf("n%d", i), Handler: "h"})
		if i > 0 {
			d.Edges = append(d.Edges, Edge{From: fmt.Sprintf("n%d", i-1), To: fmt.Sprintf("n%d", i)})
		}
		if i > 1 {
			d.Edges = append(d.Edges, Edge{From: "n0", To: fmt.Sprintf("n%d", i)})
		}
	}
	return d
}
