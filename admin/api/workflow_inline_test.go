package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// TestWorkflowInlineNodesAndResults: saving a workflow writes the jobs of
// its inline nodes, which the job list leaves out and the job API refuses
// to change (409 job.workflow_owned); an inline node with bad params for a
// built-in handler is a 400 on its field; the run view and the job run's
// view show a node's result; deleting the workflow deletes the jobs.
func TestWorkflowInlineNodesAndResults(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.user("ops", auth.RoleOperator)
		e.limitTo("ops", "billing")
		ops := e.token("ops")
		spec := apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{App: "billing", Name: "eod",
			Nodes: []apitypes.WorkflowNode{{Key: "load", Handler: "trades.load", Params: `{"src":"s3"}`}, {Key: "settle", Handler: "settle.eod", SlotCount: 2}},
			Edges: []apitypes.WorkflowEdge{{From: "load", To: "settle"}}}}

		bad := spec
		bad.Nodes = []apitypes.WorkflowNode{{Key: "call", Handler: "http", Params: `{"url":"ftp://x"}`}}
		var refused errorAnswer
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/workflows", ops, bad, &refused))
		require.Contains(t, refused.Fields, "nodes[0].params")

		var wf apitypes.Workflow
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows", ops, spec, &wf))
		jobs, err := e.st.WorkflowJobs(ctx, wf.ID)
		require.NoError(t, err)
		require.Len(t, jobs, 2)
		var list struct{ Jobs []apitypes.Job }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs", ops, nil, &list))
		require.Empty(t, list.Jobs, "the jobs of inline nodes are not listed")
		jobPath := "/api/v1/jobs/" + strconv.FormatInt(jobs[0].ID, 10)
		var job apitypes.Job
		require.Equal(t, http.StatusOK, e.call("GET", jobPath, ops, nil, &job))
		require.Equal(t, wf.ID, job.WorkflowID)
		require.Equal(t, "trades.load", job.Handler)
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"PUT", jobPath, job.JobSpec}, {"DELETE", jobPath, nil}, {"POST", jobPath + "/disable", nil}, {"POST", jobPath + "/pause", nil},
			{"POST", jobPath + "/trigger", nil}, {"POST", jobPath + "/clone", map[string]any{"name": "copy"}},
		} {
			var ans errorAnswer
			require.Equal(t, http.StatusConflict, e.call(c.method, c.path, ops, c.body, &ans), "%s %s", c.method, c.path)
			require.Contains(t, ans.Fields["id"], "runs an inline node of workflow", "%s %s", c.method, c.path)
		}

		var run triggerAnswer
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows/"+strconv.FormatInt(wf.ID, 10)+"/trigger", ops, nil, &run))
		ok, err := e.st.ClaimEpoch(ctx, 7, "test")
		require.NoError(t, err)
		require.True(t, ok)
		eng, err := workflowrun.New(workflowrun.Config{}, e.st)
		require.NoError(t, err)
		_, err = eng.Drive(ctx, 7, run.Run.ID)
		require.NoError(t, err)
		runPath := "/api/v1/workflow-runs/" + strconv.FormatInt(run.Run.ID, 10)
		var view apitypes.WorkflowRunDetail
		require.Equal(t, http.StatusOK, e.call("GET", runPath, ops, nil, &view))
		require.Len(t, view.Nodes, 1)
		load := view.Nodes[0].JobRunID
		_, err = e.st.DB().Exec(`INSERT INTO slot_attempt (run_id, slot, attempt, status, current, result) VALUES (?, 0, 1, 'succeeded', 1, '{"rows":42}')`, load)
		require.NoError(t, err)
		_, err = e.st.DB().Exec(`UPDATE job_run SET status = 'succeeded', finished_at = 1 WHERE id = ?`, load)
		require.NoError(t, err)
		_, err = eng.Drive(ctx, 7, run.Run.ID)
		require.NoError(t, err)

		require.Equal(t, http.StatusOK, e.call("GET", runPath, ops, nil, &view))
		require.Len(t, view.Nodes, 2)
		require.Equal(t, "load", view.Nodes[0].NodeKey)
		require.JSONEq(t, `{"rows":42}`, string(view.Nodes[0].Result))
		require.Nil(t, view.Nodes[1].Result, "settle has none yet")
		var detail apitypes.RunDetail
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+strconv.FormatInt(load, 10), ops, nil, &detail))
		require.JSONEq(t, `{"rows":42}`, string(detail.Result))
		require.Equal(t, store.InlineJobName(wf.ID, "load"), detail.Run.JobName)
		var settle apitypes.RunDetail
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+strconv.FormatInt(view.Nodes[1].JobRunID, 10), ops, nil, &settle))
		require.NotContains(t, settle.Run.Params, "upstream", "the params are the user's; the results are in the workflow context")
		require.JSONEq(t, fmt.Sprintf(`{"run_id":%d,"node":"settle","business_date":%q,"upstream":{"load":{"rows":42}}}`,
			view.Run.ID, view.Run.BusinessDate), string(settle.Run.Workflow))
		require.Nil(t, settle.Result)

		_, err = e.st.DB().Exec(`UPDATE workflow_run SET status = 'succeeded' WHERE id = ?`, run.Run.ID)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, e.call("DELETE", "/api/v1/workflows/"+strconv.FormatInt(wf.ID, 10), ops, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", jobPath, ops, nil, nil), "deleted with the workflow")
	})
}
