package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
)

// Authorisation data (issue 17): what the audit log and the alarm list show
// to whom, tokens that cannot outlive the token that created them, and
// user names without case.

// limitTo limits the user name to apps.
func (e *env) limitTo(name string, apps ...string) {
	e.t.Helper()
	u, err := e.st.UserByName(context.Background(), name)
	require.NoError(e.t, err)
	require.NoError(e.t, e.st.SetUserApps(context.Background(), u.ID, apps))
}

// auditPage reads one page of the audit log as the holder of tok.
func (e *env) auditPage(tok, query string) ([]apitypes.AuditView, int64) {
	e.t.Helper()
	var out struct {
		Entries    []apitypes.AuditView
		NextBefore int64 `json:"next_before"`
	}
	require.Equal(e.t, http.StatusOK, e.call("GET", "/api/v1/audit"+query, tok, nil, &out))
	return out.Entries, out.NextBefore
}

// auditKeys lists "action object" of entries.
func auditKeys(entries []apitypes.AuditView) []string {
	out := make([]string, 0, len(entries))
	for _, a := range entries {
		out = append(out, a.Action+" "+a.Object)
	}
	return out
}

// TestAuditLogIsScopedByApp: an operator limited to billing reads the
// audit entries of billing's jobs, runs and executors, and those about its
// own account (its login, its tokens, also when an admin revokes one) —
// not search's (whose job params may hold secrets), not the entries about
// other users, roles and tokens, which only admins read. An operator
// without a limit reads every app's entries, still not the admin-only
// ones. Each entry says its app; pages stay full under the filter.
func TestAuditLogIsScopedByApp(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.user("root", auth.RoleAdmin)
		e.user("billing-ops", auth.RoleOperator)
		e.user("all-ops", auth.RoleOperator)
		e.limitTo("billing-ops", "billing")
		root, billingOps, allOps := e.token("root"), e.token("billing-ops"), e.token("all-ops")

		var billingJob, searchJob apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", billingOps, with("params", `{"region":"eu"}`), &billingJob))
		search := with("app", "search")
		search["params"] = `{"password":"search-secret"}`
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", allOps, search, &searchJob))
		var run struct{ Run apitypes.Run }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(searchJob.ID)+"/trigger", allOps, nil, &run))
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/runs/"+itoa(run.Run.ID)+"/cancel", allOps, nil, nil))
		searchExec, err := e.st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "search-1", App: "search", Address: "http://127.0.0.1:9", Capacity: 1})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/executors/"+itoa(searchExec.ID)+"/drain", root, nil, nil))
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/users", root,
			map[string]any{"username": "eve", "password": "password-eve", "role": auth.RoleViewer, "apps": []string{"search"}}, nil))
		ownID, _ := e.newAPIKey(billingOps, map[string]any{"name": "mine"})
		e.newAPIKey(allOps, map[string]any{"name": "theirs"})
		require.Equal(t, http.StatusOK, e.call("DELETE", "/api/v1/tokens/"+itoa(ownID), root, nil, nil), "an admin revokes billing-ops' token")

		// billing-ops: billing's job, its own login and token entries.
		entries, _ := e.auditPage(billingOps, "")
		got := auditKeys(entries)
		require.ElementsMatch(t, []string{
			"login user/billing-ops", "job.create job/" + itoa(billingJob.ID),
			"token.create token/" + itoa(ownID), "token.revoke token/" + itoa(ownID),
		}, got)
		for _, a := range entries {
			require.NotContains(t, a.Detail, "search-secret")
			if strings.HasPrefix(a.Object, "job/") {
				require.Equal(t, "billing", a.App)
			} else {
				require.Empty(t, a.App, "%s is about an account, not an app", a.Object)
			}
		}

		// all-ops: every app's entries, its own account's; no user.create,
		// no other user's login or token.
		entries, _ = e.auditPage(allOps, "")
		got = auditKeys(entries)
		for _, want := range []string{
			"job.create job/" + itoa(billingJob.ID), "job.create job/" + itoa(searchJob.ID),
			"job.trigger job/" + itoa(searchJob.ID), "run.cancel run/" + itoa(run.Run.ID),
			"executor.drain executor/" + itoa(searchExec.ID), "login user/all-ops",
		} {
			require.Contains(t, got, want)
		}
		for _, k := range got {
			require.NotContains(t, k, "user.create")
			require.NotContains(t, k, "billing-ops")
			require.NotContains(t, k, "token/"+itoa(ownID))
		}
		for _, a := range entries {
			switch {
			case strings.HasSuffix(a.Object, "/"+itoa(searchJob.ID)) && strings.HasPrefix(a.Object, "job/"),
				strings.HasPrefix(a.Object, "run/"), strings.HasPrefix(a.Object, "executor/"):
				require.Equal(t, "search", a.App, a.Object)
			}
		}

		// The admin reads everything, with the app of each entry.
		entries, _ = e.auditPage(root, "")
		got = auditKeys(entries)
		require.Contains(t, got, "user.create user/eve")
		require.Contains(t, got, "login user/billing-ops")
		require.Contains(t, got, "token.create token/"+itoa(ownID))

		// Pages are filtered in the query: a page of one is billing-ops'
		// newest visible entry, and the cursor reaches the next.
		page, next := e.auditPage(billingOps, "?limit=1")
		require.Len(t, page, 1)
		require.Equal(t, "token.revoke token/"+itoa(ownID), auditKeys(page)[0])
		page, _ = e.auditPage(billingOps, "?limit=1&before="+itoa(next))
		require.Equal(t, "token.create token/"+itoa(ownID), auditKeys(page)[0])
	})
}

// TestAlarmsAreScopedByApp: alarms not tied to a job (executor_lost) carry
// the executor's app, and a user limited to billing sees billing's alarms
// only, not search's nor the platform's (leader_change); a user without a
// limit sees all. The filter is in the query: a limited user's page is
// not emptied by 200 newer alarms of another app.
func TestAlarmsAreScopedByApp(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.user("billing-viewer", auth.RoleViewer)
		e.user("viewer", auth.RoleViewer)
		e.limitTo("billing-viewer", "billing")

		for _, ex := range []store.ExecutorInfo{
			{InstanceID: "billing-1", App: "billing", Address: "http://127.0.0.1:9", Capacity: 1},
			{InstanceID: "search-1", App: "search", Address: "http://127.0.0.1:9", Capacity: 1},
		} {
			_, err := e.st.Heartbeat(ctx, ex)
			require.NoError(t, err)
		}
		_, err := e.st.DB().ExecContext(ctx, `UPDATE executor SET last_heartbeat = last_heartbeat - 120000`)
		require.NoError(t, err)
		n, err := e.st.MarkLostExecutors(ctx, 60_000)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		_, err = e.st.RaiseAlarm(ctx, store.Alarm{Kind: store.AlarmLeaderChange, Severity: "info", DedupKey: "leader_change:1", Message: "replica a leads", RaisedBy: "a"})
		require.NoError(t, err)
		for i := range 210 {
			_, err = e.st.RaiseAlarm(ctx, store.Alarm{Kind: store.AlarmExecutorLost, Severity: "warning", App: "search",
				DedupKey: "executor_lost:restart:2:" + itoa(int64(i)), Message: "executor search-1 (app search) restarted", RaisedBy: "admin"})
			require.NoError(t, err)
		}

		var out struct {
			Groups []apitypes.AlarmGroupView
			More   bool
		}
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarms?limit=1", e.token("billing-viewer"), nil, &out))
		require.Len(t, out.Groups, 1, "billing's alarm only, although 211 newer alarms of others are there")
		require.False(t, out.More)
		g := out.Groups[0]
		require.Equal(t, store.AlarmExecutorLost, g.Latest.Kind)
		require.Equal(t, "billing", g.Latest.App)
		require.Contains(t, g.Latest.Message, "billing-1")
		var members struct{ Alarms []apitypes.AlarmView }
		search := func() int64 {
			var id int64
			require.NoError(t, e.st.DB().Get(&id, `SELECT MAX(group_id) FROM alarm_event WHERE app = 'search'`))
			return id
		}()
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/alarm-groups/"+itoa(search)+"/alarms", e.token("billing-viewer"), nil, &members),
			"another app's group")

		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarms", e.token("viewer"), nil, &out))
		apps := map[string]int{}
		for _, g := range out.Groups {
			apps[g.Latest.Kind+"/"+g.Latest.App] = g.Count
		}
		require.Equal(t, map[string]int{
			store.AlarmLeaderChange + "/":        1, // the platform's alarms, for users without a limit
			store.AlarmExecutorLost + "/billing": 1,
			store.AlarmExecutorLost + "/search":  211, // lost, then 210 restarts within the hour: one group
		}, apps)
		var paged struct {
			Groups []apitypes.AlarmGroupView
			More   bool
		}
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarms?limit=2", e.token("viewer"), nil, &paged))
		require.Len(t, paged.Groups, 2)
		require.True(t, paged.More)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarms?limit=2&before="+itoa(paged.Groups[1].ID), e.token("viewer"), nil, &paged))
		require.Len(t, paged.Groups, 1)
		require.False(t, paged.More)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarm-groups/"+itoa(search)+"/alarms?limit=200", e.token("viewer"), nil, &members))
		require.Len(t, members.Alarms, 200, "a page of the group's members")
	})
}

// TestChildTokenCannotOutliveItsParent: a token created with a token
// expires no later than it (asking for longer, or for never, is a 400
// that says the limit; asking for nothing inherits its expiry) and records
// it as its parent. A token created from a console session is capped by
// the user's role only.
func TestChildTokenCannotOutliveItsParent(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		session := e.token("ops")
		dayID, day := e.newAPIKey(session, map[string]any{"name": "one day", "expires_in_days": 1})
		tenID, ten := e.newAPIKey(session, map[string]any{"name": "ten days", "expires_in_days": 10})
		var forever struct{ Token tokenOut }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/tokens", session, map[string]any{"name": "session made", "expires_in_days": 0}, &forever))
		require.Nil(t, forever.Token.ExpiresAt, "from a session: no cap")

		var bad struct {
			Error  string
			Fields map[string]string
		}
		for _, days := range []int{0, 2, 3650} {
			require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/tokens", day, map[string]any{"name": "longer", "expires_in_days": days}, &bad), "%d days", days)
			require.Contains(t, bad.Error, "cannot outlive the API key that creates it")
			require.Contains(t, bad.Error, "one day")
			require.Contains(t, bad.Fields["expires_in_days"], "none fits", "a one-day token cannot make a token of a whole day")
			require.Contains(t, bad.Fields["expires_in_days"], "omit expires_in_days")
		}
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/tokens", ten, map[string]any{"name": "longer", "expires_in_days": 11}, &bad))
		require.Contains(t, bad.Fields["expires_in_days"], "at most 9")

		var parent struct{ Tokens []apitypes.APIKeyView }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/tokens", session, nil, &parent))
		expiry := map[int64]*time.Time{}
		for _, tk := range parent.Tokens {
			expiry[tk.ID] = tk.ExpiresAt
		}
		var child struct{ Token apitypes.APIKeyView }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/tokens", day, map[string]any{"name": "inherits"}, &child))
		require.NotNil(t, child.Token.ExpiresAt)
		require.True(t, expiry[dayID].Equal(*child.Token.ExpiresAt), "expires with its parent")
		require.Equal(t, dayID, *child.Token.ParentID)
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/tokens", ten, map[string]any{"name": "shorter", "expires_in_days": 9}, &child))
		require.True(t, child.Token.ExpiresAt.Before(*expiry[tenID]))
		require.Equal(t, tenID, *child.Token.ParentID)

		var n int
		require.NoError(t, e.st.DB().Get(&n, `SELECT COUNT(*) FROM api_token`))
		require.Equal(t, 5, n, "refused requests created nothing")
	})
}

// TestRevokingATokenRevokesWhatItCreated: revoking a token revokes the
// tokens created with it, transitively, and says which; they are refused
// at once. Tokens created otherwise live on.
func TestRevokingATokenRevokesWhatItCreated(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		e.user("root", auth.RoleAdmin)
		session := e.token("ops")
		rootID, rootTok := e.newAPIKey(session, map[string]any{"name": "root"})
		childID, child := e.newAPIKey(rootTok, map[string]any{"name": "child"})
		grandID, grand := e.newAPIKey(child, map[string]any{"name": "grandchild"})
		_, sibling := e.newAPIKey(session, map[string]any{"name": "sibling"})
		_, nephew := e.newAPIKey(sibling, map[string]any{"name": "nephew"})

		var rev struct {
			Token       apitypes.APIKeyView
			Revoked     bool
			AlsoRevoked []int64 `json:"also_revoked"`
		}
		require.Equal(t, http.StatusOK, e.call("DELETE", "/api/v1/tokens/"+itoa(rootID), session, nil, &rev))
		require.True(t, rev.Revoked)
		require.Equal(t, []int64{childID, grandID}, rev.AlsoRevoked)
		for _, tok := range []string{rootTok, child, grand} {
			var out struct{ Error string }
			require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/me", tok, nil, &out))
			require.Contains(t, out.Error, "was revoked at")
		}
		for _, tok := range []string{sibling, nephew} {
			require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", tok, nil, nil), "not created with the revoked token")
		}
		var detail string
		require.NoError(t, e.st.DB().Get(&detail, e.st.DB().Rebind(`SELECT detail FROM audit_log WHERE action = 'token.revoke' AND object = ?`), "token/"+itoa(rootID)))
		require.Contains(t, detail, `"also_revoked":[`+itoa(childID)+","+itoa(grandID)+"]")
		require.Equal(t, http.StatusOK, e.call("DELETE", "/api/v1/tokens/"+itoa(childID), e.token("root"), nil, &rev))
		require.False(t, rev.Revoked, "already revoked with its parent")
		require.Empty(t, rev.AlsoRevoked)
	})
}

// TestUserNamesAreCaseInsensitive: "Alice" and "alice" are one user: a
// second spelling is refused with a 409 that names the holder, and login
// works with either spelling (as the stored name).
func TestUserNamesAreCaseInsensitive(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("root", auth.RoleAdmin)
		root := e.token("root")
		newUser := func(name string) map[string]any {
			return map[string]any{"username": name, "password": "password-Alice", "role": auth.RoleViewer}
		}
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/users", root, newUser("Alice"), nil))
		var bad struct {
			Error  string
			Fields map[string]string
		}
		for _, name := range []string{"alice", "ALICE", "Alice"} {
			require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/users", root, newUser(name), &bad), name)
			require.Contains(t, bad.Error, "taken by the user Alice")
			require.Contains(t, bad.Error, "case-insensitive")
			require.NotEmpty(t, bad.Fields["username"])
		}
		var n int
		require.NoError(t, e.st.DB().Get(&n, `SELECT COUNT(*) FROM app_user`))
		require.Equal(t, 2, n)

		for _, name := range []string{"Alice", "alice", "aLiCe"} {
			var out struct{ Username string }
			require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/login", "", map[string]string{"username": name, "password": "password-Alice"}, &out), name)
			require.Equal(t, "Alice", out.Username)
		}
		require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/login", "", map[string]string{"username": "alice ", "password": "password-Alice"}, nil),
			"a trailing space is another name on both dialects")
	})
}
