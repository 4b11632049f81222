package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestWorkflowInlineNodesPassResults (issue 22), with real processes: a
// workflow of inline nodes only (no job of its own saved by anyone) runs
// on a real executor: the inline handler demo.sum runs for each node, a
// two-slot node's slots land on the executor offering it, and each node's
// result reaches its child as upstream in its workflow context — a (2) and b (3 per
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
	code, err := c.API.Call(context.Background(), http.MethodPost, "/api/v1/workflows", apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{
		App: "billing", Name: "sums", FailurePolicy: "continue",
		Nodes: []apitypes.WorkflowNode{
			{Key: "a", Handler: "demo.sum", Params: `{"add":2}`},
			{Key: "b", Handler: "demo.sum", Params: `{"add":3}`, SlotCount: 2},
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
	code, err = c.API.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/workflows/%d/trigger", wf.ID), apitypes.WorkflowTrigger{BusinessDate: "2026-03-02"}, &trig)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code)

	view := c.waitWorkflowRun(trig.Run.ID, "partially_failed")
	require.Contains(t, view.Run.Reason, "flaky")

	byKey := map[string]apitypes.WorkflowNodeRun{}
	for _, n := range view.Nodes {
		byKey[n.NodeKey] = n
	}
	require.Len(t, byKey, 4)
	flaky := byKey["flaky"]
	require.Equal(t, "failed", flaky.Status)
	var fr apitypes.RunDetail
	require.NoError(t, c.API.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", flaky.JobRunID), nil, &fr))
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

	// c's job run: its workflow context carries its parents' results; its
	// params are c's own; its one slot ran on the billing executor.
	var run apitypes.RunDetail
	require.NoError(t, c.API.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", byKey["c"].JobRunID), nil, &run))
	require.JSONEq(t, `{"add":10}`, run.Run.Params)
	var wfc struct {
		BusinessDate string                     `json:"business_date"`
		Upstream     map[string]json.RawMessage `json:"upstream"`
	}
	require.NoError(t, json.Unmarshal(run.Run.Workflow, &wfc))
	require.Equal(t, "2026-03-02", wfc.BusinessDate)
	require.JSONEq(t, `{"sum":2}`, string(wfc.Upstream["a"]))
	require.JSONEq(t, want["b"], string(wfc.Upstream["b"]))
	require.JSONEq(t, `{"sum":18}`, string(run.Result))
	var b apitypes.RunDetail
	require.NoError(t, c.API.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", byKey["b"].JobRunID), nil, &b))
	require.Equal(t, 2, b.Run.SlotCount)
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
	require.NoError(t, c.API.Do(context.Background(), http.MethodGet, "/api/v1/jobs", nil, &jobs))
	require.Empty(t, jobs.Jobs)
}

// waitWorkflowRun waits until workflow run id has ended with status want
// and returns its view; it fails the test at once when the run ends
// otherwise, logging its nodes' attempts.
func (c *cluster) waitWorkflowRun(id int64, want string) apitypes.WorkflowRunDetail {
	t := c.t
	t.Helper()
	var view apitypes.WorkflowRunDetail
	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		view = apitypes.WorkflowRunDetail{}
		if err := c.API.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/workflow-runs/%d", id), nil, &view); err != nil {
			return false, err
		}
		switch view.Run.Status {
		case want:
			return true, nil
		case "pending", "running":
			return false, fmt.Errorf("workflow run is %s with %d node runs", view.Run.Status, len(view.Nodes))
		}
		for _, n := range view.Nodes {
			var r apitypes.RunDetail
			if n.JobRunID > 0 && c.API.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", n.JobRunID), nil, &r) == nil {
				for _, a := range r.Attempts {
					t.Logf("node %s attempt %d: %s %s", n.NodeKey, a.Attempt, a.Status, a.Error)
				}
			}
		}
		t.Fatalf("workflow run ended %s, not %s: %s", view.Run.Status, want, view.Run.Reason)
		return false, nil
	}, "the workflow run did not end "+want)
	return view
}
