package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
)

// TestWorkflowWaitsValidated: a node's wait_for names jobs and workflows
// that exist in the apps the user may manage, not the workflow itself nor
// the node's own job; its timeout is a duration; every mistake is a 400
// naming the field. A valid wait is stored with its defaults (24h, fail)
// and read back.
func TestWorkflowWaitsValidated(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ops, report := e.billingOperator()
		for _, w := range [][2]string{{"billing", "fx-close"}, {"market-data", "fx-close"}} {
			_, err := e.st.CreateWorkflow(context.Background(), store.Workflow{App: w[0], Name: w[1], TimeZone: "UTC", Enabled: true,
				FailurePolicy: "stop", Definition: `{"name":"fx-close","nodes":[{"key":"a","handler":"h"}]}`, NodeCount: 1, CreatedBy: "ops"})
			require.NoError(t, err)
		}
		job := func(app, name string) apitypes.WorkflowWait {
			return apitypes.WorkflowWait{Job: &apitypes.WorkflowNameRef{App: app, Name: name}}
		}
		wf := func(app, name string) apitypes.WorkflowWait {
			return apitypes.WorkflowWait{Workflow: &apitypes.WorkflowNameRef{App: app, Name: name}}
		}
		spec := func(f func(s *apitypes.WorkflowSpec)) apitypes.WorkflowSpec {
			s := settlementSpec(report)
			s.Nodes[1].Job = &apitypes.WorkflowJobRef{Name: "load-trades"} // ops may not manage market-data
			s.Nodes[2].WaitFor = []apitypes.WorkflowWait{job("", "load-trades"), wf("billing", "fx-close")}
			f(&s)
			return s
		}
		for _, c := range []struct {
			name, field, says string
			edit              func(s *apitypes.WorkflowSpec)
		}{
			{"an unknown job", "nodes[2].wait_for[0]", "no job billing/nope in the apps you may manage",
				func(s *apitypes.WorkflowSpec) { s.Nodes[2].WaitFor[0] = job("", "nope") }},
			{"another app's job", "nodes[2].wait_for[0]", "no job market-data/load-fx in the apps you may manage",
				func(s *apitypes.WorkflowSpec) { s.Nodes[2].WaitFor[0] = job("market-data", "load-fx") }},
			{"an unknown workflow", "nodes[2].wait_for[1]", "no workflow billing/nope in the apps you may manage",
				func(s *apitypes.WorkflowSpec) { s.Nodes[2].WaitFor[1] = wf("", "nope") }},
			{"another app's workflow", "nodes[2].wait_for[1]", "no workflow market-data/fx-close in the apps you may manage",
				func(s *apitypes.WorkflowSpec) { s.Nodes[2].WaitFor[1] = wf("market-data", "fx-close") }},
			{"the workflow itself", "nodes[2].wait_for[1]", "a workflow cannot wait for its own run",
				func(s *apitypes.WorkflowSpec) { s.Nodes[2].WaitFor[1] = wf("", "eod-settlement") }},
			{"its own job by name", "nodes[0].wait_for[0]", "its own job billing/load-trades",
				func(s *apitypes.WorkflowSpec) {
					s.Nodes[0].WaitFor = []apitypes.WorkflowWait{job("billing", "load-trades")}
				}},
			{"its own job by id", "nodes[3].wait_for[0]", "its own job billing/eod-report",
				func(s *apitypes.WorkflowSpec) { s.Nodes[3].WaitFor = []apitypes.WorkflowWait{job("", "eod-report")} }},
			{"neither job nor workflow", "nodes[2].wait_for[0]", "a job or a workflow to wait for",
				func(s *apitypes.WorkflowSpec) { s.Nodes[2].WaitFor[0] = apitypes.WorkflowWait{} }},
			{"a bad timeout", "nodes[2].wait_timeout", `"soon" is not a duration`,
				func(s *apitypes.WorkflowSpec) { s.Nodes[2].WaitTimeout = "soon" }},
			{"a timeout over a week", "nodes[2].wait_timeout", "outside",
				func(s *apitypes.WorkflowSpec) { s.Nodes[2].WaitTimeout = "200h" }},
			{"a bad setting", "nodes[2].on_timeout", "fail (default) or skip",
				func(s *apitypes.WorkflowSpec) { s.Nodes[2].OnTimeout = "retry" }},
			{"a timeout without waits", "nodes[4].wait_timeout", "only with wait_for",
				func(s *apitypes.WorkflowSpec) { s.Nodes[4].WaitTimeout = "1h" }},
		} {
			var out errorAnswer
			require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/workflows", ops, spec(c.edit), &out), c.name)
			require.Contains(t, out.Fields, c.field, "%s: %+v", c.name, out)
			require.Contains(t, out.Fields[c.field], c.says, c.name)
		}

		var saved apitypes.Workflow
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows", ops, spec(func(*apitypes.WorkflowSpec) {}), &saved))
		var got apitypes.Workflow
		require.Equal(t, http.StatusOK, e.call("GET", fmt.Sprintf("/api/v1/workflows/%d", saved.ID), ops, nil, &got))
		settle := got.Nodes[2]
		require.Equal(t, []apitypes.WorkflowWait{job("", "load-trades"), wf("billing", "fx-close")}, settle.WaitFor)
		require.Equal(t, "24h", settle.WaitTimeout, "the default timeout")
		require.Equal(t, "fail", settle.OnTimeout, "the default setting")
		require.Empty(t, got.Nodes[0].WaitFor)
		require.Equal(t, spec(func(*apitypes.WorkflowSpec) {}).WithDefaults().Nodes, got.WithDefaults().Nodes, "what is read back is what a file with defaults states")
	})
}
