package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// Who may call a route.
const (
	public   = "public"   // no authentication (login)
	signed   = "executor" // HMAC-signed executor protocol, not a console user
	loggedIn = "session"  // any authenticated user, whatever the role
	viewer   = auth.RoleViewer
	operator = auth.RoleOperator
	admin    = auth.RoleAdmin
)

// routeRule is what a route promises.
type routeRule struct {
	// role is the least role that may call it (or public, executor, session).
	role string
	// audit is the audit action a successful call writes; "" for routes that
	// change nothing or write no audit row.
	audit string
}

// routeRules lists every /api/v1 route the admin serves. A route missing
// here fails TestEveryRouteEnforcesRolesAndCSRF: whoever adds a route says
// who may call it (and what it audits), and the test then checks that the
// server enforces it.
var routeRules = map[string]routeRule{
	"POST /api/v1/login":                       {role: public},
	"GET /api/v1/sso":                          {role: public},
	"GET /api/v1/sso/oidc/login":               {role: public},
	"GET /api/v1/sso/oidc/callback":            {role: public},
	"POST " + protocol.PathHeartbeat:           {role: signed},
	"POST " + protocol.PathResults:             {role: signed},
	"POST " + protocol.PathDeregister:          {role: signed},
	"POST " + protocol.PathLogs:                {role: signed},
	"POST /api/v1/logout":                      {role: loggedIn},
	"GET /api/v1/me":                           {role: loggedIn},
	"POST /api/v1/me/password":                 {role: loggedIn, audit: "user.password"},
	"GET /api/v1/jobs":                         {role: viewer},
	"GET /api/v1/jobs/:id":                     {role: viewer},
	"POST /api/v1/jobs/validate":               {role: viewer}, // changes nothing
	"GET /api/v1/jobs/:id/alarm-routes":        {role: viewer},
	"GET /api/v1/jobs/:id/backfills":           {role: viewer},
	"GET /api/v1/runs":                         {role: viewer},
	"GET /api/v1/runs/:id":                     {role: viewer},
	"GET /api/v1/runs/:id/logs":                {role: viewer},
	"GET /api/v1/runs/:id/slots":               {role: viewer},
	"GET /api/v1/apps":                         {role: viewer},
	"GET /api/v1/queue":                        {role: viewer},
	"GET /api/v1/apps/:name":                   {role: viewer},
	"POST /api/v1/apps":                        {role: admin, audit: "app.create"},
	"PATCH /api/v1/apps/:name":                 {role: operator, audit: "app.update"},
	"GET /api/v1/executors":                    {role: viewer},
	"GET /api/v1/cluster":                      {role: viewer},
	"GET /api/v1/alarms":                       {role: viewer},
	"GET /api/v1/alarm-groups/:id/alarms":      {role: viewer},
	"GET /api/v1/stats/utilization":            {role: viewer},
	"GET /api/v1/dashboard":                    {role: viewer}, // scoped to the apps the user may see by the handler
	"GET /api/v1/api-keys":                     {role: viewer}, // own; all=true checked by the handler
	"POST /api/v1/api-keys":                    {role: viewer, audit: "token.create"},
	"DELETE /api/v1/api-keys/:id":              {role: viewer, audit: "token.revoke"},
	"GET /api/v1/tokens":                       {role: viewer}, // the old name of /api-keys
	"POST /api/v1/tokens":                      {role: viewer, audit: "token.create"},
	"DELETE /api/v1/tokens/:id":                {role: viewer, audit: "token.revoke"},
	"GET /api/v1/xxljob/attempts/:token/log":   {role: viewer},
	"POST /api/v1/jobs":                        {role: operator, audit: "job.create"},
	"PUT /api/v1/jobs/:id":                     {role: operator, audit: "job.update"},
	"DELETE /api/v1/jobs/:id":                  {role: operator, audit: "job.delete"},
	"POST /api/v1/jobs/:id/enable":             {role: operator, audit: "job.enable"},
	"POST /api/v1/jobs/:id/disable":            {role: operator, audit: "job.disable"},
	"POST /api/v1/jobs/:id/pause":              {role: operator, audit: "job.pause"},
	"POST /api/v1/jobs/:id/resume":             {role: operator, audit: "job.resume"},
	"POST /api/v1/jobs/:id/breaker/close":      {role: operator, audit: "job.breaker_close"},
	"POST /api/v1/jobs/:id/trigger":            {role: operator, audit: "job.trigger"},
	"POST /api/v1/jobs/:id/clone":              {role: operator, audit: "job.clone"},
	"POST /api/v1/jobs/:id/backfill":           {role: operator, audit: "job.backfill"},
	"POST /api/v1/executors/:id/drain":         {role: operator, audit: "executor.drain"},
	"POST /api/v1/executors/:id/undrain":       {role: operator, audit: "executor.undrain"},
	"PUT /api/v1/jobs/:id/alarm-routes":        {role: operator, audit: "job.alarm_routes"},
	"POST /api/v1/runs/:id/cancel":             {role: operator, audit: "run.cancel"},
	"POST /api/v1/alarms/:id/ack":              {role: operator, audit: "alarm.ack"},
	"POST /api/v1/alarms/:id/resolve":          {role: operator, audit: "alarm.resolve"},
	"POST /api/v1/alarms/bulk":                 {role: operator, audit: "alarm.bulk_ack"},
	"POST /api/v1/runs/:id/retry":              {role: operator, audit: "run.retry"},
	"GET /api/v1/dead":                         {role: viewer},
	"POST /api/v1/dead/replay":                 {role: operator, audit: "dead.replay"},
	"GET /api/v1/audit":                        {role: operator},
	"GET /api/v1/calendars":                    {role: viewer},
	"GET /api/v1/calendars/:id":                {role: viewer},
	"GET /api/v1/calendars/:id/export":         {role: viewer},
	"POST /api/v1/calendars":                   {role: operator, audit: "calendar.create"},
	"PUT /api/v1/calendars/:id":                {role: operator, audit: "calendar.update"},
	"DELETE /api/v1/calendars/:id":             {role: operator, audit: "calendar.delete"},
	"GET /api/v1/workflows":                    {role: viewer},
	"GET /api/v1/workflows/:id":                {role: viewer},
	"GET /api/v1/workflows/:id/runs":           {role: viewer},
	"GET /api/v1/workflows/:id/layout":         {role: viewer},
	"POST /api/v1/workflows/:id/backfill":      {role: operator, audit: "workflow.backfill"},
	"POST /api/v1/workflow-runs/:id/rerun":     {role: operator, audit: "workflow.rerun"},
	"POST /api/v1/workflow-runs/:id/cancel":    {role: operator, audit: "workflow.cancel"},
	"POST /api/v1/workflows/validate":          {role: operator},
	"POST /api/v1/workflows":                   {role: operator, audit: "workflow.create"},
	"PUT /api/v1/workflows/:id":                {role: operator, audit: "workflow.update"},
	"DELETE /api/v1/workflows/:id":             {role: operator, audit: "workflow.delete"},
	"POST /api/v1/workflows/:id/trigger":       {role: operator, audit: "workflow.trigger"},
	"GET /api/v1/workflow-runs/:id":            {role: viewer},
	"POST /api/v1/xxljob/attempts/:token/kill": {role: operator, audit: "xxljob.kill"},
	"GET /api/v1/users":                        {role: admin},
	"POST /api/v1/users":                       {role: admin, audit: "user.create"},
	"PUT /api/v1/users/:id":                    {role: admin, audit: "user.update"},
	"DELETE /api/v1/users/:id":                 {role: admin, audit: "user.delete"},
	"POST /api/v1/alarm-channels/:name/test":   {role: admin, audit: "alarm_channel.test"},
}

// servedRoutes returns "METHOD /path" (gin syntax) of every /api/v1 route.
func servedRoutes(t *testing.T, h http.Handler) []string {
	t.Helper()
	engine, ok := h.(*gin.Engine)
	require.True(t, ok, "api.New returns a *gin.Engine")
	var out []string
	for _, r := range engine.Routes() {
		if strings.HasPrefix(r.Path, "/api/v1/") {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	sort.Strings(out)
	return out
}

func stateChanging(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch:
		return true
	}
	return false
}

// TestRouteRulesListEveryRoute fails when the admin serves an /api/v1 route
// the table does not list, or the table lists one it does not serve.
func TestRouteRulesListEveryRoute(t *testing.T) {
	t.Parallel()
	h, err := api.New(api.Config{Store: storetest.Open(t, sqlfiles.SQLite), ExecutorSecret: protocol.NewSecret()})
	require.NoError(t, err)
	served := map[string]bool{}
	var missing []string
	for _, r := range servedRoutes(t, h) {
		served[r] = true
		if _, ok := routeRules[r]; !ok {
			missing = append(missing, r)
		}
	}
	var extra []string
	for r, rule := range routeRules {
		if !served[r] {
			extra = append(extra, r)
		}
		require.Contains(t, []string{public, signed, loggedIn, viewer, operator, admin}, rule.role, r)
		if rule.audit != "" {
			require.True(t, stateChanging(strings.Fields(r)[0]), "%s: only state-changing routes audit", r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	require.Empty(t, missing, "routes without an entry in routeRules (routes_rbac_test.go): state the least role that may call each one")
	require.Empty(t, extra, "routeRules lists routes the admin does not serve: remove them")
}

type loginSession struct{ token, csrf string }

func (e *env) login(name string) loginSession {
	e.t.Helper()
	var out struct{ Token, CSRF string }
	require.Equal(e.t, http.StatusOK, e.call("POST", "/api/v1/login", "", map[string]string{"username": name, "password": "password-" + name}, &out))
	return loginSession{token: out.Token, csrf: out.CSRF}
}

// raw sends one request and returns the status and the error message. The
// session s, when set, goes as cookies; csrf, when set, as X-CSRF-Token.
func (e *env) raw(method, path, bearer string, s *loginSession, csrf string) (int, string) {
	e.t.Helper()
	var body io.Reader
	if stateChanging(method) {
		body = strings.NewReader("{}")
	}
	header := http.Header{}
	if s != nil {
		header.Set("Cookie", (&http.Cookie{Name: api.SessionCookie, Value: s.token}).String()+"; "+(&http.Cookie{Name: api.CSRFCookie, Value: s.csrf}).String())
	}
	if csrf != "" {
		header.Set(api.CSRFHeader, csrf)
	}
	res, err := e.client(bearer).Send(context.Background(), method, path, body, header)
	require.NoError(e.t, err)
	var out struct{ Error string }
	_ = json.Unmarshal(res.Body, &out)
	return res.Status, out.Error
}

// concrete fills the parameters of a gin path with ids that exist nowhere,
// so that calls allowed through change nothing.
func concrete(path string) string {
	return ginParam.ReplaceAllString(path, "987654")
}

// TestEveryRouteEnforcesRolesAndCSRF walks the served routes and checks
// for each one what routeRules promises: 401 without credentials; 403 with
// a message for every role below the least one, including an admin's API
// token capped at viewer; past the role check for the least role; and, for
// state-changing routes called with the session cookie, 403 without the
// CSRF header and past the check with it.
func TestEveryRouteEnforcesRolesAndCSRF(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		h, err := api.New(api.Config{Store: e.st, ExecutorSecret: e.secret})
		require.NoError(t, err)
		routes := servedRoutes(t, h)
		for _, u := range []string{viewer, operator, admin} {
			e.user(u+"-user", u)
		}
		bearer := map[string]string{}
		cookie := map[string]loginSession{}
		for _, u := range []string{viewer, operator, admin} {
			bearer[u] = e.token(u + "-user")
			cookie[u] = e.login(u + "-user")
		}
		var capped struct{ Secret string }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/tokens", bearer[admin], map[string]any{"name": "capped", "role": viewer}, &capped))
		rank := map[string]int{loggedIn: 1, viewer: 1, operator: 2, admin: 3}
		// fresh gives a session for one call that may end it (logout).
		fresh := func(role, path string) (string, loginSession) {
			if path != "/api/v1/logout" {
				return bearer[role], cookie[role]
			}
			return e.token(role + "-user"), e.login(role + "-user")
		}

		checked := 0
		for _, r := range routes {
			rule, ok := routeRules[r]
			if !ok || rule.role == public || rule.role == signed {
				continue // TestRouteRulesListEveryRoute reports the missing ones
			}
			method, pattern, _ := strings.Cut(r, " ")
			path := concrete(pattern)
			checked++

			code, msg := e.raw(method, path, "", nil, "")
			require.Equal(t, http.StatusUnauthorized, code, "%s without credentials", r)
			require.NotEmpty(t, msg, "%s: a 401 says why", r)
			code, _ = e.raw(method, path, "sjt_"+strings.Repeat("a", 52), nil, "")
			require.Equal(t, http.StatusUnauthorized, code, "%s with an unknown API key", r)

			for _, role := range []string{viewer, operator} {
				if rank[role] >= rank[rule.role] {
					continue
				}
				b, _ := fresh(role, path)
				code, msg = e.raw(method, path, b, nil, "")
				require.Equal(t, http.StatusForbidden, code, "%s as %s", r, role)
				require.Contains(t, msg, "needs "+rule.role, "%s as %s: the refusal names the role needed", r, role)
			}
			if rank[rule.role] > rank[viewer] {
				code, msg = e.raw(method, path, capped.Secret, nil, "")
				require.Equal(t, http.StatusForbidden, code, "%s with an admin's token capped at viewer", r)
				require.Contains(t, msg, "needs "+rule.role, r)
			}

			least := rule.role
			if least == loggedIn {
				least = viewer
			}
			b, _ := fresh(least, path)
			code, msg = e.raw(method, path, b, nil, "")
			require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, code, "%s as %s is let through: %s", r, least, msg)

			_, s := fresh(least, path)
			if !stateChanging(method) {
				code, msg = e.raw(method, path, "", &s, "")
				require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, code, "%s with the session cookie needs no CSRF header: %s", r, msg)
				continue
			}
			code, msg = e.raw(method, path, "", &s, "")
			require.Equal(t, http.StatusForbidden, code, "%s with the session cookie but no CSRF header", r)
			require.Contains(t, msg, api.CSRFHeader, r)
			code, _ = e.raw(method, path, "", &s, "wrong-"+s.csrf)
			require.Equal(t, http.StatusForbidden, code, "%s with a wrong CSRF header", r)
			_, s = fresh(least, path)
			code, msg = e.raw(method, path, "", &s, s.csrf)
			require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, code, "%s with cookie and CSRF header as %s: %s", r, least, msg)
		}
		require.Greater(t, checked, 30, "the walk reached the routes")
	})
}

// auditRow is one audit_log row.
type auditRow struct {
	ID      int64  `db:"id"`
	Actor   string `db:"actor"`
	Action  string `db:"action"`
	Object  string `db:"object"`
	App     string `db:"app"`
	OwnerID int64  `db:"owner_id"`
}

func (e *env) auditSince(after int64) []auditRow {
	e.t.Helper()
	var rows []auditRow
	require.NoError(e.t, e.st.DB().Select(&rows, e.st.DB().Rebind(`SELECT id, actor, action, object, app, owner_id FROM audit_log WHERE id > ? ORDER BY id`), after))
	return rows
}

func (e *env) lastAuditID() int64 {
	e.t.Helper()
	var id int64
	require.NoError(e.t, e.st.DB().Get(&id, `SELECT COALESCE(MAX(id), 0) FROM audit_log`))
	return id
}

// TestStateChangesOnJobsUsersAndTokensAreAudited makes a successful call of
// every state-changing route on jobs, users and tokens, and checks that each
// one wrote exactly one audit row naming the caller, the action routeRules
// states and the object; calls that are refused write no row.
func TestStateChangesOnJobsUsersAndTokensAreAudited(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("root", admin)
		e.user("ops", operator)
		root, ops := e.token("root"), e.token("ops")
		covered := map[string]bool{}

		// step calls route (a routeRules key) on path as the holder of tok,
		// expects code, and checks the single audit row it wrote.
		step := func(route, path, tok, actor string, body any, code int, out any, object func() string) {
			t.Helper()
			rule, ok := routeRules[route]
			require.True(t, ok, route)
			method, _, _ := strings.Cut(route, " ")
			before := e.lastAuditID()
			require.Equal(t, code, e.call(method, path, tok, body, out), route)
			rows := e.auditSince(before)
			require.Len(t, rows, 1, "%s wrote one audit row: %+v", route, rows)
			require.Equal(t, actor, rows[0].Actor, route)
			require.Equal(t, rule.audit, rows[0].Action, route)
			require.Equal(t, object(), rows[0].Object, route)
			covered[route] = true
		}
		refused := func(method, path, tok string, body any, code int) {
			t.Helper()
			before := e.lastAuditID()
			require.Equal(t, code, e.call(method, path, tok, body, nil), "%s %s", method, path)
			require.Empty(t, e.auditSince(before), "a refused %s %s writes no audit row", method, path)
		}

		var job apitypes.Job
		step("POST /api/v1/jobs", "/api/v1/jobs", ops, "ops", validJob, http.StatusCreated, &job, func() string { return "job/" + itoa(job.ID) })
		jobPath := "/api/v1/jobs/" + itoa(job.ID)
		jobObj := func() string { return "job/" + itoa(job.ID) }
		upd := with("cron", "0 4 * * *")
		upd["version"] = job.Version
		step("PUT /api/v1/jobs/:id", jobPath, ops, "ops", upd, http.StatusOK, &job, jobObj)
		refused("PUT", jobPath, ops, upd, http.StatusConflict) // stale version
		for _, a := range []string{"pause", "resume", "disable", "enable", "breaker/close"} {
			step("POST /api/v1/jobs/:id/"+a, jobPath+"/"+a, ops, "ops", nil, http.StatusOK, nil, jobObj)
		}
		var clone apitypes.Job
		step("POST /api/v1/jobs/:id/clone", jobPath+"/clone", ops, "ops", map[string]any{"name": "settle-copy"}, http.StatusCreated, &clone,
			func() string { return "job/" + itoa(clone.ID) })
		require.NotEqual(t, job.ID, clone.ID)
		var trig struct{ Run apitypes.Run }
		step("POST /api/v1/jobs/:id/trigger", jobPath+"/trigger", ops, "ops", nil, http.StatusCreated, &trig, jobObj)
		runObj := func() string { return "run/" + itoa(trig.Run.ID) }
		refused("POST", jobPath+"/backfill", ops, map[string]any{"from": "2026-03-02", "to": "2026-03-01"}, http.StatusBadRequest)
		step("POST /api/v1/jobs/:id/backfill", jobPath+"/backfill", ops, "ops", map[string]any{"from": "2026-03-01", "to": "2026-03-02"}, http.StatusCreated, nil, jobObj)
		step("POST /api/v1/runs/:id/cancel", "/api/v1/runs/"+itoa(trig.Run.ID)+"/cancel", ops, "ops", map[string]string{"reason": "audit test"}, http.StatusOK, nil, runObj)
		step("PUT /api/v1/jobs/:id/alarm-routes", jobPath+"/alarm-routes", ops, "ops", map[string]any{"routes": []any{}}, http.StatusOK, nil, jobObj)
		refused("POST", "/api/v1/jobs/validate", ops, validJob, http.StatusOK) // validating changes nothing

		var u apitypes.UserView
		userObj := func() string { return "user/" + u.Username }
		refused("POST", "/api/v1/users", ops, map[string]any{"username": "eve", "password": "long-enough-pw", "role": viewer}, http.StatusForbidden)
		refused("POST", "/api/v1/users", root, map[string]any{"username": "eve", "password": "short", "role": viewer}, http.StatusBadRequest)
		step("POST /api/v1/users", "/api/v1/users", root, "root", map[string]any{"username": "eve", "password": "password-eve", "role": viewer, "apps": []string{"billing"}}, http.StatusCreated, &u, userObj)
		userPath := "/api/v1/users/" + itoa(u.ID)
		step("PUT /api/v1/users/:id", userPath, root, "root", map[string]any{"role": operator}, http.StatusOK, &u, userObj)
		eve := e.token("eve")

		var key struct{ Token apitypes.APIKeyView }
		keyObj := func() string { return "token/" + itoa(key.Token.ID) }
		step("POST /api/v1/api-keys", "/api/v1/api-keys", eve, "eve", map[string]any{"name": "deploy", "expires_in_days": 7}, http.StatusCreated, &key, keyObj)
		refused("DELETE", "/api/v1/api-keys/"+itoa(key.Token.ID), ops, nil, http.StatusNotFound) // not the operator's
		step("DELETE /api/v1/api-keys/:id", "/api/v1/api-keys/"+itoa(key.Token.ID), eve, "eve", nil, http.StatusOK, nil, keyObj)

		// The old name of the routes, kept for existing scripts.
		var tok struct{ Token apitypes.APIKeyView }
		tokObj := func() string { return "token/" + itoa(tok.Token.ID) }
		step("POST /api/v1/tokens", "/api/v1/tokens", eve, "eve", map[string]any{"name": "ci", "expires_in_days": 7}, http.StatusCreated, &tok, tokObj)
		refused("DELETE", "/api/v1/tokens/"+itoa(tok.Token.ID), ops, nil, http.StatusNotFound) // not the operator's
		step("DELETE /api/v1/tokens/:id", "/api/v1/tokens/"+itoa(tok.Token.ID), eve, "eve", nil, http.StatusOK, nil, tokObj)
		refused("DELETE", "/api/v1/tokens/"+itoa(tok.Token.ID), eve, nil, http.StatusOK) // already revoked: nothing changes
		step("POST /api/v1/me/password", "/api/v1/me/password", eve, "eve", map[string]string{"old": "password-eve", "new": "new-password-eve"}, http.StatusOK, nil, userObj)
		step("DELETE /api/v1/users/:id", userPath, root, "root", nil, http.StatusOK, nil, userObj)

		step("DELETE /api/v1/jobs/:id", jobPath, ops, "ops", nil, http.StatusOK, nil, jobObj)

		// Every audited route on jobs, users and API keys was exercised.
		var missed []string
		for r, rule := range routeRules {
			_, p, _ := strings.Cut(r, " ")
			if rule.audit == "" || !(strings.HasPrefix(p, "/api/v1/jobs") || strings.HasPrefix(p, "/api/v1/users") || strings.HasPrefix(p, "/api/v1/tokens") || strings.HasPrefix(p, "/api/v1/api-keys")) {
				continue
			}
			if !covered[r] {
				missed = append(missed, r)
			}
		}
		sort.Strings(missed)
		require.Empty(t, missed, "audited routes on jobs, users and tokens without a step in this test")

		// Who may read each row (issue 17): job and run entries belong to
		// the job's app; user entries are the admins'; token and password
		// entries also their owner's (eve, deleted since: her id).
		for _, r := range e.auditSince(0) {
			wantApp, wantOwner := "", int64(0)
			switch {
			case strings.HasPrefix(r.Object, "job/"), strings.HasPrefix(r.Object, "run/"):
				wantApp = "billing"
			case strings.HasPrefix(r.Object, "token/"), r.Action == "user.password":
				wantOwner = u.ID
			case r.Action == "login":
				continue // owned by whoever logged in
			}
			require.Equal(t, wantApp, r.App, "%s %s", r.Action, r.Object)
			require.Equal(t, wantOwner, r.OwnerID, "%s %s", r.Action, r.Object)
		}
	})
}

// TestRefusedUserUpdateChangesNothing: an update with one invalid field is
// refused as a whole; the valid fields are not written either.
func TestRefusedUserUpdateChangesNothing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("root", admin)
		e.user("ops", operator)
		root := e.token("root")
		opsUser, err := e.st.UserByName(context.Background(), "ops")
		require.NoError(t, err)
		path := "/api/v1/users/" + itoa(opsUser.ID)
		before := e.lastAuditID()
		var bad struct{ Fields map[string]string }
		require.Equal(t, http.StatusBadRequest, e.call("PUT", path, root, map[string]any{"role": viewer, "apps": []string{"bad app!"}}, &bad))
		require.NotEmpty(t, bad.Fields["apps"])
		require.Equal(t, http.StatusBadRequest, e.call("PUT", path, root, map[string]any{"role": admin, "apps": []string{"billing"}, "password": "short"}, &bad))
		require.NotEmpty(t, bad.Fields["password"])
		after, err := e.st.UserByName(context.Background(), "ops")
		require.NoError(t, err)
		require.Equal(t, opsUser, after, "nothing of a refused update is written")
		require.Empty(t, e.auditSince(before))
	})
}
