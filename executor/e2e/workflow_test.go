package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/internal/testenv"
)

// TestWorkflowInlineNodesPassResults (issue 22), with real processes: a
// workflow of inline nodes only (no job of its own saved by anyone) runs
// on a real executor: the inline handler demo.sum runs for each node, a
// two-slot node's slots land on the executor offering it, and each node's
// result reaches its child as upstream in its params — a (2) and b (3 per
// slot, two slots) feed c (10): c's result is {"sum": 18}. The workflow
// run view shows every node's result and the link to its job run. An
// independent inline node that always fails is retried by its
// retry_max (two attempts), and the run (failure policy continue) ends
// partially failed, naming it.
func TestWorkflowInlineNodesPassResults(t *testing.T) {
	c := newCluster(t)
	other := c.startExecutor("search", 2) // another app's executor: never used
	ex := c.startExecutor("billing", 4)
	c.WaitOnline(ex, other)

	var wf apitypes.Workflow
	code, err := c.API.Do(http.MethodPost, "/api/v1/workflows", apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{
		App: "billing", Name: "sums", FailurePolicy: "continue",
		Nodes: []apitypes.WorkflowNode{
			{Key: "a", Handler: "demo.sum", Params: `{"add":2}`},
			{Key: "b", Handler: "demo.sum", Params: `{"add":3}`, Slots: 2},
			{Key: "c", Handler: "demo.sum", Params: `{"add":10}`},
			{Key: "flaky", Handler: "demo.fail", RetryMax: 1, RetryBackoffMS: 100},
		},
		Edges: []apitypes.WorkflowEdge{{From: "a", To: "c"}, {From: "b", To: "c"}},
	}}, &wf)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)

	var trig struct {
		Run apitypes.WorkflowRun `json:"run"`
	}
	code, err = c.API.Do(http.MethodPost, fmt.Sprintf("/api/v1/workflows/%d/trigger", wf.ID), apitypes.WorkflowTrigger{BusinessDate: "2026-03-02"}, &trig)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)

	var view apitypes.WorkflowRunDetail
	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		view = apitypes.WorkflowRunDetail{}
		if err := c.API.Get(fmt.Sprintf("/api/v1/workflow-runs/%d", trig.Run.ID), &view); err != nil {
			return false, err
		}
		switch view.Run.Status {
		case "partially_failed":
			return true, nil
		case "pending", "running":
			return false, fmt.Errorf("workflow run is %s with %d node runs", view.Run.Status, len(view.Nodes))
		}
		t.Fatalf("workflow run ended %s: %s (nodes %+v)", view.Run.Status, view.Run.Reason, view.Nodes)
		return false, nil
	}, "the workflow run did not end partially failed")
	require.Contains(t, view.Run.Reason, "flaky")

	byKey := map[string]apitypes.WorkflowNodeRun{}
	for _, n := range view.Nodes {
		byKey[n.NodeKey] = n
	}
	require.Len(t, byKey, 4)
	flaky := byKey["flaky"]
	require.Equal(t, "failed", flaky.Status)
	var fr apitypes.RunDetail
	require.NoError(t, c.API.Get(fmt.Sprintf("/api/v1/runs/%d", flaky.JobRunID), &fr))
	require.Len(t, fr.Attempts, 2, "retry_max 1: the slot ran twice")
	for _, a := range fr.Attempts {
		require.Equal(t, "failed", a.Status)
		require.Contains(t, a.Error, "fails on purpose")
	}
	require.Nil(t, fr.Result)
	want := map[string]string{"a": `{"sum":2}`, "b": `{"0":{"sum":3},"1":{"sum":3}}`, "c": `{"sum":18}`}
	for key, result := range want {
		n := byKey[key]
		require.Equal(t, "succeeded", n.Status, key)
		require.Positive(t, n.JobRunID, "%s links to its job run", key)
		require.Equal(t, "succeeded", n.JobRunStatus, key)
		require.JSONEq(t, result, string(n.Result), key)
	}

	// c's job run: its params carry its parents' results; its one slot
	// ran on the billing executor.
	var run apitypes.RunDetail
	require.NoError(t, c.API.Get(fmt.Sprintf("/api/v1/runs/%d", byKey["c"].JobRunID), &run))
	var params struct {
		Add          int                        `json:"add"`
		BusinessDate string                     `json:"business_date"`
		Upstream     map[string]json.RawMessage `json:"upstream"`
	}
	require.NoError(t, json.Unmarshal([]byte(run.Run.Params), &params))
	require.Equal(t, 10, params.Add)
	require.Equal(t, "2026-03-02", params.BusinessDate)
	require.JSONEq(t, `{"sum":2}`, string(params.Upstream["a"]))
	require.JSONEq(t, want["b"], string(params.Upstream["b"]))
	require.JSONEq(t, `{"sum":18}`, string(run.Result))
	var b apitypes.RunDetail
	require.NoError(t, c.API.Get(fmt.Sprintf("/api/v1/runs/%d", byKey["b"].JobRunID), &b))
	require.Equal(t, 2, b.Run.Slots)
	for _, a := range b.Attempts {
		require.NotNil(t, a.ExecutorID)
		require.Equal(t, ex.ID, *a.ExecutorID, "slot %d ran on the billing executor", a.Slot)
	}
	require.Len(t, logLines(ex.Process, "demo.sum"), 4, "a, b's two slots and c ran once each")
	require.Empty(t, logLines(other.Process, "demo.sum"))

	// The jobs of inline nodes are not listed with the jobs.
	var jobs struct {
		Jobs []apitypes.Job `json:"jobs"`
	}
	require.NoError(t, c.API.Get("/api/v1/jobs", &jobs))
	require.Empty(t, jobs.Jobs)
}
