package workflowrun

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

func TestNodeParams(t *testing.T) {
	run := store.WorkflowRun{ID: 17, BusinessDate: "2026-03-02", Params: `{"region":"eu","ledger":"side"}`}
	for _, c := range []struct {
		name, job, runParams, want string
		upstream                   map[string]json.RawMessage
	}{
		{"object: the run's params over the job's, three fields added", `{"ledger":"main","n":1}`, run.Params,
			`{"business_date":"2026-03-02","ledger":"side","n":1,"region":"eu","workflow_node":"settle","workflow_run_id":17}`, nil},
		{"no job params", "", "",
			`{"business_date":"2026-03-02","workflow_node":"settle","workflow_run_id":17}`, nil},
		{"the added fields win over the job's", `{"business_date":"1999-01-01"}`, "",
			`{"business_date":"2026-03-02","workflow_node":"settle","workflow_run_id":17}`, nil},
		{"job params that are not a JSON object stay as they are", "ms=1500", run.Params, "ms=1500", nil},
		{"a JSON array is no object", "[1,2]", "", "[1,2]", nil},
		{"JSON null is no object", "null", "", "null", nil},
		{"run params that are not an object are left out", `{"a":1}`, "[1]",
			`{"a":1,"business_date":"2026-03-02","workflow_node":"settle","workflow_run_id":17}`, nil},
		{"the parents' results under upstream, by parent key", `{"ledger":"main"}`, "",
			`{"business_date":"2026-03-02","ledger":"main","upstream":{"load_fx":{"0":"eur","1":"usd"},"load_trades":{"rows":42}},"workflow_node":"settle","workflow_run_id":17}`,
			map[string]json.RawMessage{"load_trades": json.RawMessage(`{"rows":42}`), "load_fx": json.RawMessage(`{"0":"eur","1":"usd"}`)}},
		{"upstream wins over a job param of that name", `{"upstream":"mine"}`, "",
			`{"business_date":"2026-03-02","upstream":{"a":7},"workflow_node":"settle","workflow_run_id":17}`,
			map[string]json.RawMessage{"a": json.RawMessage(`7`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run
			r.Params = c.runParams
			require.Equal(t, c.want, nodeParams(c.job, r, "settle", c.upstream))
		})
	}
}

func TestNodeEndFollowsTheJobRun(t *testing.T) {
	for status, want := range map[string]string{
		store.RunPending: "", store.RunRunning: "",
		store.RunSucceeded: store.RunSucceeded, store.RunFailed: store.RunFailed, store.RunPartiallyFailed: store.RunFailed,
		store.RunSkipped: store.RunFailed, store.RunCancelled: store.RunCancelled,
	} {
		to, reason, ended := nodeEnd(store.JobRunStatus{ID: 5, Status: status, Error: "2 slot(s) failed"})
		require.Equal(t, want, to, status)
		require.Equal(t, want != "", ended, status)
		if want == store.RunFailed || want == store.RunCancelled {
			require.Equal(t, msg.FlowNodeJobRunEnded, reason.Code, status)
			require.Equal(t, "job run 5 ended "+status+": 2 slot(s) failed", reason.String())
		} else {
			require.True(t, reason.IsZero(), status)
		}
	}
}
