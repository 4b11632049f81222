package workflow_test

import (
	"fmt"

	"github.com/shardjob/shardjob/admin/workflow"
)

// The end-of-day settlement of docs/workflows.md: two loads, a settlement
// that waits for both, a report, and a clean-up that runs however the
// settlement ended.
func settlement(policy workflow.FailurePolicy) workflow.Definition {
	return workflow.Definition{
		Name: "eod-settlement", App: "billing", FailurePolicy: policy,
		Nodes: []workflow.Node{
			{Key: "load_trades", Job: &workflow.JobRef{Name: "load-trades"}},
			{Key: "load_fx_rates", Job: &workflow.JobRef{App: "market-data", Name: "load-fx"}},
			{Key: "settle", Handler: "settle.eod", Params: `{"ledger":"main"}`, SlotCount: 8},
			{Key: "report", Job: &workflow.JobRef{ID: 42}},
			{Key: "cleanup", Handler: "tmp.cleanup", Start: workflow.AllDone},
		},
		Edges: []workflow.Edge{
			{From: "load_trades", To: "settle"},
			{From: "load_fx_rates", To: "settle"},
			{From: "settle", To: "report"},
			{From: "settle", To: "cleanup"},
		},
	}
}

func Example() {
	g, err := workflow.Validate(settlement(workflow.Continue))
	if err != nil {
		panic(err)
	}
	fmt.Println("layers:", g.Layers())

	// The run starts: both loads are ready.
	states := map[string]workflow.State{}
	d := g.Decide(states)
	fmt.Println("ready:", d.Ready)
	states = d.Apply(states)

	// The FX load fails: settle and report are skipped, cleanup starts.
	states["load_trades"], states["load_fx_rates"] = workflow.Succeeded, workflow.Failed
	d = g.Decide(states)
	fmt.Println("ready:", d.Ready)
	for _, s := range d.Skip {
		fmt.Printf("skip %s (%s: %s)\n", s.Key, s.Reason, s.Cause)
	}
	states = d.Apply(states)

	states["cleanup"] = workflow.Succeeded
	d = g.Decide(states)
	fmt.Println("finished:", d.Finished, d.Outcome.Status, d.Outcome.FailedNodes)

	// Rerun from the failed load: it, settle, report and cleanup again.
	plan, err := g.Rerun(states, "load_fx_rates")
	if err != nil {
		panic(err)
	}
	fmt.Println("rerun:", plan.Nodes, "ready:", g.Decide(plan.States).Ready)
	// Output:
	// layers: [[load_trades load_fx_rates] [settle] [report cleanup]]
	// ready: [load_trades load_fx_rates]
	// ready: [cleanup]
	// skip settle (start_rule: load_fx_rates)
	// skip report (start_rule: settle)
	// finished: true partially_failed [load_fx_rates]
	// rerun: [load_fx_rates settle report cleanup] ready: [load_fx_rates]
}

func ExampleValidate() {
	d := settlement(workflow.Stop)
	d.Nodes = append(d.Nodes, workflow.Node{Key: "reconcile", Handler: "recon"})
	d.Edges = append(d.Edges,
		workflow.Edge{From: "report", To: "reconcile"},
		workflow.Edge{From: "reconcile", To: "settle"},
		workflow.Edge{From: "report", To: "nowhere"})
	_, err := workflow.Validate(d)
	fmt.Println(err)
	// Output:
	// invalid workflow: edges: a cycle: settle → report → reconcile → settle (remove one of its edges); edges[6].to: "nowhere" is not the key of a node
}
