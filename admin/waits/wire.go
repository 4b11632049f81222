package waits

import (
	"encoding/json"
	"fmt"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// FromWire is ws, waits in the API's wire form (a workflow node's or a
// job's wait_for), as Refs; nil for none.
func FromWire(ws []apitypes.WorkflowWait) []Ref {
	var out []Ref
	for _, w := range ws {
		var r Ref
		if w.Job != nil {
			r.Job = &NameRef{App: w.Job.App, Name: w.Job.Name}
		}
		if w.Workflow != nil {
			r.Workflow = &NameRef{App: w.Workflow.App, Name: w.Workflow.Name}
		}
		out = append(out, r)
	}
	return out
}

// ToWire is rs in the API's wire form; nil for none.
func ToWire(rs []Ref) []apitypes.WorkflowWait {
	var out []apitypes.WorkflowWait
	for _, r := range rs {
		var w apitypes.WorkflowWait
		if r.Job != nil {
			w.Job = &apitypes.WorkflowNameRef{App: r.Job.App, Name: r.Job.Name}
		}
		if r.Workflow != nil {
			w.Workflow = &apitypes.WorkflowNameRef{App: r.Workflow.App, Name: r.Workflow.Name}
		}
		out = append(out, w)
	}
	return out
}

// Format is rs as a job's row keeps them (store.JobWaits.WaitFor): a JSON
// array, "" for none.
func Format(rs []Ref) string {
	if len(rs) == 0 {
		return ""
	}
	b, err := json.Marshal(rs)
	if err != nil {
		panic(fmt.Sprintf("waits: marshal %v: %v", rs, err)) // pointers to strings always marshal
	}
	return string(b)
}

// Parse reads what Format wrote ("" for none).
func Parse(s string) ([]Ref, error) {
	if s == "" {
		return nil, nil
	}
	var rs []Ref
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		return nil, fmt.Errorf("waits %q: %w", s, err)
	}
	return rs, nil
}
