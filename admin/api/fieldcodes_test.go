package api_test

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/msg"
)

// errorAnswer is an error response as a client reads it.
type errorAnswer struct {
	Error      string             `json:"error"`
	Fields     map[string]string  `json:"fields"`
	FieldCodes map[string]msg.Msg `json:"field_codes"`
}

// TestFieldErrorsHaveCodes: every answer that names fields in error (a bad
// job, token, user, password, calendar, alarm route) carries each of them
// twice: in English (fields, as before) and as a message code of the
// catalog (field_codes) whose English is that same text, so that the
// console can show it in the reader's language.
func TestFieldErrorsHaveCodes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		e.user("root", auth.RoleAdmin)
		ops, root := e.token("ops"), e.token("root")
		var job struct {
			ID      int64 `json:"id"`
			Version int64 `json:"version"`
		}
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, validJob, &job))
		jobPath := "/api/v1/jobs/" + strconv.FormatInt(job.ID, 10)
		badJob := with("cron", "0 25 * * *")
		badJob["slots"] = -1
		badJob["time_zone"] = "Asia/Shanghai"
		badJob["name"] = "a b"
		badJob["deadline_action"] = "kill"
		badJob["finish_deadline"] = "8d"
		badJob["dedup_scope"] = "settle:{day}"
		builtinJob := with("handler", "sql")
		builtinJob["params"] = `{"datasource": "db", "statement": "SELECT [a '"}`
		badZone := with("time_zone", "UTC+8")
		badZone["misfire_policy"] = "sometimes"
		for _, c := range []struct {
			name         string
			method, path string
			token        string
			body         any
			status       int
			fields       []string
		}{
			{"bad job", "POST", "/api/v1/jobs", ops, badJob, http.StatusBadRequest,
				[]string{"cron", "slots", "name", "deadline_action", "finish_deadline", "dedup_scope"}},
			{"bad job preview", "POST", "/api/v1/jobs/validate", ops, badJob, http.StatusBadRequest,
				[]string{"cron", "slots", "name", "deadline_action", "finish_deadline", "dedup_scope"}},
			{"bad zone", "POST", "/api/v1/jobs", ops, badZone, http.StatusBadRequest, []string{"time_zone", "misfire_policy"}},
			{"no child", "POST", "/api/v1/jobs", ops, with("child_job_ids", []int64{9999}), http.StatusBadRequest, []string{"child_job_ids"}},
			{"job name taken", "POST", "/api/v1/jobs", ops, validJob, http.StatusConflict, []string{"name"}},
			{"job renamed", "PUT", jobPath, ops, with("name", "other"), http.StatusBadRequest, []string{"name", "app"}},
			{"job without version", "PUT", jobPath, ops, validJob, http.StatusBadRequest, []string{"version"}},
			{"bad token", "POST", "/api/v1/tokens", ops, map[string]any{"name": " padded", "role": "god", "expires_in_days": 4000},
				http.StatusBadRequest, []string{"name", "role", "expires_in_days"}},
			{"bad user name", "POST", "/api/v1/users", root, map[string]any{"username": "a b", "password": "long-enough-password", "role": "viewer"},
				http.StatusBadRequest, []string{"username"}},
			{"bad role", "POST", "/api/v1/users", root, map[string]any{"username": "u1", "password": "long-enough-password", "role": "god"},
				http.StatusBadRequest, []string{"role"}},
			{"bad apps", "POST", "/api/v1/users", root, map[string]any{"username": "u1", "password": "long-enough-password", "role": "viewer", "apps": []string{"a b"}},
				http.StatusBadRequest, []string{"apps"}},
			{"short password", "POST", "/api/v1/users", root, map[string]any{"username": "u1", "password": "short", "role": "viewer"},
				http.StatusBadRequest, []string{"password"}},
			{"common password", "POST", "/api/v1/users", root, map[string]any{"username": "u1", "password": "password12345", "role": "viewer"},
				http.StatusBadRequest, []string{"password"}},
			{"user name taken", "POST", "/api/v1/users", root, map[string]any{"username": "OPS", "password": "long-enough-password", "role": "viewer"},
				http.StatusConflict, []string{"username"}},
			{"new password refused", "POST", "/api/v1/me/password", ops, map[string]any{"old": "password-ops", "new": "aaaaaaaaaaaaaaaa"},
				http.StatusBadRequest, []string{"new"}},
			{"wrong old password", "POST", "/api/v1/me/password", ops, map[string]any{"old": "nope", "new": "a good new passphrase"},
				http.StatusBadRequest, []string{"old"}},
			{"bad calendar", "POST", "/api/v1/calendars", ops, map[string]any{"app": "a b", "name": "c", "week": "MON-XYZ",
				"days": []map[string]any{{"date": "2026-02-30", "kind": "holiday"}, {"date": "26-1-1", "kind": "holiday"}}},
				http.StatusBadRequest, []string{"app", "week", "days[0].date", "days[1].date"}},
			{"calendar days", "POST", "/api/v1/calendars", ops, map[string]any{"app": "billing", "name": "c",
				"days": []map[string]any{{"date": "2026-05-01", "kind": "holiday"}, {"date": "2026-05-01", "kind": "workday"}}},
				http.StatusBadRequest, []string{"days"}},
			{"calendar name", "POST", "/api/v1/calendars", ops, map[string]any{"app": "billing", "name": "a b"},
				http.StatusBadRequest, []string{"name"}},
			{"calendar import", "POST", "/api/v1/calendars", ops, map[string]any{"app": "billing", "name": "c", "import": map[string]any{"format": "xls", "content": ""}},
				http.StatusBadRequest, []string{"import"}},
			{"calendar import line", "POST", "/api/v1/calendars", ops, map[string]any{"app": "billing", "name": "c",
				"import": map[string]any{"format": "csv", "content": "2026-01-01,holiday\n2026-13-01,holiday\n"}},
				http.StatusBadRequest, []string{"import"}},
			{"builtin params", "POST", "/api/v1/jobs", ops, builtinJob, http.StatusBadRequest, []string{"params"}},
			{"global calendar", "POST", "/api/v1/calendars", ops, map[string]any{"name": "c"}, http.StatusForbidden, []string{"app"}},
			{"alarm routes", "PUT", jobPath + "/alarm-routes", ops, map[string]any{"routes": []map[string]any{{"channel": ""}, {"channel": ""}}},
				http.StatusBadRequest, []string{"routes[0].channel", "routes[1].channel", "routes[1]"}},
			{"no alarm routes", "PUT", jobPath + "/alarm-routes", ops, map[string]any{}, http.StatusBadRequest, []string{"routes"}},
		} {
			var ans errorAnswer
			require.Equal(t, c.status, e.call(c.method, c.path, c.token, c.body, &ans), "%s: %+v", c.name, ans)
			require.ElementsMatch(t, c.fields, slices.Collect(maps.Keys(ans.Fields)), "%s: %+v", c.name, ans.Fields)
			require.ElementsMatch(t, c.fields, slices.Collect(maps.Keys(ans.FieldCodes)), "%s: a code for every field", c.name)
			for field, m := range ans.FieldCodes {
				_, ok := msg.Catalog[m.Code]
				require.True(t, ok, "%s %s: code %q is in the catalog", c.name, field, m.Code)
				require.NotEqual(t, msg.Text, m.Code, "%s %s: a code, not text", c.name, field)
				require.Equal(t, ans.Fields[field], m.String(), "%s %s: the code renders the English", c.name, field)
			}
		}
		// An error without fields has neither.
		var ans map[string]any
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/jobs/999999", ops, nil, &ans))
		require.NotContains(t, ans, "fields")
		require.NotContains(t, ans, "field_codes")
	})
}
