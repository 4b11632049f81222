package workflow

import (
	"cmp"
	"slices"
)

// Layout bounds.
const (
	// LayoutSweeps is how many times the crossing reduction sweeps down and
	// up the layers; the order with the fewest crossings seen is kept.
	LayoutSweeps = 4
	// MaxLayoutBends bounds the bend points of all edges together (one per
	// layer an edge crosses). Edges beyond the budget, in edge order, are
	// drawn straight from node to node, so a 2,000-node graph of long edges
	// still lays out in bounded time and memory.
	MaxLayoutBends = 50000
)

// Point is a position in grid units: X is a layer, Y a row.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Placed is a node's place in a Layout.
type Placed struct {
	Key   string `json:"key"`
	Layer int    `json:"layer"` // = X
	Row   int    `json:"row"`   // its order in the layer, bend points included
	Point
}

// Route is an edge's polyline: from its parent's point to its child's, with
// a bend point in each layer between them.
type Route struct {
	From   string  `json:"from"`
	To     string  `json:"to"`
	Points []Point `json:"points"`
}

// Layout is a layered drawing of the graph for the console, in grid units
// (the console scales them): a node's X is its layer (Graph.Layer), its Y
// its row in the layer, each layer centred on the widest one.
type Layout struct {
	Layers int      `json:"layers"`
	Rows   int      `json:"rows"`  // the widest layer, bend points included
	Nodes  []Placed `json:"nodes"` // in definition order
	Edges  []Route  `json:"edges"` // in definition order
	// Crossings is the number of edge crossings between adjacent layers in
	// the order chosen.
	Crossings int `json:"crossings"`
}

// Layout lays the graph out in layers (Sugiyama's scheme): layers by the
// longest path from a root, a bend point wherever an edge crosses a layer
// (at most MaxLayoutBends in all), then crossing reduction — starting from
// the topological order, LayoutSweeps sweeps down and up the layers, each
// layer sorted by the barycenter of its neighbours' rows in the layer just
// placed (ties keep their order), keeping the order with the fewest
// crossings. Deterministic; O(V'·log V' + E') per sweep, V' and E' the
// nodes and edges with the bend points.
func (g *Graph) Layout() Layout {
	n := len(g.order)
	// Layout vertices: the nodes (0..n-1), then bend points.
	layerOf := make([]int32, n, n+1024)
	copy(layerOf, g.layer)
	up := make([][]int32, n, n+1024)   // neighbours in earlier layers
	down := make([][]int32, n, n+1024) // neighbours in later layers
	chains := make([][]int32, len(g.def.Edges))
	budget := MaxLayoutBends
	for i, e := range g.def.Edges {
		u, v := g.index[e.From], g.index[e.To]
		chain := []int32{u}
		if span := int(g.layer[v] - g.layer[u]); span > 1 && span-1 <= budget {
			budget -= span - 1
			for l := g.layer[u] + 1; l < g.layer[v]; l++ {
				b := int32(len(layerOf))
				layerOf = append(layerOf, l)
				up, down = append(up, nil), append(down, nil)
				chain = append(chain, b)
			}
		}
		chain = append(chain, v)
		for k := 1; k < len(chain); k++ {
			a, b := chain[k-1], chain[k]
			down[a] = append(down[a], b)
			up[b] = append(up[b], a)
		}
		chains[i] = chain
	}
	// The first order: nodes in topological order, then bend points in
	// edge order.
	layers := make([][]int32, g.layers)
	for _, v := range g.order {
		layers[g.layer[v]] = append(layers[g.layer[v]], v)
	}
	for b := n; b < len(layerOf); b++ {
		layers[layerOf[b]] = append(layers[layerOf[b]], int32(b))
	}
	pos := make([]float64, len(layerOf))
	place := func() {
		for _, layer := range layers {
			for i, x := range layer {
				pos[x] = float64(i)
			}
		}
	}
	place()
	best, bestCrossings := cloneLayers(layers), crossings(layers, down, pos, layerOf)
	bary := make([]float64, len(layerOf))
	sortLayer := func(layer []int32, nb [][]int32) {
		for _, x := range layer {
			bary[x] = pos[x]
			if len(nb[x]) > 0 {
				sum := 0.0
				for _, y := range nb[x] {
					sum += pos[y]
				}
				bary[x] = sum / float64(len(nb[x]))
			}
		}
		slices.SortStableFunc(layer, func(a, b int32) int { return cmp.Compare(bary[a], bary[b]) })
		for i, x := range layer {
			pos[x] = float64(i)
		}
	}
	for range LayoutSweeps {
		for l := 1; l < len(layers); l++ {
			sortLayer(layers[l], up)
		}
		for l := len(layers) - 2; l >= 0; l-- {
			sortLayer(layers[l], down)
		}
		if c := crossings(layers, down, pos, layerOf); c < bestCrossings {
			best, bestCrossings = cloneLayers(layers), c
		}
	}
	layers = best
	place()
	out := Layout{Layers: len(layers), Crossings: bestCrossings}
	for _, layer := range layers {
		out.Rows = max(out.Rows, len(layer))
	}
	point := func(x int32) Point {
		size := len(layers[layerOf[x]])
		return Point{X: float64(layerOf[x]), Y: pos[x] + float64(out.Rows-size)/2}
	}
	out.Nodes = make([]Placed, n)
	for v := range n {
		out.Nodes[v] = Placed{Key: g.def.Nodes[v].Key, Layer: int(g.layer[v]), Row: int(pos[v]), Point: point(int32(v))}
	}
	out.Edges = make([]Route, len(g.def.Edges))
	for i, e := range g.def.Edges {
		pts := make([]Point, len(chains[i]))
		for k, x := range chains[i] {
			pts[k] = point(x)
		}
		out.Edges[i] = Route{From: e.From, To: e.To, Points: pts}
	}
	return out
}

func cloneLayers(layers [][]int32) [][]int32 {
	out := make([][]int32, len(layers))
	for i, l := range layers {
		out[i] = slices.Clone(l)
	}
	return out
}

// crossings counts the crossings of the segments between adjacent layers:
// per pair of layers, the segments sorted by their upper row then lower
// row, and the inversions among their lower rows counted with a Fenwick
// tree. O(E'·log V'). Segments over more than one layer (edges beyond the
// bend budget) are not counted.
func crossings(layers [][]int32, down [][]int32, pos []float64, layerOf []int32) int {
	total := 0
	var lower []int
	var tree []int
	for l := 0; l+1 < len(layers); l++ {
		lower = lower[:0]
		for _, x := range layers[l] { // in row order: pos[x] rises
			start := len(lower)
			for _, y := range down[x] {
				if layerOf[y] == int32(l+1) {
					lower = append(lower, int(pos[y]))
				}
			}
			slices.Sort(lower[start:])
		}
		size := len(layers[l+1])
		tree = slices.Grow(tree[:0], size+1)[:size+1]
		clear(tree)
		// Inversions: for each segment, the earlier ones with a greater
		// lower row.
		for i, r := range lower {
			le := 0 // earlier segments with lower row ≤ r
			for k := r + 1; k > 0; k -= k & -k {
				le += tree[k]
			}
			total += i - le
			for k := r + 1; k <= size; k += k & -k {
				tree[k]++
			}
		}
	}
	return total
}
