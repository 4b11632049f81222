package workflow

import (
	"fmt"
	"testing"
)

// The 1,000-node layered DAG of issue 22's benchmark: 10 layers of 100
// nodes, each waiting for 3 nodes of the layer before (2,700 edges).

func BenchmarkValidate(b *testing.B) {
	d := layered(10, 100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Validate(d); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/node")
}

// BenchmarkDecide is one ready-decision pass in the middle of a run: 6
// layers succeeded, so the 100 nodes of the seventh become ready, and 300
// stay pending.
func BenchmarkDecide(b *testing.B) {
	g := mustGraph(b, layered(10, 100))
	st := map[string]State{}
	for l := range 6 {
		for i := range 100 {
			st[fmt.Sprintf("n%d_%d", l, i)] = Succeeded
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if d := g.Decide(st); len(d.Ready) != 100 {
			b.Fatalf("%d ready", len(d.Ready))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/node")
}

// BenchmarkDecideRun is a whole run of the 1,000-node DAG decided node by
// node: a decision after every node that ends (1,000 decisions), what the
// scheduler does at the worst when each result arrives alone.
func BenchmarkDecideRun(b *testing.B) {
	g := mustGraph(b, layered(10, 100))
	b.ReportAllocs()
	for b.Loop() {
		st := make(map[string]State, 1000)
		running := []string{}
		for {
			d := g.Decide(st)
			if d.Finished {
				break
			}
			for _, k := range d.Ready {
				st[k] = Running
			}
			running = append(running, d.Ready...)
			st[running[0]] = Succeeded
			running = running[1:]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/node")
}

func BenchmarkLayout(b *testing.B) {
	for _, c := range []struct {
		name string
		d    Definition
	}{
		{"layered-1000", layered(10, 100)},
		{"layered-2000", layered(20, 100)},
		{"wide-2000", layered(2, 1000)},
		{"chain-fan-2000", chainFan(MaxNodes)}, // the bend budget spent: the worst case
	} {
		b.Run(c.name, func(b *testing.B) {
			g := mustGraph(b, c.d)
			b.ReportAllocs()
			for b.Loop() {
				g.Layout()
			}
		})
	}
}
