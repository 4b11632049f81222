package workflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardjob/shardjob/sdk/names"
)

// fuzzKeys are the keys a fuzzed definition draws from: duplicates and
// invalid keys included.
var fuzzKeys = []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "a", "-x", "", "k.l"}

// fuzzDefinition turns bytes into a definition: the first byte the node
// count and the policy, then a byte per node (key, start rule), then pairs
// of bytes as edges (keys from the same pool, so unknown ones too).
func fuzzDefinition(data []byte) Definition {
	d := Definition{Name: "f", App: "app", FailurePolicy: Continue}
	if len(data) == 0 {
		return d
	}
	if data[0]&0x80 != 0 {
		d.FailurePolicy = Stop
	}
	n := int(data[0]&0x0f) % 13
	data = data[1:]
	rules := []StartRule{"", AllSuccess, AllDone, OneSuccess}
	for i := 0; i < n && len(data) > 0; i++ {
		b := data[0]
		data = data[1:]
		d.Nodes = append(d.Nodes, Node{Key: fuzzKeys[int(b)%len(fuzzKeys)], Handler: "h", Start: rules[int(b>>4)%len(rules)]})
	}
	for len(data) >= 2 {
		d.Edges = append(d.Edges, Edge{From: fuzzKeys[int(data[0])%len(fuzzKeys)], To: fuzzKeys[int(data[1])%len(fuzzKeys)]})
		data = data[2:]
	}
	return d
}

// hasCycle is a plain O(V·E) check, independent of Validate: the edges
// between known, distinct nodes (first node of a duplicated key) have a
// cycle when peeling off nodes without incoming edges leaves some. A node
// with an invalid key has no edges (they are errors of their own).
func hasCycle(d Definition) bool {
	known := map[string]bool{}
	for _, n := range d.Nodes {
		known[n.Key] = names.Valid(n.Key)
	}
	edges := map[Edge]bool{}
	for _, e := range d.Edges {
		if known[e.From] && known[e.To] && e.From != e.To {
			edges[e] = true
		}
	}
	left := known
	for {
		removed := false
		for k := range left {
			incoming := false
			for e := range edges {
				if e.To == k && left[e.From] {
					incoming = true
					break
				}
			}
			if !incoming {
				delete(left, k)
				removed = true
			}
		}
		if !removed {
			return len(left) > 0
		}
	}
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte{4, 0, 1, 2, 3, 0, 1, 1, 2, 2, 3})             // a chain
	f.Add([]byte{3, 0, 1, 2, 0, 1, 1, 2, 2, 0})                // a cycle
	f.Add([]byte{0x85, 0, 1, 2, 3, 4, 0, 1, 0, 2, 1, 3, 2, 3}) // a diamond and a lone node, stop
	f.Add([]byte{3, 0, 10, 11, 0, 0, 0, 12})                   // duplicate and bad keys, self-edge, unknown endpoint
	f.Add([]byte{6, 0x20, 0x31, 2, 3, 4, 5, 0, 1, 1, 2, 2, 3, 3, 1, 4, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := fuzzDefinition(data)
		g, err := Validate(d)
		if err != nil {
			var fe FieldErrors
			if !errors.As(err, &fe) || len(fe) == 0 {
				t.Fatalf("Validate returned %T %v, want FieldErrors", err, err)
			}
			if msg, ok := strings.CutPrefix(fe["edges"], "a cycle: "); ok {
				checkCycle(t, d, strings.TrimSuffix(msg, " (remove one of its edges)"))
			} else if hasCycle(d) && len(d.Nodes) > 0 && len(d.Nodes) <= MaxNodes {
				t.Fatalf("a cycle not reported: %+v: %v", d, err)
			}
			return
		}
		if hasCycle(d) {
			t.Fatalf("a cycle accepted: %+v", d)
		}
		requireTopological(t, g, g.Order())
		for _, e := range d.Edges {
			if g.Layer(e.From) >= g.Layer(e.To) {
				t.Fatalf("edge %s → %s does not go to a later layer", e.From, e.To)
			}
		}
		requireLayout(t, g, g.Layout())
		// A whole run, nodes ending by the bits of the input: it ends,
		// every node starts at most once, every decision is idempotent.
		st := map[string]State{}
		started := map[string]bool{}
		for step := 0; ; step++ {
			if step > 3*g.Len()+3 {
				t.Fatalf("the run does not end: %v", st)
			}
			dec := g.Decide(st)
			for _, k := range dec.Ready {
				if started[k] {
					t.Fatalf("%s started twice", k)
				}
				started[k] = true
			}
			st = dec.Apply(st)
			if again := g.Decide(st); !again.Empty() && !again.Finished {
				t.Fatalf("a second decision is not empty: %+v", again)
			}
			if dec.Finished {
				break
			}
			for _, k := range g.Order() {
				if st[k] == Running {
					st[k] = []State{Succeeded, Failed, Succeeded, Cancelled}[(step+len(data))%4]
					break
				}
			}
		}
		// A rerun from one node, chosen by the input: refused with one of
		// its errors, or its nodes pending and none of them skipped by the
		// first decision; refused again once decided on.
		from := g.Order()[len(data)%g.Len()]
		plan, err := g.Rerun(st, from)
		if err != nil {
			if !errors.Is(err, ErrRerunBlocked) {
				t.Fatalf("rerun from %s: %v", from, err)
			}
			return
		}
		if plan.Nodes[0] != from || plan.States[from] != Pending {
			t.Fatalf("rerun from %s: %+v", from, plan)
		}
		for _, k := range plan.Nodes {
			if plan.States[k] != Pending {
				t.Fatalf("rerun from %s: %s is %s", from, k, plan.States[k])
			}
		}
		dec := g.Decide(plan.States)
		for _, s := range dec.Skip {
			if s.Key == from {
				t.Fatalf("rerun from %s: skipped at once: %+v", from, s)
			}
		}
		if dec.Finished {
			t.Fatalf("rerun from %s: finished at once", from)
		}
		if _, err := g.Rerun(dec.Apply(plan.States), from); !errors.Is(err, ErrNotFinished) {
			t.Fatalf("a second rerun from %s: %v", from, err)
		}
	})
}

// checkCycle checks that "a → b → a" is a real cycle of d's edges.
func checkCycle(t *testing.T, d Definition, cycle string) {
	t.Helper()
	keys := strings.Split(cycle, " → ")
	if len(keys) < 3 || keys[0] != keys[len(keys)-1] {
		t.Fatalf("not a closed cycle: %q", cycle)
	}
	seen := map[string]bool{}
	for _, k := range keys[1:] {
		if seen[k] {
			t.Fatalf("cycle %q passes %s twice", cycle, k)
		}
		seen[k] = true
	}
	edges := map[Edge]bool{}
	for _, e := range d.Edges {
		edges[e] = true
	}
	for i := 1; i < len(keys); i++ {
		if !edges[Edge{From: keys[i-1], To: keys[i]}] {
			t.Fatalf("cycle %q: no edge %s → %s in %+v", cycle, keys[i-1], keys[i], d.Edges)
		}
	}
}
