package workflow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTopology(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		spec          string
		order         []string
		layers        [][]string
		roots, leaves []string
	}{
		{"one node", "a", []string{"a"}, [][]string{{"a"}}, []string{"a"}, []string{"a"}},
		{"diamond", "a>b a>c b>d c>d", []string{"a", "b", "c", "d"}, [][]string{{"a"}, {"b", "c"}, {"d"}}, []string{"a"}, []string{"d"}},
		{"definition order kept where it is topological", "x y a>b", []string{"x", "y", "a", "b"}, [][]string{{"x", "y", "a"}, {"b"}},
			[]string{"x", "y", "a"}, []string{"x", "y", "b"}},
		{"a child defined before its parent", "b c a>b", []string{"c", "a", "b"}, [][]string{{"c", "a"}, {"b"}}, []string{"c", "a"}, []string{"c", "b"}},
		{"layer is the longest path", "a>b b>c a>c c>d a>d", []string{"a", "b", "c", "d"}, [][]string{{"a"}, {"b"}, {"c"}, {"d"}},
			[]string{"a"}, []string{"d"}},
		{"ties by definition order, not by name", "z>m y>m m>a", []string{"z", "y", "m", "a"}, [][]string{{"z", "y"}, {"m"}, {"a"}},
			[]string{"z", "y"}, []string{"a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := mustGraph(t, spec("", c.spec))
			require.Equal(t, c.order, g.Order())
			requireTopological(t, g, g.Order())
			require.Equal(t, c.layers, g.Layers())
			require.Equal(t, c.roots, g.Roots())
			require.Equal(t, c.leaves, g.Leaves())
			for l, keys := range c.layers {
				for _, k := range keys {
					require.Equal(t, l, g.Layer(k))
				}
			}
		})
	}
}

func TestNeighbours(t *testing.T) {
	t.Parallel()
	g := mustGraph(t, spec("", "a>c b>c c>d c>e e>f x"))
	require.Equal(t, []string{"a", "b"}, g.Parents("c"))
	require.Equal(t, []string{"d", "e"}, g.Children("c"))
	require.Empty(t, g.Parents("a"))
	require.Nil(t, g.Parents("nope"))
	require.Nil(t, g.Children("nope"))
	require.Equal(t, -1, g.Layer("nope"))
	require.Equal(t, []string{"c", "d", "e", "f"}, g.Downstream("c"))
	require.Equal(t, []string{"b", "c", "d", "e", "f"}, g.Downstream("e", "b", "nope", "b"))
	require.Empty(t, g.Downstream("nope"))
	require.True(t, g.Has("x"))
	require.False(t, g.Has("y"))
	n, ok := g.Node("x")
	require.True(t, ok)
	require.Equal(t, Node{Key: "x", Handler: "noop", SlotCount: 1, Start: AllSuccess}, n)
	_, ok = g.Node("y")
	require.False(t, ok)
	require.Equal(t, Stop, g.Definition().FailurePolicy)
}

func TestCriticalPath(t *testing.T) {
	t.Parallel()
	s := time.Second
	cases := []struct {
		name      string
		spec      string
		durations map[string]time.Duration
		length    time.Duration
		path      []string
	}{
		{"chain", "a>b b>c", map[string]time.Duration{"a": s, "b": 2 * s, "c": 3 * s}, 6 * s, []string{"a", "b", "c"}},
		{"the longer branch of a diamond", "a>b a>c b>d c>d", map[string]time.Duration{"a": s, "b": 5 * s, "c": 2 * s, "d": s},
			7 * s, []string{"a", "b", "d"}},
		{"the heavier of two chains", "a>b c>d", map[string]time.Duration{"a": s, "b": s, "c": 3 * s}, 3 * s, []string{"c", "d"}},
		{"missing and negative durations count 0", "a>b b>c", map[string]time.Duration{"a": -s, "c": s}, s, []string{"a", "b", "c"}},
		{"ties go to the node first in order", "a>c b>c", map[string]time.Duration{"a": s, "b": s, "c": s}, 2 * s, []string{"a", "c"}},
		{"no durations: a path from a root to a leaf", "a>b b>c x", nil, 0, []string{"a", "b", "c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := mustGraph(t, spec("", c.spec))
			length, path := g.CriticalPath(c.durations)
			require.Equal(t, c.length, length)
			require.Equal(t, c.path, path)
		})
	}
}

func TestTopologyLarge(t *testing.T) {
	t.Parallel()
	g := mustGraph(t, diamond20(Stop))
	require.Equal(t, 3, len(g.Layers()))
	require.Len(t, g.Layers()[1], 18)
	require.Equal(t, []string{"a"}, g.Roots())
	require.Equal(t, []string{"z"}, g.Leaves())
	requireTopological(t, g, g.Order())

	g = mustGraph(t, layered(10, 100))
	layers := g.Layers()
	require.Len(t, layers, 10)
	for _, l := range layers {
		require.Len(t, l, 100)
	}
	requireTopological(t, g, g.Order())
	d := map[string]time.Duration{}
	for _, k := range g.Order() {
		d[k] = time.Millisecond
	}
	length, path := g.CriticalPath(d)
	require.Equal(t, 10*time.Millisecond, length)
	require.Len(t, path, 10)
}
