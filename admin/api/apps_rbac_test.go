package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
)

// TestPerAppPermissions: a user limited to some apps sees and acts on jobs,
// runs, executors and alarms of those apps only; objects of other apps do
// not exist for them (404), creating a job in another app is refused (403),
// and only an admin can set the limit (audited with before and after).
func TestPerAppPermissions(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("root", auth.RoleAdmin)
		e.user("billing-ops", auth.RoleOperator)
		admin := e.token("root")
		var jobs [2]apitypes.Job
		for i, app := range []string{"billing", "search"} {
			require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", admin, with("app", app), &jobs[i]))
		}
		var runs [2]struct{ Run apitypes.Run }
		for i, j := range jobs {
			require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(j.ID)+"/trigger", admin, nil, &runs[i]))
		}

		// Limit the operator to billing (admins only; validated).
		var u []apitypes.UserView
		var list struct{ Users []apitypes.UserView }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/users", admin, nil, &list))
		u = list.Users
		var opsID int64
		for _, x := range u {
			if x.Username == "billing-ops" {
				opsID = x.ID
				require.Empty(t, x.Apps, "no limit by default")
			}
		}
		ops := e.token("billing-ops")
		require.Equal(t, http.StatusForbidden, e.call("PUT", "/api/v1/users/"+itoa(opsID), ops, map[string]any{"apps": []string{}}, nil))
		var bad struct{ Fields map[string]string }
		require.Equal(t, http.StatusBadRequest, e.call("PUT", "/api/v1/users/"+itoa(opsID), admin, map[string]any{"apps": []string{"billing", "bad app!"}}, &bad))
		require.Contains(t, bad.Fields["apps"], "bad app!")
		var updated apitypes.UserView
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/users/"+itoa(opsID), admin, map[string]any{"apps": []string{"billing"}}, &updated))
		require.Equal(t, []string{"billing"}, updated.Apps)
		var me struct{ Apps []string }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", ops, nil, &me))
		require.Equal(t, []string{"billing"}, me.Apps)

		// Lists show billing only.
		var jl struct{ Jobs []apitypes.Job }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs", ops, nil, &jl))
		require.Len(t, jl.Jobs, 1)
		require.Equal(t, "billing", jl.Jobs[0].App)
		var rl struct{ Runs []apitypes.Run }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs", ops, nil, &rl))
		require.Len(t, rl.Runs, 1)
		require.Equal(t, runs[0].Run.ID, rl.Runs[0].ID)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs?job_id="+itoa(jobs[1].ID), ops, nil, &rl))
		require.Empty(t, rl.Runs)

		// Objects of search do not exist for the operator; billing's do.
		search, searchRun := itoa(jobs[1].ID), itoa(runs[1].Run.ID)
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/v1/jobs/" + search},
			{"POST", "/api/v1/jobs/" + search + "/trigger"},
			{"POST", "/api/v1/jobs/" + search + "/pause"},
			{"PUT", "/api/v1/jobs/" + search},
			{"DELETE", "/api/v1/jobs/" + search},
			{"GET", "/api/v1/runs/" + searchRun},
			{"POST", "/api/v1/runs/" + searchRun + "/cancel"},
			{"POST", "/api/v1/runs/" + searchRun + "/retry"},
		} {
			var body any
			if c.method == "PUT" {
				body = map[string]any{"version": 1}
			}
			require.Equal(t, http.StatusNotFound, e.call(c.method, c.path, ops, body, nil), "%s %s", c.method, c.path)
		}
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs/"+itoa(jobs[0].ID), ops, nil, nil))
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+itoa(runs[0].Run.ID), ops, nil, nil))
		var refused struct {
			Error  string
			Fields map[string]string
		}
		other := with("name", "other")
		other["app"] = "search"
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/jobs", ops, other, &refused))
		require.Contains(t, refused.Fields["app"], "not one of your apps")
		require.Equal(t, 2, e.countJobs(), "nothing written by the refused request")
		other["app"] = "billing"
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, other, nil))
		child := with("name", "child")
		child["child_job_ids"] = []int64{jobs[1].ID}
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/jobs", ops, child, nil), "a job of another app cannot be named as a child")

		// The admin still sees everything; the change is audited.
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs", admin, nil, &jl))
		require.Len(t, jl.Jobs, 3)
		var audit struct{ Entries []map[string]any }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/audit", admin, nil, &audit))
		found := false
		for _, a := range audit.Entries {
			if a["action"] == "user.update" {
				require.Contains(t, a["detail"], `"before"`)
				require.Contains(t, a["detail"], `"billing"`)
				found = true
			}
		}
		require.True(t, found, "user.update audited: %v", audit.Entries)
	})
}
