package workflow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/waits"
	"github.com/shardjob/shardjob/sdk/names"
)

func TestLimitsMatchJobs(t *testing.T) {
	t.Parallel()
	require.Equal(t, jobdef.MaxSlots, MaxSlots)
	require.Equal(t, jobdef.MaxParamsBytes, MaxParamsBytes)
	require.GreaterOrEqual(t, MaxNodes, 1000, "the benchmark of issue 22 runs a 1,000-node DAG")
	require.Equal(t, store.RunSucceeded, string(RunSucceeded))
	require.Equal(t, store.RunFailed, string(RunFailed))
	require.Equal(t, store.RunPartiallyFailed, string(RunPartiallyFailed))
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	d := Definition{Nodes: []Node{{Key: "a", Handler: "h"}, {Key: "b", Job: &JobRef{Name: "j"}, Start: AllDone}}}
	got := d.WithDefaults()
	require.Equal(t, Stop, got.FailurePolicy)
	require.Equal(t, AllSuccess, got.Nodes[0].Start)
	require.Equal(t, 1, got.Nodes[0].SlotCount)
	require.Equal(t, AllDone, got.Nodes[1].Start)
	require.Zero(t, got.Nodes[1].SlotCount, "a job runs with its own slots")
	got.Nodes[1].Job.Name = "changed"
	require.Equal(t, "j", d.Nodes[1].Job.Name, "the definition is not changed")
	require.Empty(t, d.FailurePolicy)
}

func TestValidateFieldErrors(t *testing.T) {
	t.Parallel()
	rule := "required; " + names.Rule
	cases := []struct {
		name string
		edit func(d *Definition)
		want FieldErrors
	}{
		{"valid", func(*Definition) {}, FieldErrors{}},
		{"name and app", func(d *Definition) { d.Name, d.App = "", "a b" }, FieldErrors{"name": rule, "app": `"a b" is not a valid name: use ` + names.Rule}},
		{"failure policy", func(d *Definition) { d.FailurePolicy = "halt" },
			FieldErrors{"failure_policy": `"halt" is not a failure policy: stop (default) or continue`}},
		{"no nodes", func(d *Definition) { d.Nodes, d.Edges = nil, nil }, FieldErrors{"nodes": "at least one node is required"}},
		{"bad key", func(d *Definition) { d.Nodes[1].Key = "-b" }, FieldErrors{
			"nodes[1].key": `"-b" is not a valid name: use ` + names.Rule, "edges[0].to": `"b" is not the key of a node`, "edges[2].from": `"b" is not the key of a node`}},
		{"duplicate key", func(d *Definition) { d.Nodes[2].Key = "b" }, FieldErrors{
			"nodes[2].key": `"b" is the key of nodes[1] already`, "edges[1].to": `"c" is not the key of a node`, "edges[3].from": `"c" is not the key of a node`}},
		{"unknown endpoints", func(d *Definition) { d.Edges[0].From, d.Edges[3].To = "x", "" }, FieldErrors{
			"edges[0].from": `"x" is not the key of a node`, "edges[3].to": "required: the key of a node"}},
		{"self-edge", func(d *Definition) { d.Edges = append(d.Edges, Edge{From: "c", To: "c"}) },
			FieldErrors{"edges[4]": "an edge from c to itself: a node cannot wait for itself"}},
		{"duplicate edge", func(d *Definition) { d.Edges = append(d.Edges, Edge{From: "a", To: "c"}) },
			FieldErrors{"edges[4]": "a → c is edges[1] already"}},
		{"start rule", func(d *Definition) { d.Nodes[3].Start = "any_success" },
			FieldErrors{"nodes[3].start": `"any_success" is not a start rule: all_success (default), all_done or one_success`}},
		{"neither job nor handler", func(d *Definition) { d.Nodes[0].Handler = "" }, FieldErrors{
			"nodes[0].handler": "a job or an inline handler is required: the name a handler is registered under on the executors (no spaces or commas, at most 128 characters)"}},
		{"handler with a space", func(d *Definition) { d.Nodes[0].Handler = "a b" }, FieldErrors{
			"nodes[0].handler": "a job or an inline handler is required: the name a handler is registered under on the executors (no spaces or commas, at most 128 characters)"}},
		{"job and handler", func(d *Definition) { d.Nodes[0].Job = &JobRef{Name: "load"} },
			FieldErrors{"nodes[0].handler": "a node runs a job or an inline handler, not both"}},
		{"job with params and slots", func(d *Definition) { d.Nodes[0] = Node{Key: "a", Job: &JobRef{ID: 7}, Params: "{}", SlotCount: 2} }, FieldErrors{
			"nodes[0].params": "only for an inline handler: a job runs with its own params",
			"nodes[0].slots":  "only for an inline handler: a job runs with its own slots"}},
		{"job by id and name", func(d *Definition) { d.Nodes[0] = Node{Key: "a", Job: &JobRef{ID: 7, Name: "x"}} },
			FieldErrors{"nodes[0].job": "a job by id or by name (and app), not both"}},
		{"job without id or name", func(d *Definition) { d.Nodes[0] = Node{Key: "a", Job: &JobRef{}} },
			FieldErrors{"nodes[0].job": "a job id, or a job name: " + names.Rule}},
		{"negative job id", func(d *Definition) { d.Nodes[0] = Node{Key: "a", Job: &JobRef{ID: -1}} },
			FieldErrors{"nodes[0].job": "id -1: a job id is positive"}},
		{"job in a bad app", func(d *Definition) { d.Nodes[0] = Node{Key: "a", Job: &JobRef{Name: "x", App: "b/c"}} },
			FieldErrors{"nodes[0].job": "app: " + names.Rule}},
		{"slots", func(d *Definition) { d.Nodes[1].SlotCount = MaxSlots + 1 }, FieldErrors{"nodes[1].slots": "1025 is outside 1-1024"}},
		{"inline retries and timeout", func(d *Definition) {
			d.Nodes[1].RetryMax, d.Nodes[1].RetryBackoffMS, d.Nodes[1].TimeoutMS = MaxRetries+1, -1, -5
		}, FieldErrors{"nodes[1].retry_max": "101 is outside 0-100", "nodes[1].retry_backoff_ms": "milliseconds, 0 or more",
			"nodes[1].timeout_ms": "milliseconds, 0 (none) or more"}},
		{"inline retries and timeout in range", func(d *Definition) {
			d.Nodes[1].RetryMax, d.Nodes[1].RetryBackoffMS, d.Nodes[1].TimeoutMS = MaxRetries, 500, 60000
		}, FieldErrors{}},
		{"a job node's retries and timeout are its job's", func(d *Definition) {
			d.Nodes[0] = Node{Key: "a", Job: &JobRef{ID: 7}, RetryMax: 2, RetryBackoffMS: 10, TimeoutMS: 5}
		}, FieldErrors{
			"nodes[0].retry_max":        "only for an inline handler: a job runs with its own retry_max",
			"nodes[0].retry_backoff_ms": "only for an inline handler: a job runs with its own retry_backoff_ms",
			"nodes[0].timeout_ms":       "only for an inline handler: a job runs with its own timeout_ms"}},
		{"params", func(d *Definition) { d.Nodes[1].Params = strings.Repeat("x", MaxParamsBytes+1) },
			FieldErrors{"nodes[1].params": "at most 65536 bytes"}},
		{"params of all nodes", func(d *Definition) {
			for i := range 17 {
				d.Nodes = append(d.Nodes, Node{Key: fmt.Sprintf("p%d", i), Handler: "h", Params: strings.Repeat("x", MaxParamsBytes)})
			}
		}, FieldErrors{"nodes": "the inline params of all nodes take 1114112 bytes: at most 1048576 together"}},
		{"a cycle besides other errors", func(d *Definition) {
			d.Name = ""
			d.Edges = append(d.Edges, Edge{From: "d", To: "a"}, Edge{From: "d", To: "q"})
		}, FieldErrors{"name": rule, "edges": "a cycle: a → b → d → a (remove one of its edges)", "edges[5].to": `"q" is not the key of a node`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := spec("", "a>b a>c b>d c>d")
			c.edit(&d)
			g, err := Validate(d)
			if len(c.want) == 0 {
				require.NoError(t, err)
				require.NotNil(t, g)
				return
			}
			require.Nil(t, g)
			var fe FieldErrors
			require.ErrorAs(t, err, &fe)
			require.Equal(t, c.want, fe)
			require.True(t, strings.HasPrefix(err.Error(), "invalid workflow: "), err.Error())
		})
	}
}

func TestValidateCycles(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, spec, cycle string }{
		{"three nodes", "a>b b>c c>a", "a → b → c → a"},
		{"two nodes", "a>b b>a", "a → b → a"},
		{"not through the first node", "x>a a>b b>c c>a", "a → b → c → a"},
		{"found from a later root", "r s>a a>b b>s", "s → a → b → s"},
		{"the first of two, by node order", "a>b b>a c>d d>c", "a → b → a"},
		{"the first edge out of a node first", "a>b a>c b>d d>b c>e e>c", "b → d → b"},
		{"a cycle behind a diamond", "a>b a>c b>d c>d d>e e>c", "d → e → c → d"},
		{"a long cycle", "n1>n2 n2>n3 n3>n4 n4>n5 n5>n6 n6>n1", "n1 → n2 → n3 → n4 → n5 → n6 → n1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Validate(spec(Continue, c.spec))
			var fe FieldErrors
			require.ErrorAs(t, err, &fe)
			require.Equal(t, FieldErrors{"edges": "a cycle: " + c.cycle + " (remove one of its edges)"}, fe)
			// The same definition names the same cycle every time.
			_, again := Validate(spec(Continue, c.spec))
			require.Equal(t, err, again)
		})
	}
}

func TestValidateLimits(t *testing.T) {
	t.Parallel()
	chain := func(n int) Definition {
		d := Definition{Name: "w", App: "a"}
		for i := range n {
			d.Nodes = append(d.Nodes, Node{Key: fmt.Sprintf("n%d", i), Handler: "h"})
			if i > 0 {
				d.Edges = append(d.Edges, Edge{From: fmt.Sprintf("n%d", i-1), To: fmt.Sprintf("n%d", i)})
			}
		}
		return d
	}
	g := mustGraph(t, chain(MaxNodes))
	require.Equal(t, MaxNodes, g.Len())
	require.Len(t, g.Layers(), MaxNodes, "a chain has a layer per node")

	_, err := Validate(chain(MaxNodes + 1))
	require.Equal(t, FieldErrors{"nodes": "2001 nodes: at most 2000"}, err)

	d := layered(10, 100) // 2,700 edges
	for len(d.Edges) <= MaxEdges {
		d.Edges = append(d.Edges, d.Edges...)
	}
	_, err = Validate(d)
	require.Equal(t, FieldErrors{"edges": fmt.Sprintf("%d edges: at most %d", len(d.Edges), MaxEdges)}, err)

	// Saving a workflow looks up what it waits for and the apps it
	// reaches: both are bounded, so that one request is not thousands of
	// queries.
	wide := func(perNode int, app func(node, wait int) string) Definition {
		d := Definition{Name: "w", App: "a"}
		for i := range 100 {
			n := Node{Key: fmt.Sprintf("n%d", i), Handler: "h"}
			for j := range perNode {
				n.WaitFor = append(n.WaitFor, WaitRef{Job: &waits.NameRef{App: app(i, j), Name: fmt.Sprintf("j%d-%d", i, j)}})
			}
			d.Nodes = append(d.Nodes, n)
		}
		return d
	}
	_, err = Validate(wide(2, func(int, int) string { return "" })) // 200 distinct jobs of its own app
	require.Nil(t, err)
	_, err = Validate(wide(3, func(int, int) string { return "" }))
	require.Equal(t, FieldErrors{"nodes": "the nodes wait for 300 distinct jobs and workflows together: at most 200"}, err)
	_, err = Validate(wide(1, func(i, _ int) string { return fmt.Sprintf("app%d", i%21) }))
	require.Equal(t, FieldErrors{"nodes": "the nodes run jobs of or wait in 21 other apps: at most 20"}, err)
}
