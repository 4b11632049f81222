package workflow

import (
	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/waits"
)

// FromWire is the definition of a workflow in the API's wire form
// (admin/apitypes), its defaults applied: what the admin validates and
// stores, and what shardjobctl checks before it sends a file's workflow.
func FromWire(d apitypes.WorkflowDef) Definition {
	def := Definition{Name: d.Name, App: d.App, FailurePolicy: FailurePolicy(d.FailurePolicy),
		Nodes: make([]Node, len(d.Nodes)), Edges: make([]Edge, len(d.Edges))}
	for i, n := range d.Nodes {
		node := Node{Key: n.Key, Handler: n.Handler, Params: n.Params, SlotCount: n.SlotCount, Start: StartRule(n.Start),
			RetryMax: n.RetryMax, RetryBackoffMS: n.RetryBackoffMS, TimeoutMS: n.TimeoutMS,
			WaitTimeout: n.WaitTimeout, OnTimeout: OnTimeout(n.OnTimeout)}
		if n.Job != nil {
			node.Job = &JobRef{ID: n.Job.ID, App: n.Job.App, Name: n.Job.Name}
		}
		node.WaitFor = waits.FromWire(n.WaitFor)
		def.Nodes[i] = node
	}
	for i, e := range d.Edges {
		def.Edges[i] = Edge{From: e.From, To: e.To}
	}
	return def.WithDefaults()
}

// Wire returns the nodes and edges of d in the API's wire form.
func (d Definition) Wire() ([]apitypes.WorkflowNode, []apitypes.WorkflowEdge) {
	nodes := make([]apitypes.WorkflowNode, len(d.Nodes))
	for i, n := range d.Nodes {
		node := apitypes.WorkflowNode{Key: n.Key, Handler: n.Handler, Params: n.Params, SlotCount: n.SlotCount, Start: string(n.Start),
			RetryMax: n.RetryMax, RetryBackoffMS: n.RetryBackoffMS, TimeoutMS: n.TimeoutMS,
			WaitTimeout: n.WaitTimeout, OnTimeout: string(n.OnTimeout)}
		if n.Job != nil {
			node.Job = &apitypes.WorkflowJobRef{ID: n.Job.ID, App: n.Job.App, Name: n.Job.Name}
		}
		node.WaitFor = waits.ToWire(n.WaitFor)
		nodes[i] = node
	}
	var edges []apitypes.WorkflowEdge
	for _, e := range d.Edges {
		edges = append(edges, apitypes.WorkflowEdge{From: e.From, To: e.To})
	}
	return nodes, edges
}
