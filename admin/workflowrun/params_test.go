package workflowrun

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// TestNodeParams: a node's params are the user's only — the job's with the
// workflow run's laid over them — so that the built-in handlers' strict
// decoders accept them; the workflow context is apart (TestNodeWorkflow).
func TestNodeParams(t *testing.T) {
	run := store.WorkflowRun{ID: 17, BusinessDate: "2026-03-02", Params: `{"region":"eu","ledger":"side"}`}
	for _, c := range []struct{ name, job, runParams, want string }{
		{"object: the run's params over the job's, nothing added", `{"ledger":"main","n":1}`, run.Params,
			`{"ledger":"side","n":1,"region":"eu"}`},
		{"no job params, no run params: none", "", "", ""},
		{"no run params: the job's as they are", `{"url": "http://x/"}`, "", `{"url": "http://x/"}`},
		{"no job params: the run's", "", `{"a":1}`, `{"a":1}`},
		{"a job param named like the context stays the job's", `{"business_date":"1999-01-01"}`, "",
			`{"business_date":"1999-01-01"}`},
		{"job params that are not a JSON object stay as they are", "ms=1500", run.Params, "ms=1500"},
		{"a JSON array is no object", "[1,2]", "", "[1,2]"},
		{"JSON null is no object", "null", "", "null"},
		{"run params that are not an object are left out", `{"a":1}`, "[1]", `{"a":1}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run
			r.Params = c.runParams
			require.Equal(t, c.want, nodeParams(c.job, r))
		})
	}
}

// TestNodeWorkflow: the workflow context of a node's run, the one place
// for the run, the node, the business date and the parents' results.
func TestNodeWorkflow(t *testing.T) {
	run := store.WorkflowRun{ID: 17, BusinessDate: "2026-03-02", Params: `{"region":"eu"}`}
	require.JSONEq(t, `{"run_id":17,"node":"settle","business_date":"2026-03-02"}`, nodeWorkflow(run, "settle", nil))
	got := nodeWorkflow(run, "settle", map[string]json.RawMessage{
		"load_trades": json.RawMessage(`{"rows":42}`), "load_fx": json.RawMessage(`{"0":"eur","1":"usd"}`)})
	require.JSONEq(t, `{"run_id":17,"node":"settle","business_date":"2026-03-02",
		"upstream":{"load_fx":{"0":"eur","1":"usd"},"load_trades":{"rows":42}}}`, got)
	var w protocol.WorkflowContext
	require.NoError(t, json.Unmarshal([]byte(got), &w), "executors decode it as protocol.WorkflowContext")
	require.Equal(t, "settle", w.Node)
	require.JSONEq(t, `{"rows":42}`, string(w.Upstream["load_trades"]))
}

func TestNodeEndFollowsTheJobRun(t *testing.T) {
	for status, want := range map[string]string{
		store.RunPending: "", store.RunRunning: "",
		store.RunSucceeded: store.RunSucceeded, store.RunFailed: store.RunFailed, store.RunPartiallyFailed: store.RunFailed,
		store.RunSkipped: store.RunFailed, store.RunCancelled: store.RunCancelled,
	} {
		to, reason, ended := nodeEnd(store.JobRunStatus{ID: 5, Status: status, Error: "2 slots failed"})
		require.Equal(t, want, to, status)
		require.Equal(t, want != "", ended, status)
		if want == store.RunFailed || want == store.RunCancelled {
			require.Equal(t, msg.FlowNodeJobRunEnded, reason.Code, status)
			require.Equal(t, "job run 5 ended "+status+": 2 slots failed", reason.String())
		} else {
			require.True(t, reason.IsZero(), status)
		}
	}
}
