package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestMain(m *testing.M) {
	auth.HashCost = bcrypt.MinCost // no test here measures the cost of a hash (auth.HashCost)
	testenv.Main(m)
}

type env struct {
	t      *testing.T
	st     *store.Store
	srv    *httptest.Server
	secret string
}

func eachDialect(t *testing.T, fn func(t *testing.T, e *env)) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		fn(t, newEnv(t, st))
	})
}

// newEnv serves the API on st.
func newEnv(t *testing.T, st *store.Store) *env { return newEnvWithClock(t, st, nil) }

// newEnvWithClock serves the API on st with clk as its clock (nil: the
// system clock).
func newEnvWithClock(t *testing.T, st *store.Store, clk clock.Clock) *env {
	secret := protocol.NewSecret()
	h, err := api.New(api.Config{Store: st, ExecutorSecret: secret, MaxBodyBytes: 64 << 10, Clock: clk})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &env{t: t, st: st, srv: srv, secret: secret}
}

func (e *env) user(name, role string) {
	h, err := auth.HashPassword("password-" + name)
	require.NoError(e.t, err)
	_, err = e.st.CreateUser(context.Background(), name, h, role)
	require.NoError(e.t, err)
}

// token logs in and returns a bearer token.
func (e *env) token(name string) string {
	var out struct{ Token string }
	code := e.call("POST", "/api/v1/login", "", map[string]string{"username": name, "password": "password-" + name}, &out)
	require.Equal(e.t, http.StatusOK, code)
	return out.Token
}

func (e *env) call(method, path, token string, body any, out any) int {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(e.t, err)
		r = bytes.NewReader(data)
	}
	contentType := ""
	if r != nil {
		contentType = "application/json"
	}
	a := e.do(method, path, token, contentType, r)
	require.True(e.t, json.Valid(a.Body), "every answer is JSON: %s", a.Body)
	if out != nil {
		require.NoError(e.t, json.Unmarshal(a.Body, out), string(a.Body))
	}
	return a.Status
}

// client is cli.Client, the one Go client of the API, on the test server
// with token (none when empty).
func (e *env) client(token string) *cli.Client {
	return &cli.Client{Base: e.srv.URL, Token: token, HTTP: e.srv.Client()}
}

// do sends one request, with the Content-Type and the bearer token when
// set, and returns the answer.
func (e *env) do(method, path, token, contentType string, body io.Reader) *cli.Answer {
	e.t.Helper()
	var header http.Header
	if contentType != "" {
		header = http.Header{"Content-Type": {contentType}}
	}
	a, err := e.client(token).Send(context.Background(), method, path, body, header)
	require.NoError(e.t, err)
	return a
}

func (e *env) countJobs() int {
	var n int
	require.NoError(e.t, e.st.DB().Get(&n, `SELECT COUNT(*) FROM job`))
	return n
}

var validJob = map[string]any{"app": "billing", "name": "settle", "handler": "settle.v1", "cron": "0 3 * * *", "time_zone": "Asia/Shanghai", "slots": 16}

// withAll is validJob with the fields of kv.
func withAll(kv map[string]any) map[string]any {
	m := with("app", validJob["app"])
	for k, v := range kv {
		m[k] = v
	}
	return m
}

func with(k string, v any) map[string]any {
	m := map[string]any{}
	for kk, vv := range validJob {
		m[kk] = vv
	}
	m[k] = v
	return m
}

func TestBadJobInputIs400AndWritesNothing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		tok := e.token("ops")
		cases := []struct {
			name  string
			body  any
			field string
		}{
			{"bad cron", with("cron", "0 25 * * *"), "cron"},
			{"cron never fires", with("cron", "0 0 30 2 *"), "cron"},
			{"unknown zone", with("time_zone", "Mars/Olympus"), "time_zone"},
			{"fixed offset zone", with("time_zone", "+08:00"), "time_zone"},
			{"zero slots", with("slots", -1), "slots"},
			{"too many slots", with("slots", 1025), "slots"},
			{"unknown misfire policy", with("misfire_policy", "sometimes"), "misfire_policy"},
			{"unknown overlap policy", with("overlap_policy", "merge"), "overlap_policy"},
			{"bad name", with("name", "has space"), "name"},
			{"bad slot params", with("slot_params", "99=x"), "slot_params"},
			{"per-run scope prefix", with("dedup_scope", "run:7"), "dedup_scope"},
			{"unknown scope placeholder", with("dedup_scope", "settle:{day}"), "dedup_scope"},
			{"unknown uncertain policy", with("uncertain_policy", "maybe"), "uncertain_policy"},
			{"record attempts too high", with("record_max_attempts", 101), "record_max_attempts"},
			{"negative start deadline", with("start_deadline", "-5m"), "start_deadline"},
			{"start deadline too large", with("start_deadline", "169h"), "start_deadline"},
			{"start deadline as a time of day", with("start_deadline", "06:00"), "start_deadline"},
			{"finish deadline not a duration", with("finish_deadline", "soon"), "finish_deadline"},
			{"finish deadline bad clock time", with("finish_deadline", "25:00"), "finish_deadline"},
			{"finish deadline too large", with("finish_deadline", "200h"), "finish_deadline"},
			{"unknown deadline action", with("deadline_action", "page"), "deadline_action"},
			{"end before start", withAll(map[string]any{"start_at": "2026-12-24T18:00:00+08:00", "end_at": "2026-12-24T09:00:00Z"}), "end_at"},
			{"end equals start", withAll(map[string]any{"start_at": "2026-12-24T10:00:00Z", "end_at": "2026-12-24T18:00:00+08:00"}), "end_at"},
			{"negative max runs", with("max_runs", -3), "max_runs"},
			{"start not an instant", with("start_at", "2026-12-24"), "start_at"},
			{"end not an instant", with("end_at", "tomorrow"), "end_at"},
			{"end a number", with("end_at", 1798106400), "end_at"},
			{"at not a time", with("cron", "@at 2026-12-24 18:00"), "cron"},
			{"at impossible date", with("cron", "@at 2026-02-30T18:00"), "cron"},
		}
		for _, tc := range cases {
			var out struct {
				Error  string
				Fields map[string]string
			}
			code := e.call("POST", "/api/v1/jobs", tok, tc.body, &out)
			require.Equal(t, http.StatusBadRequest, code, tc.name)
			require.NotEmpty(t, out.Fields[tc.field], "%s: message for field %s in %v", tc.name, tc.field, out)
		}
		var out struct{ Error string }
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/jobs", tok, `{"app":"a","bogus":1}`, &out))
		require.Contains(t, out.Error, `unknown field "bogus"`)
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/jobs", tok, `{"app":`, &out))
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/jobs", tok, ``, &out))
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/jobs", tok, `{"slots":"many"}`, &out))
		require.Equal(t, http.StatusRequestEntityTooLarge, e.call("POST", "/api/v1/jobs", tok, `{"params":"`+strings.Repeat("x", 70<<10)+`"}`, &out))
		require.Equal(t, 0, e.countJobs(), "nothing written")

		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", tok, validJob, nil))
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/jobs", tok, validJob, nil))
		require.Equal(t, 1, e.countJobs())

		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/jobs/abc", tok, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/jobs/999", tok, nil, nil))
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/runs?status=weird", tok, nil, nil))
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/runs?limit=0", tok, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/nope", tok, nil, nil))
	})
}

func TestAuthRBACAndAudit(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		e.user("watcher", auth.RoleViewer)
		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/jobs", "", nil, nil))
		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/jobs", "forged", nil, nil))
		require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/login", "", map[string]string{"username": "ops", "password": "nope"}, nil))

		viewer := e.token("watcher")
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs", viewer, nil, nil))
		var denied struct{ Error string }
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/jobs", viewer, validJob, &denied))
		require.Contains(t, denied.Error, "needs operator")
		require.Equal(t, 0, e.countJobs())

		ops := e.token("ops")
		var job apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, validJob, &job))
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/jobs/"+itoa(job.ID)+"/trigger", viewer, nil, nil))
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(job.ID)+"/trigger", ops, nil, nil))
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/"+itoa(job.ID)+"/disable", ops, nil, nil))

		var rows []struct {
			Actor  string `db:"actor"`
			Action string `db:"action"`
		}
		require.NoError(t, e.st.DB().Select(&rows, `SELECT actor, action FROM audit_log WHERE action LIKE 'job.%' ORDER BY id`))
		require.Len(t, rows, 3)
		require.Equal(t, "ops", rows[0].Actor)
		require.Equal(t, []string{"job.create", "job.trigger", "job.disable"}, []string{rows[0].Action, rows[1].Action, rows[2].Action})

		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/logout", ops, nil, nil))
		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/jobs", ops, nil, nil), "token dead after logout")
	})
}

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		for range 5 {
			require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/login", "", map[string]string{"username": "ops", "password": "guess"}, nil))
		}
		require.Equal(t, http.StatusTooManyRequests, e.call("POST", "/api/v1/login", "", map[string]string{"username": "ops", "password": "password-ops"}, nil),
			"even the right password is refused while throttled")
	})
}

func TestCookieSessionsNeedCSRF(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		client := &cli.Client{Base: e.srv.URL, HTTP: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
		res, err := client.Send(context.Background(), http.MethodPost, "/api/v1/login", strings.NewReader(`{"username":"ops","password":"password-ops"}`),
			http.Header{"Content-Type": {"application/json"}})
		require.NoError(t, err)
		var login struct{ CSRF string }
		require.NoError(t, json.Unmarshal(res.Body, &login))
		var sessionCookie *http.Cookie
		for _, c := range res.Cookies() {
			if c.Name == api.SessionCookie {
				sessionCookie = c
			}
		}
		require.NotNil(t, sessionCookie)
		require.True(t, sessionCookie.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, sessionCookie.SameSite)

		// A GET with the cookie works without CSRF.
		res, err = client.Send(context.Background(), http.MethodGet, "/api/v1/jobs", nil, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.Status)

		body, _ := json.Marshal(validJob)
		post := func(csrf string) int {
			var header http.Header
			if csrf != "" {
				header = http.Header{api.CSRFHeader: {csrf}}
			}
			res, err := client.Send(context.Background(), http.MethodPost, "/api/v1/jobs", bytes.NewReader(body), header)
			require.NoError(t, err)
			return res.Status
		}
		require.Equal(t, http.StatusForbidden, post(""), "no CSRF header")
		require.Equal(t, http.StatusForbidden, post("wrong"), "wrong CSRF header")
		require.Equal(t, 0, e.countJobs())
		require.Equal(t, http.StatusCreated, post(login.CSRF))
	})
}

func (e *env) signed(path string, body any, secret string) (int, []byte) {
	data, err := json.Marshal(body)
	require.NoError(e.t, err)
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, bytes.NewReader(data))
	require.NoError(e.t, err)
	if secret != "" {
		protocol.Sign(req, secret, data, time.Now())
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}

func TestExecutorEndpointsAreAuthenticated(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		hb := protocol.HeartbeatRequest{InstanceID: "i-1", App: "billing", Address: "http://127.0.0.1:9", Capacity: 2, Handlers: []string{"settle.v1"}}
		code, _ := e.signed(protocol.PathHeartbeat, hb, "")
		require.Equal(t, http.StatusUnauthorized, code, "unsigned")
		code, _ = e.signed(protocol.PathHeartbeat, hb, protocol.NewSecret())
		require.Equal(t, http.StatusUnauthorized, code, "wrong secret")
		execs, err := e.st.Executors(context.Background())
		require.NoError(t, err)
		require.Empty(t, execs, "refused requests register nothing")

		code, out := e.signed(protocol.PathHeartbeat, hb, e.secret)
		require.Equal(t, http.StatusOK, code, string(out))
		var resp protocol.HeartbeatResponse
		require.NoError(t, json.Unmarshal(out, &resp))
		require.Positive(t, resp.ExecutorID)

		// Replaying the exact signed request is refused.
		data, _ := json.Marshal(hb)
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+protocol.PathHeartbeat, bytes.NewReader(data))
		protocol.Sign(req, e.secret, data, time.Now())
		replay := req.Clone(context.Background())
		replay.Body = io.NopCloser(bytes.NewReader(data))
		res, err := e.srv.Client().Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		res, err = e.srv.Client().Do(replay)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, "replay")

		// Results for tokens this executor does not hold are rejected.
		code, out = e.signed(protocol.PathResults, protocol.ResultsRequest{InstanceID: "i-1", Results: []protocol.SlotResult{{Token: 12345, Status: protocol.SlotSucceeded}}}, e.secret)
		require.Equal(t, http.StatusOK, code)
		var rr protocol.ResultsResponse
		require.NoError(t, json.Unmarshal(out, &rr))
		require.Equal(t, []int64{12345}, rr.Rejected)

		// An instance registered for one app cannot switch app.
		hb.App = "other"
		code, _ = e.signed(protocol.PathHeartbeat, hb, e.secret)
		require.Equal(t, http.StatusConflict, code)
		ex, err := e.st.ExecutorByInstance(context.Background(), "i-1")
		require.NoError(t, err)
		require.Equal(t, "billing", ex.App)
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestUpdatePauseCancelAndChildren(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		tok := e.token("ops")
		var a, b apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", tok, with("name", "a"), &a))
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", tok, map[string]any{"app": "billing", "name": "b", "handler": "h", "cron": "@hourly", "child_job_ids": []int64{a.ID}}, &b))
		require.Equal(t, []int64{a.ID}, b.ChildJobIDs)
		var bad struct{ Fields map[string]string }
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/jobs", tok, map[string]any{"app": "billing", "name": "c", "handler": "h", "cron": "@hourly", "child_job_ids": []int64{9999}}, &bad))
		require.Contains(t, bad.Fields["child_job_ids"], "does not exist")

		// a → b would close the cycle b → a.
		upd := with("name", "a")
		upd["child_job_ids"] = []int64{b.ID}
		upd["version"] = a.Version
		require.Equal(t, http.StatusBadRequest, e.call("PUT", "/api/v1/jobs/"+itoa(a.ID), tok, upd, &bad))
		require.Contains(t, bad.Fields["child_job_ids"], "cycle")

		// Optimistic lock: a stale version is refused.
		upd = with("name", "a")
		upd["cron"] = "0 4 * * *"
		upd["version"] = a.Version
		var a2 apitypes.Job
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/jobs/"+itoa(a.ID), tok, upd, &a2))
		require.Equal(t, "0 4 * * *", a2.Cron)
		require.Equal(t, a.Version+1, a2.Version)
		require.Equal(t, http.StatusConflict, e.call("PUT", "/api/v1/jobs/"+itoa(a.ID), tok, upd, nil), "stale version")
		upd["version"] = 0
		require.Equal(t, http.StatusBadRequest, e.call("PUT", "/api/v1/jobs/"+itoa(a.ID), tok, upd, nil), "version required")
		upd["version"] = a2.Version
		upd["name"] = "renamed"
		require.Equal(t, http.StatusBadRequest, e.call("PUT", "/api/v1/jobs/"+itoa(a.ID), tok, upd, nil), "name is identity")

		var paused apitypes.Job
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/"+itoa(a.ID)+"/pause", tok, nil, &paused))
		require.True(t, paused.Paused)
		require.Nil(t, paused.NextFireAt)
		var resumed apitypes.Job
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/"+itoa(a.ID)+"/resume", tok, nil, &resumed))
		require.False(t, resumed.Paused)
		require.NotNil(t, resumed.NextFireAt)

		var trig struct{ Run apitypes.Run }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(a.ID)+"/trigger", tok, nil, &trig))
		var cancelled struct{ Run apitypes.Run }
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/runs/"+itoa(trig.Run.ID)+"/cancel", tok, map[string]string{"reason": "test"}, &cancelled))
		require.Equal(t, "cancelled", cancelled.Run.Status)
		require.Contains(t, cancelled.Run.Error, "test")
		var again struct{ Error string }
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/runs/"+itoa(trig.Run.ID)+"/cancel", tok, nil, &again))
		require.Equal(t, "run "+itoa(trig.Run.ID)+" was cancelled; only pending or running runs can be cancelled", again.Error)
		require.Equal(t, http.StatusNotFound, e.call("POST", "/api/v1/runs/999999/cancel", tok, nil, nil))
		var noRetry struct{ Error string }
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/runs/"+itoa(trig.Run.ID)+"/retry", tok, nil, &noRetry))
		require.Contains(t, noRetry.Error, "no failed or cancelled slot")

		var alarms struct{ Groups []apitypes.AlarmGroupView }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/alarms", tok, nil, &alarms))
		require.Empty(t, alarms.Groups)
	})
}

func TestUsersPasswordsAndAudit(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("root", auth.RoleAdmin)
		e.user("ops", auth.RoleOperator)
		admin, ops := e.token("root"), e.token("ops")
		require.Equal(t, http.StatusForbidden, e.call("GET", "/api/v1/users", ops, nil, nil), "operators do not manage users")

		var created apitypes.UserView
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/users", admin, map[string]string{"username": "eve", "password": "long-enough-pw", "role": "viewer"}, &created))
		require.Equal(t, "viewer", created.Role)
		var bad struct{ Fields map[string]string }
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/users", admin, map[string]string{"username": "x", "password": "short", "role": "viewer"}, &bad))
		require.NotEmpty(t, bad.Fields["password"])
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/users", admin, map[string]string{"username": "y", "password": "long-enough-pw", "role": "god"}, &bad))
		require.NotEmpty(t, bad.Fields["role"])
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/users", admin, map[string]string{"username": "eve", "password": "long-enough-pw", "role": "viewer"}, nil))

		var list struct{ Users []apitypes.UserView }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/users", admin, nil, &list))
		require.Len(t, list.Users, 3)
		raw := struct{ Users []map[string]any }{}
		e.call("GET", "/api/v1/users", admin, nil, &raw)
		for _, u := range raw.Users {
			require.NotContains(t, u, "password_hash", "hashes never leave the server")
		}

		role := "operator"
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/users/"+itoa(created.ID), admin, map[string]any{"role": role}, &created))
		require.Equal(t, "operator", created.Role)

		// Changing one's password ends one's sessions.
		var bad2 struct{ Fields map[string]string }
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/me/password", ops, map[string]string{"old": "nope", "new": "new-password-1"}, &bad2))
		require.NotEmpty(t, bad2.Fields["old"])
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/me/password", ops, map[string]string{"old": "password-ops", "new": "new-password-1"}, nil))
		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/jobs", ops, nil, nil))
		var login struct{ Token string }
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/login", "", map[string]string{"username": "ops", "password": "new-password-1"}, &login))

		var rootUser apitypes.UserView
		for _, u := range list.Users {
			if u.Username == "root" {
				rootUser = u
			}
		}
		require.Equal(t, http.StatusConflict, e.call("DELETE", "/api/v1/users/"+itoa(rootUser.ID), admin, nil, nil), "no self-delete")
		require.Equal(t, http.StatusOK, e.call("DELETE", "/api/v1/users/"+itoa(created.ID), admin, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("DELETE", "/api/v1/users/"+itoa(created.ID), admin, nil, nil))

		actions := func(tok string) []string {
			var audit struct {
				Entries []apitypes.AuditView
			}
			require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/audit", tok, nil, &audit))
			var out []string
			for _, a := range audit.Entries {
				out = append(out, a.Action+" "+a.Object)
			}
			return out
		}
		require.Subset(t, actions(admin), []string{"user.create user/eve", "user.update user/eve", "user.delete user/eve", "user.password user/ops"})
		// Users and roles are the admins' business; an operator reads only
		// the entries about its own account (issue 17).
		require.ElementsMatch(t, []string{"login user/ops", "user.password user/ops", "login user/ops"}, actions(login.Token))
	})
}

// TestSavingAJobWarnsWhenNoExecutorHasItsHandler: a job is saved whatever
// the executors, but the answer (and that of validating it) says when no executor of its app has
// registered, or none has shown its handler, because its runs would wait
// and then fail; once one has, there is no warning.
func TestSavingAJobWarnsWhenNoExecutorHasItsHandler(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		tok := e.token("ops")
		var j apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", tok, validJob, &j))
		require.Len(t, j.Warnings, 1)
		require.Contains(t, j.Warnings[0], "no executor of app billing has registered yet")
		require.Equal(t, []apitypes.Message{{Code: "job.no_executor", Args: map[string]any{"app": "billing", "handler": "settle.v1"}}}, j.WarningCodes,
			"the warning as a code too, for the console")

		ctx := context.Background()
		_, err := e.st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "x", App: "billing", Address: "http://127.0.0.1:1", Capacity: 1, Handlers: []string{"other.v1"}})
		require.NoError(t, err)
		upd := with("description", "edited")
		upd["version"] = j.Version
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/jobs/"+itoa(j.ID), tok, upd, &j))
		require.Len(t, j.Warnings, 1)
		require.Contains(t, j.Warnings[0], "has shown handler settle.v1 yet")
		var checked struct {
			Warnings     []string
			WarningCodes []apitypes.Message `json:"warning_codes"`
		}
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", tok, validJob, &checked))
		require.Equal(t, j.Warnings, checked.Warnings, "validation warns as saving does (the console's form shows it while typing)")
		require.Equal(t, j.WarningCodes, checked.WarningCodes)
		require.Equal(t, "job.handler_not_seen", checked.WarningCodes[0].Code)

		_, err = e.st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: "y", App: "billing", Address: "http://127.0.0.1:2", Capacity: 1, Handlers: []string{"settle.v1"}})
		require.NoError(t, err)
		upd["version"] = j.Version
		var saved apitypes.Job // fresh: a field left out of the answer is not cleared by decoding
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/jobs/"+itoa(j.ID), tok, upd, &saved))
		require.Empty(t, saved.Warnings)
		var got apitypes.Job
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs/"+itoa(j.ID), tok, nil, &got))
		require.Empty(t, got.Warnings, "warnings come with saving, not with reading")
		checked.Warnings = nil
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", tok, validJob, &checked))
		require.Empty(t, checked.Warnings)
	})
}

// TestHeartbeatLosesSlotsTheProcessNoLongerReports: an executor process
// that accepted tokens (in its batch 2) and sends a heartbeat built after
// that batch without one of them no longer has it: the attempt is lost at
// once, placed again (a new unplaced attempt), and an executor_lost alarm
// says so; a heartbeat built before the batch, or without batch numbers,
// changes nothing.
func TestHeartbeatLosesSlotsTheProcessNoLongerReports(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		hb := protocol.HeartbeatRequest{InstanceID: "i-reconcile", App: "billing", Address: "http://127.0.0.1:9", Capacity: 4,
			Handlers: []string{"settle.v1"}, Incarnation: "p1", AcceptSeq: 1}
		code, out := e.signed(protocol.PathHeartbeat, hb, e.secret)
		require.Equal(t, http.StatusOK, code, string(out))
		ex, err := e.st.ExecutorByInstance(ctx, "i-reconcile")
		require.NoError(t, err)
		runID, tokens := startRunOn(t, e.st, ex.ID, "settle.v1", 2)
		require.NoError(t, e.st.RecordAccepted(ctx, ex.ID, nil, tokens, 2)) // the push answer of batch 2

		current := func() map[int]store.Attempt {
			all, err := e.st.Attempts(ctx, runID)
			require.NoError(t, err)
			out := map[int]store.Attempt{}
			for _, a := range all {
				if a.Current {
					out[a.Slot] = a
				}
			}
			return out
		}
		beat := func(seq int64, running ...int64) {
			t.Helper()
			hb.AcceptSeq, hb.Running = seq, nil
			for _, tok := range running {
				hb.Running = append(hb.Running, protocol.RunningSlot{Token: tok, Progress: "1/2"})
			}
			code, out := e.signed(protocol.PathHeartbeat, hb, e.secret)
			require.Equal(t, http.StatusOK, code, string(out))
		}
		beat(1)                       // built before batch 2: proves nothing
		beat(0)                       // no batch numbers: reconciliation off
		beat(2, tokens[0], tokens[1]) // both reported
		for slot, a := range current() {
			require.Equal(t, tokens[slot], a.Token, "slot %d stays on its token", slot)
		}

		beat(3, tokens[1]) // slot 0 is gone from the process
		now := current()
		require.Equal(t, tokens[1], now[1].Token)
		require.NotEqual(t, tokens[0], now[0].Token, "slot 0 has a new attempt")
		require.False(t, now[0].ExecutorID.Valid, "unplaced: the leader places it again")
		require.Equal(t, 2, now[0].Attempt)
		lost, err := e.st.Attempts(ctx, runID)
		require.NoError(t, err)
		for _, a := range lost {
			if a.Token == tokens[0] {
				require.Equal(t, store.AttemptLost, a.Status)
			}
		}
		alarms, err := e.st.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1)
		require.Equal(t, store.AlarmExecutorLost, alarms[0].Kind)
		require.Contains(t, alarms[0].Message, "no longer reports 1 slot(s)")
	})
}
