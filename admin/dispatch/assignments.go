package dispatch

import (
	"encoding/json"

	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// BuildAssignments groups dispatch rows by run into wire assignments: one
// per run and params (a slot replayed with params of its own runs with
// them, the run's other slots with the run's: docs/failures.md).
func BuildAssignments(ds []store.DispatchSlot) []protocol.RunAssignment {
	type key struct {
		run    int64
		params string
	}
	var out []protocol.RunAssignment
	index := map[key]int{}
	params := map[int64]map[int]string{}
	for _, d := range ds {
		k := key{d.RunID, d.Params}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, protocol.RunAssignment{
				RunID: d.RunID, JobID: d.JobID, JobName: d.JobName, Handler: d.Handler,
				ScheduledAt: d.ScheduledAt, Params: d.Params, SlotCount: d.SlotCount, TimeoutMS: d.TimeoutMS,
				Records: recordsPolicy(d), Workflow: workflowContext(d), Priority: priority(d),
			})
			if _, ok := params[d.RunID]; !ok {
				params[d.RunID], _ = jobrules.ParseSlotParams(d.SlotParams, d.SlotCount)
			}
		}
		out[i].Attempts = append(out[i].Attempts, protocol.SlotAttempt{Slot: d.Slot, Token: d.Token, Attempt: d.Attempt, Param: params[d.RunID][d.Slot]})
	}
	return out
}

// priority is the priority of d's run on the wire: "" for normal (what an
// executor assumes when the admin says nothing).
func priority(d store.DispatchSlot) string {
	if !d.Priority.Valid || protocol.Priority(d.Priority.Int64) == protocol.PriorityNormal {
		return ""
	}
	return protocol.Priority(d.Priority.Int64).String()
}

// workflowContext is the workflow context of d's run on the wire, nil for
// a run that is no workflow node's (or whose stored context does not
// decode, which the engine never writes).
func workflowContext(d store.DispatchSlot) *protocol.WorkflowContext {
	if !d.Workflow.Valid || d.Workflow.String == "" {
		return nil
	}
	var w protocol.WorkflowContext
	if err := json.Unmarshal([]byte(d.Workflow.String), &w); err != nil {
		return nil
	}
	return &w
}

// recordsPolicy is the records policy of d's run on the wire, nil when the
// job leaves every choice to its handler: the one mapping from the stored
// store.RecordsPolicy to protocol.RecordsPolicy, whose scope is resolved
// for the run (placeholders replaced in the job's time zone).
func recordsPolicy(d store.DispatchSlot) *protocol.RecordsPolicy {
	if d.RecordsPolicy.IsZero() {
		return nil
	}
	return &protocol.RecordsPolicy{
		Scope:       jobrules.ResolveDedupScope(d.DedupScope, d.TimeZone, d.ScheduledAt),
		Uncertain:   d.UncertainPolicy,
		MaxAttempts: d.RecordMaxAttempts,
	}
}
