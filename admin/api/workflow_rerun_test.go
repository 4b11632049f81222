package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
)

// TestWorkflowRerun: a settlement run whose settle node failed (the rest
// skipped, by the failure policy continue's rules) is re-run from settle:
// settle and what follows run again, the loads keep their state; a second
// click is 409; an unknown node is 400 naming from; viewers may not, and
// users of other apps do not see the run; the rerun is audited.
func TestWorkflowRerun(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		wf := e.settlementWorkflow()
		ops := e.token("ops")
		var trig struct{ Run apitypes.WorkflowRun }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows/"+itoa(wf.ID)+"/trigger", ops, apitypes.WorkflowTrigger{BusinessDate: "2026-03-02"}, &trig))
		path := "/api/v1/workflow-runs/" + itoa(trig.Run.ID) + "/rerun"
		rerun := apitypes.WorkflowRerun{From: []string{"settle"}}
		require.Equal(t, http.StatusConflict, e.call("POST", path, ops, rerun, nil), "a pending run is not re-run")

		// The run as the engine would end it: the loads succeeded, settle
		// failed, report skipped, cleanup (all_done) succeeded.
		ended := map[string]string{"load_trades": store.RunSucceeded, "load_fx_rates": store.RunSucceeded, "settle": store.RunFailed,
			"report": store.RunSkipped, "cleanup": store.RunSucceeded}
		for key, st := range ended {
			_, _, err := e.st.CreateNodeRun(ctx, 1, store.NewNodeRun{WorkflowRunID: trig.Run.ID, NodeKey: key, Status: st})
			require.NoError(t, err)
		}
		for _, tr := range []store.StatusTransition{{ID: trig.Run.ID, From: store.RunPending, To: store.RunRunning},
			{ID: trig.Run.ID, From: store.RunRunning, To: store.RunFailed}} {
			ok, err := e.st.TransitionWorkflowRun(ctx, tr)
			require.NoError(t, err)
			require.True(t, ok)
		}

		var bad errorAnswer
		require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, apitypes.WorkflowRerun{From: []string{"nope"}}, &bad))
		require.Contains(t, bad.Fields["from"], `"nope"`)
		require.Equal(t, http.StatusForbidden, e.call("POST", path, e.token("eve"), rerun, nil))
		require.Equal(t, http.StatusNotFound, e.call("POST", path, e.token("other"), rerun, nil))

		var done apitypes.WorkflowRerunDone
		require.Equal(t, http.StatusOK, e.call("POST", path, ops, rerun, &done))
		require.Equal(t, []string{"settle", "report", "cleanup"}, done.Nodes)
		require.Equal(t, "running", done.Run.Status)
		require.Equal(t, 1, done.Run.Reruns)
		require.Equal(t, http.StatusConflict, e.call("POST", path, ops, rerun, nil), "the second click")
		require.Equal(t, []string{"workflow.create", "workflow.trigger", "workflow.rerun"}, e.auditActionsIn("billing", "workflow/"+itoa(wf.ID)))
		require.Equal(t, []string{"workflow.trigger", "workflow.rerun"}, e.auditActionsIn("market-data", "workflow/"+itoa(wf.ID)),
			"its load_fx_rates node runs market-data's job: market-data's audit log says so")
	})
}
