package xxljob

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestTriggerCarriesTheWorkflowContext: an XXL-JOB handler reads only its
// executorParams, so a workflow node's context — the object SDK executors
// receive beside the params — is laid into them under "workflow"; other
// params, and runs that are no workflow node's, pass unchanged.
func TestTriggerCarriesTheWorkflowContext(t *testing.T) {
	w := &protocol.WorkflowContext{RunID: 17, Node: "settle", BusinessDate: "2026-03-02",
		Upstream: map[string]json.RawMessage{"load": json.RawMessage(`{"rows":42}`)}}
	ctxJSON := `{"run_id":17,"node":"settle","business_date":"2026-03-02","upstream":{"load":{"rows":42}}}`
	for _, c := range []struct {
		name, params string
		w            *protocol.WorkflowContext
		want         string
	}{
		{"a JSON object gets the context", `{"ledger":"main"}`, w, `{"ledger":"main","workflow":` + ctxJSON + `}`},
		{"no params: the context alone", "", w, `{"workflow":` + ctxJSON + `}`},
		{"params that are no object pass unchanged", "ms=1500", w, "ms=1500"},
		{"no workflow node: unchanged", `{"ledger":"main"}`, nil, `{"ledger":"main"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := triggerFor(protocol.RunAssignment{JobID: 7, Handler: "h", Params: c.params, SlotCount: 1, Workflow: c.w},
				protocol.SlotAttempt{Slot: 0, Token: 3}).ExecutorParams
			if c.want == "ms=1500" || c.w == nil {
				require.Equal(t, c.want, got)
				return
			}
			require.JSONEq(t, c.want, got)
		})
	}
	slot := triggerFor(protocol.RunAssignment{JobID: 7, Params: `{"a":1}`, SlotCount: 2, Workflow: w},
		protocol.SlotAttempt{Slot: 1, Token: 4, Param: "Shanghai"})
	require.Equal(t, "Shanghai", slot.ExecutorParams, "a per-slot parameter replaces the run's, as before")
}
