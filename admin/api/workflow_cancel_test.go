package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// TestWorkflowCancel: a running workflow run (the real engine started its
// first node, whose job run is pending) is cancelled by an operator: the
// run and the node run are cancelled with who did it, the node's job run
// is cancelled too, and the next node never starts, whatever the engine
// does next. A second cancel is 409; viewers may not, users of other apps
// do not see the run; the cancel is audited.
func TestWorkflowCancel(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.settlementUsers()
		ops := e.token("ops")
		var wf apitypes.Workflow
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows", ops, apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{
			App: "billing", Name: "two-steps",
			Nodes: []apitypes.WorkflowNode{{Key: "load", Job: &apitypes.WorkflowJobRef{Name: "load-trades"}}, {Key: "report", Job: &apitypes.WorkflowJobRef{Name: "eod-report"}}},
			Edges: []apitypes.WorkflowEdge{{From: "load", To: "report"}},
		}}, &wf))
		var trig struct{ Run apitypes.WorkflowRun }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows/"+itoa(wf.ID)+"/trigger", ops, apitypes.WorkflowTrigger{BusinessDate: "2026-03-02"}, &trig))
		ok, err := e.st.ClaimEpoch(ctx, 1, "test")
		require.NoError(t, err)
		require.True(t, ok)
		engine, err := workflowrun.New(workflowrun.Config{}, e.st)
		require.NoError(t, err)
		require.NoError(t, engine.Pass(ctx, 1))
		var detail apitypes.WorkflowRunDetail
		path := "/api/v1/workflow-runs/" + itoa(trig.Run.ID)
		require.Equal(t, http.StatusOK, e.call("GET", path, ops, nil, &detail))
		require.Equal(t, "running", detail.Run.Status)
		require.Len(t, detail.Nodes, 1)
		require.Equal(t, "running", detail.Nodes[0].Status)
		jobRun := detail.Nodes[0].JobRunID

		require.Equal(t, http.StatusForbidden, e.call("POST", path+"/cancel", e.token("eve"), nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("POST", path+"/cancel", e.token("other"), nil, nil))
		var done apitypes.WorkflowCancelled
		require.Equal(t, http.StatusOK, e.call("POST", path+"/cancel", ops, map[string]string{"reason": "wrong ledger"}, &done))
		require.Equal(t, "cancelled", done.Run.Status)
		require.Equal(t, "cancelled by ops: wrong ledger", done.Run.Reason)
		require.Equal(t, []int64{jobRun}, done.JobRuns)
		var r struct{ Run apitypes.Run }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+itoa(jobRun), ops, nil, &r))
		require.Equal(t, "cancelled", r.Run.Status, "the node's job run is cancelled with it")

		// The engine leaves the cancelled run alone: report never starts.
		require.NoError(t, engine.Pass(ctx, 1))
		require.Equal(t, http.StatusOK, e.call("GET", path, ops, nil, &detail))
		require.Equal(t, "cancelled", detail.Run.Status)
		require.Len(t, detail.Nodes, 1)
		require.Equal(t, "cancelled", detail.Nodes[0].Status)
		require.Equal(t, "cancelled by ops: wrong ledger", detail.Nodes[0].Reason)

		require.Equal(t, http.StatusConflict, e.call("POST", path+"/cancel", ops, nil, nil), "a second cancel")
		require.Contains(t, e.auditActions("workflow/"+itoa(wf.ID)), "workflow.cancel")
	})
}
