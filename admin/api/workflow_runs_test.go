package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

type triggerAnswer struct {
	Run     apitypes.WorkflowRun
	Created bool
}

// TestWorkflowTriggerAndRunView: an operator triggers a workflow (twice
// with one run key: one run), bad input is refused field by field, the
// engine starts the first node, and the run is read with its node runs
// and their job runs' statuses by a viewer of the app, not by others.
func TestWorkflowTriggerAndRunView(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		e.user("eve", auth.RoleViewer)
		e.user("other", auth.RoleOperator)
		e.limitTo("ops", "billing")
		e.limitTo("eve", "billing")
		e.limitTo("other", "search")
		ops, eve, other := e.token("ops"), e.token("eve"), e.token("other")
		e.createJobRow("billing", "load")
		e.createJobRow("billing", "settle")
		var wf apitypes.Workflow
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows", ops, apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{
			App: "billing", Name: "eod", TimeZone: "Asia/Shanghai",
			Nodes: []apitypes.WorkflowNode{{Key: "load", Job: &apitypes.WorkflowJobRef{Name: "load"}}, {Key: "settle", Job: &apitypes.WorkflowJobRef{Name: "settle"}}},
			Edges: []apitypes.WorkflowEdge{{From: "load", To: "settle"}},
		}}, &wf))
		path := "/api/v1/workflows/" + strconv.FormatInt(wf.ID, 10) + "/trigger"

		req := apitypes.WorkflowTrigger{RunKey: "eod-2026-03-02", BusinessDate: "2026-03-02", Params: `{"region":"eu"}`}
		var first, again triggerAnswer
		require.Equal(t, http.StatusCreated, e.call("POST", path, ops, req, &first))
		require.True(t, first.Created)
		require.Equal(t, "eod-2026-03-02", first.Run.RunKey)
		require.Equal(t, "2026-03-02", first.Run.BusinessDate)
		require.Equal(t, store.TriggerManual, first.Run.Trigger, "a session (login) trigger; an API token makes it api")
		require.Equal(t, store.RunPending, first.Run.Status)
		require.Equal(t, wf.Version, first.Run.WorkflowVersion)
		require.Equal(t, http.StatusOK, e.call("POST", path, ops, req, &again))
		require.False(t, again.Created)
		require.Equal(t, first.Run.ID, again.Run.ID)

		var dflt triggerAnswer
		require.Equal(t, http.StatusCreated, e.call("POST", path, ops, nil, &dflt), "every field is optional")
		require.NotEqual(t, first.Run.ID, dflt.Run.ID)
		require.Len(t, dflt.Run.BusinessDate, 10)
		require.Equal(t, "ops", dflt.Run.CreatedBy)
		require.Equal(t, []string{"workflow.create", "workflow.trigger", "workflow.trigger"}, e.auditActions("workflow/"+strconv.FormatInt(wf.ID, 10)),
			"the repeated trigger created nothing and is not audited")

		for _, c := range []struct {
			body  apitypes.WorkflowTrigger
			field string
		}{
			{apitypes.WorkflowTrigger{BusinessDate: "2026-02-30"}, "business_date"},
			{apitypes.WorkflowTrigger{BusinessDate: "02/03/2026"}, "business_date"},
			{apitypes.WorkflowTrigger{Params: `[1]`}, "params"},
			{apitypes.WorkflowTrigger{Params: `{"a":`}, "params"},
			{apitypes.WorkflowTrigger{RunKey: strings.Repeat("k", 65)}, "run_key"},
		} {
			var ans errorAnswer
			require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, c.body, &ans), "%+v", c.body)
			require.Contains(t, ans.Fields, c.field, "%+v", c.body)
		}
		require.Equal(t, http.StatusForbidden, e.call("POST", path, eve, req, nil), "a viewer may not trigger")
		require.Equal(t, http.StatusNotFound, e.call("POST", path, other, req, nil), "another app's workflow does not exist")

		ok, err := e.st.ClaimEpoch(context.Background(), 7, "test")
		require.NoError(t, err)
		require.True(t, ok)
		eng, err := workflowrun.New(workflowrun.Config{}, e.st)
		require.NoError(t, err)
		res, err := eng.Drive(context.Background(), 7, first.Run.ID)
		require.NoError(t, err)
		require.Equal(t, 1, res.JobRuns)

		runPath := "/api/v1/workflow-runs/" + strconv.FormatInt(first.Run.ID, 10)
		var view apitypes.WorkflowRunDetail
		require.Equal(t, http.StatusOK, e.call("GET", runPath, eve, nil, &view))
		require.Equal(t, store.RunRunning, view.Run.Status)
		require.Len(t, view.Nodes, 1)
		n := view.Nodes[0]
		require.Equal(t, "load", n.NodeKey)
		require.Equal(t, store.RunRunning, n.Status)
		require.Positive(t, n.JobRunID)
		require.Equal(t, store.RunPending, n.JobRunStatus)
		var jobRun apitypes.RunDetail
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+strconv.FormatInt(n.JobRunID, 10), eve, nil, &jobRun))
		require.Equal(t, store.TriggerWorkflow, jobRun.Run.Trigger)
		require.NotContains(t, jobRun.Run.Params, "business_date", "the workflow context is not in the params")
		require.Contains(t, jobRun.Run.Params, `"region":"eu"`)
		require.JSONEq(t, fmt.Sprintf(`{"run_id":%d,"node":"load","business_date":"2026-03-02"}`, first.Run.ID), string(jobRun.Run.Workflow))

		// The job is deleted: the next node fails at once, and says why.
		_, err = e.st.DB().Exec(`UPDATE job_run SET status = 'succeeded', finished_at = 1 WHERE id = ?`, n.JobRunID)
		require.NoError(t, err)
		settle, err := e.st.JobKeys(context.Background(), nil, []store.JobKey{{App: "billing", Name: "settle"}})
		require.NoError(t, err)
		require.NoError(t, e.st.DeleteJob(context.Background(), settle[0].ID))
		_, err = eng.Drive(context.Background(), 7, first.Run.ID)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, e.call("GET", runPath, eve, nil, &view))
		require.Equal(t, store.RunFailed, view.Run.Status)
		require.Equal(t, string(msg.FlowRunFailed), view.Run.ReasonCode)
		require.Len(t, view.Nodes, 2)
		require.Equal(t, string(msg.FlowNodeJobMissing), view.Nodes[1].ReasonCode)
		require.Zero(t, view.Nodes[1].JobRunID)

		require.Equal(t, http.StatusNotFound, e.call("GET", runPath, other, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/workflow-runs/999999", eve, nil, nil))
	})
}
