package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestJobWaitsAPI: a job's wait_for, wait_timeout and on_timeout
// round-trip through create, GET and update (the defaults 24h and fail
// answered with wait_for; an update without wait_for clears them); every
// bad wait is a 400 naming the field with a code, and writes nothing.
func TestJobWaitsAPI(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		e, ops := windowEnv(t, st)
		waitFor := []map[string]any{
			{"job": map[string]any{"name": "load-trades"}},
			{"workflow": map[string]any{"app": "market-data", "name": "fx-close"}},
		}
		var j apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, withAll(map[string]any{"name": "report",
			"wait_for": waitFor, "on_timeout": "skip"}), &j))
		want := []apitypes.WorkflowWait{
			{Job: &apitypes.WorkflowNameRef{Name: "load-trades"}},
			{Workflow: &apitypes.WorkflowNameRef{App: "market-data", Name: "fx-close"}},
		}
		require.Equal(t, want, j.WaitFor)
		// Neither awaited run's job or workflow exists: a warning each
		// (not a refusal: a jobs file may create them after this job).
		missing := func(j apitypes.Job) []string {
			var out []string
			for _, w := range j.WarningCodes {
				if w.Code == string(msg.JobWaitTargetMissing) {
					out = append(out, w.Args["target"].(string))
				}
			}
			return out
		}
		require.Equal(t, []string{"billing/load-trades", "workflow market-data/fx-close"}, missing(j))
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, withAll(map[string]any{"name": "load-trades"}), nil))
		var again apitypes.Job
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/jobs/"+itoa(j.ID), ops, j.JobSpec, &again))
		require.Equal(t, []string{"workflow market-data/fx-close"}, missing(again), "the awaited job exists now")
		require.Equal(t, "24h", j.WaitTimeout, "the default, answered")
		require.Equal(t, "skip", j.OnTimeout)
		var got apitypes.Job
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs/"+itoa(j.ID), ops, nil, &got))
		require.Equal(t, want, got.WaitFor)
		require.Equal(t, "24h", got.WaitTimeout)
		require.Equal(t, "skip", got.OnTimeout)

		// Update: one wait, 90m, the default on_timeout.
		spec := got.JobSpec
		spec.WaitFor, spec.WaitTimeout, spec.OnTimeout = want[:1], "90m", ""
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/jobs/"+itoa(j.ID), ops, spec, &got))
		require.Equal(t, want[:1], got.WaitFor)
		require.Equal(t, "90m", got.WaitTimeout)
		require.Equal(t, "fail", got.OnTimeout)
		// Update without waits: none left.
		spec = got.JobSpec
		spec.WaitFor, spec.WaitTimeout, spec.OnTimeout = nil, "", ""
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/jobs/"+itoa(j.ID), ops, spec, nil))
		var cleared apitypes.Job
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs/"+itoa(j.ID), ops, nil, &cleared))
		require.Nil(t, cleared.WaitFor)
		require.Empty(t, cleared.WaitTimeout)
		require.Empty(t, cleared.OnTimeout)
		var stored *string
		require.NoError(t, st.DB().Get(&stored, `SELECT wait_for FROM job WHERE id = ?`, j.ID))
		require.Nil(t, stored, "NULL for none")

		job := func(app, name string) map[string]any {
			return map[string]any{"job": map[string]any{"app": app, "name": name}}
		}
		for _, tc := range []struct {
			name  string
			body  map[string]any
			field string
			words string
			code  msg.Code
		}{
			{"neither", map[string]any{"wait_for": []any{map[string]any{}}}, "wait_for[0]", "a job or a workflow to wait for, not both", msg.WaitOneOf},
			{"both", map[string]any{"wait_for": []any{map[string]any{"job": map[string]any{"name": "a"}, "workflow": map[string]any{"name": "b"}}}},
				"wait_for[0]", "not both", msg.WaitOneOf},
			{"no name", map[string]any{"wait_for": []any{job("", "ok"), job("", "")}}, "wait_for[1].name", "required", msg.NameRequired},
			{"bad app", map[string]any{"wait_for": []any{job("Market Data", "x")}}, "wait_for[0].app", `"Market Data" is not a valid name: use 1-64 ASCII letters`, msg.NameInvalid},
			{"itself", map[string]any{"wait_for": []any{job("billing", "bad")}}, "wait_for[0]", "remove billing/bad from wait_for", msg.WaitSelfJob},
			{"twice", map[string]any{"wait_for": []any{job("", "x"), job("billing", "x")}}, "wait_for[1]", "billing/x is wait_for[0] already", msg.WaitDuplicate},
			{"too many", map[string]any{"wait_for": make([]any, 21)}, "wait_for", "21 waits: at most 20", msg.WaitTooMany},
			{"timeout", map[string]any{"wait_for": []any{job("", "x")}, "wait_timeout": "soon"}, "wait_timeout", `"soon" is not a duration such as 90m`, msg.WaitTimeoutBad},
			{"timeout over a week", map[string]any{"wait_for": []any{job("", "x")}, "wait_timeout": "169h"}, "wait_timeout", "outside 1ms-168h", msg.WaitTimeoutOutside},
			{"on_timeout", map[string]any{"wait_for": []any{job("", "x")}, "on_timeout": "retry"}, "on_timeout", "fail (default) or skip", msg.WaitOnTimeoutBad},
			{"timeout alone", map[string]any{"wait_timeout": "1h"}, "wait_timeout", "only with wait_for", msg.WaitOnlyWith},
		} {
			for _, path := range []string{"/api/v1/jobs", "/api/v1/jobs/validate"} {
				b := withAll(map[string]any{"name": "bad"})
				for k, v := range tc.body {
					b[k] = v
				}
				var ans errorAnswer
				require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, b, &ans), "%s %s", tc.name, path)
				require.Contains(t, ans.Fields[tc.field], tc.words, "%s: %v", tc.name, ans.Fields)
				require.Equal(t, tc.code, ans.FieldCodes[tc.field].Code, tc.name)
				require.Len(t, ans.Fields, 1, "%s: only %s is wrong: %v", tc.name, tc.field, ans.Fields)
			}
		}
		require.Equal(t, 2, e.countJobs(), "the bad ones wrote nothing (report and load-trades)")
	})
}
