package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// sqliteEnv serves the API on a fresh SQLite store: for tests of the HTTP
// layer, where the dialect does not matter.
func sqliteEnv(t *testing.T) *env {
	return newEnv(t, storetest.Open(t, sqlfiles.SQLite))
}

// send sends body with the given Content-Type ("" for none), and the
// bearer token when set, and returns the answer with its error message.
func (e *env) send(method, path, token, contentType, body string) (*cli.Answer, string) {
	e.t.Helper()
	res := e.do(method, path, token, contentType, strings.NewReader(body))
	var out struct{ Error string }
	_ = json.Unmarshal(res.Body, &out)
	return res, out.Error
}

// TestLoginRefusesBodiesNotDeclaredJSON: login CSRF needs a cross-site form
// (form encodings, text/plain) or a body without a type; login answers 415
// to them before it looks at the credentials, with what to send instead.
func TestLoginRefusesBodiesNotDeclaredJSON(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	e.user("ops", auth.RoleOperator)
	creds := `{"username":"ops","password":"password-ops"}`
	for _, ct := range []string{"", "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp"} {
		res, msg := e.send("POST", "/api/v1/login", "", ct, creds)
		require.Equal(t, http.StatusUnsupportedMediaType, res.Status, "Content-Type %q", ct)
		require.Contains(t, msg, "Content-Type: application/json", "Content-Type %q", ct)
	}
	res, msg := e.send("POST", "/api/v1/login", "", "application/json; charset=utf-8", creds)
	require.Equal(t, http.StatusOK, res.Status, msg)
}

// TestAPIAnswersAreNotStoredOrSniffed: every answer under /api/v1, errors
// included, forbids caching and content sniffing; the console's files keep
// their own caching.
func TestAPIAnswersAreNotStoredOrSniffed(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	e.user("ops", auth.RoleOperator)
	login, _ := e.send("POST", "/api/v1/login", "", "application/json", `{"username":"ops","password":"password-ops"}`)
	wrong, _ := e.send("POST", "/api/v1/login", "", "application/json", `{"username":"ops","password":"not the password"}`)
	notJSON, _ := e.send("POST", "/api/v1/login", "", "text/plain", `{}`)
	unauth, _ := e.send("GET", "/api/v1/jobs", "", "", "")
	missing, _ := e.send("GET", "/api/v1/no-such-route", "", "", "")
	for what, res := range map[string]*cli.Answer{"POST /api/v1/login": login, "POST /api/v1/login (wrong password)": wrong,
		"POST /api/v1/login (text/plain)": notJSON, "GET /api/v1/jobs (no token)": unauth, "GET /api/v1/no-such-route": missing} {
		what += " " + strconv.Itoa(res.Status)
		require.Equal(t, "no-store", res.Header.Get("Cache-Control"), what)
		require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), what)
	}
	require.Equal(t, http.StatusOK, login.Status)
	for _, path := range []string{"/", "/ui/console.css"} {
		res, _ := e.send("GET", path, "", "", "")
		require.Equal(t, http.StatusOK, res.Status, path)
		require.Equal(t, "no-cache", res.Header.Get("Cache-Control"), "%s: the console revalidates its files", path)
		require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), path)
	}
}

// TestPasswordPolicyWhereverAPasswordIsSet: creating a user, an admin's
// reset and one's own change refuse weak passwords with 400 and the
// policy's reason on the field; passphrases with spaces and any letters
// are welcome.
func TestPasswordPolicyWhereverAPasswordIsSet(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	e.user("root", auth.RoleAdmin)
	e.user("ops", auth.RoleOperator)
	root, ops := e.token("root"), e.token("ops")
	type refusal struct {
		Error  string
		Fields map[string]string
	}
	refused := func(method, path, token string, body map[string]any, field, reason string) {
		t.Helper()
		var out refusal
		require.Equal(t, http.StatusBadRequest, e.call(method, path, token, body, &out), "%v", body)
		require.Contains(t, out.Fields[field], reason, "%v", body)
		require.Contains(t, out.Error, reason)
	}
	refused("POST", "/api/v1/users", root, map[string]any{"username": "eve", "password": "short-pw", "role": "viewer"}, "password", "8 characters long; use at least 12")
	refused("POST", "/api/v1/users", root, map[string]any{"username": "eve", "password": "Password1234", "role": "viewer"}, "password", "most common passwords")
	refused("POST", "/api/v1/users", root, map[string]any{"username": "eve", "password": strings.Repeat("a", 80), "role": "viewer"}, "password", "80 bytes long")

	opsUser := e.userID("ops")
	refused("PUT", "/api/v1/users/"+itoa(opsUser), root, map[string]any{"password": "qwertyuiop123"}, "password", "most common passwords")
	refused("PUT", "/api/v1/users/"+itoa(opsUser), root, map[string]any{"password": "abcabcabcabc"}, "password", "repeats a short pattern")
	refused("POST", "/api/v1/me/password", ops, map[string]any{"old": "password-ops", "new": "Summer2024!!"}, "new", "most common passwords")
	refused("POST", "/api/v1/me/password", ops, map[string]any{"old": "password-ops", "new": "too short"}, "new", "use at least 12")

	passphrase := "Grüne Äpfel im Schnee 雪"
	require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/users", root, map[string]any{"username": "eve", "password": passphrase, "role": "viewer"}, nil))
	require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/login", "", map[string]string{"username": "eve", "password": passphrase}, nil))
}

func (e *env) userID(name string) int64 {
	e.t.Helper()
	u, err := e.st.UserByName(e.t.Context(), name)
	require.NoError(e.t, err)
	return u.ID
}

// TestOwnPasswordChangeIsThrottled: wrong current passwords on
// POST /me/password are counted per user like failed logins: after 5 within
// a minute even the right one is refused (429, Retry-After), so that a
// stolen session cannot be used to guess the password. Refusals of the new
// password by the policy do not count; other users are not affected.
func TestOwnPasswordChangeIsThrottled(t *testing.T) {
	t.Parallel()
	// A clock that does not move: the 20 bcrypt-bound requests before the
	// throttled one cannot outlast the throttle's minute on a loaded
	// machine (they took long enough under -race to let it lapse).
	e := newEnvWithClock(t, storetest.Open(t, sqlfiles.SQLite), clock.NewManual(time.Now()))
	e.user("ops", auth.RoleOperator)
	e.user("eve", auth.RoleViewer)
	ops, eve := e.token("ops"), e.token("eve")
	change := func(token, old, new string) (int, *cli.Answer) {
		t.Helper()
		body, err := json.Marshal(map[string]string{"old": old, "new": new})
		require.NoError(t, err)
		res, _ := e.send("POST", "/api/v1/me/password", token, "application/json", string(body))
		return res.Status, res
	}
	for range 3 * 5 {
		code, _ := change(ops, "password-ops", "password1234")
		require.Equal(t, http.StatusBadRequest, code, "a weak new password is refused first and not counted")
	}
	for i := range 5 {
		code, _ := change(ops, "guess number "+strconv.Itoa(i), "a much better passphrase")
		require.Equal(t, http.StatusBadRequest, code)
	}
	code, res := change(ops, "password-ops", "a much better passphrase")
	require.Equal(t, http.StatusTooManyRequests, code, "throttled: even the right current password is refused")
	secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, secs > 0 && secs <= 60, "Retry-After %d", secs)
	code, _ = change(eve, "password-eve", "a much better passphrase")
	require.Equal(t, http.StatusOK, code, "another user is not throttled")
}

// TestLoginTakesAsLongForUnknownUsers: a login with an unknown user name
// runs bcrypt against a dummy hash, so its answer takes about as long as a
// wrong password of a real user and does not reveal which names exist.
// (Before, it answered at once.) The fastest of a few tries of each is
// compared, which a busy machine delays little.
func TestLoginTakesAsLongForUnknownUsers(t *testing.T) {
	t.Parallel()
	e := sqliteEnv(t)
	e.user("ops", auth.RoleOperator)
	timed := func(user string) time.Duration {
		start := time.Now()
		require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/login", "", map[string]string{"username": user, "password": "not the password"}, nil))
		return time.Since(start)
	}
	known, unknown := time.Duration(1<<62), time.Duration(1<<62)
	for i := range 3 {
		known = min(known, timed("ops"))
		unknown = min(unknown, timed("nobody-"+strconv.Itoa(i)))
	}
	require.Greater(t, unknown, known/4, "an unknown user (%s) must cost a bcrypt like a known one (%s)", unknown, known)
}

// TestLoginThrottleCountsEverySpellingOfAUser: the database's collation
// may fold more than lower case does (MariaDB's finds "sam" for "ſam",
// with the long s); wrong logins under such spellings count against the
// user found, so 5 of them throttle the user's own spelling too. Where the
// database finds no user for the spelling (SQLite's NOCASE folds ASCII
// only), those attempts are a made-up name's and the user is not held.
func TestLoginThrottleCountsEverySpellingOfAUser(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("sam", auth.RoleOperator)
		_, err := e.st.UserByName(t.Context(), "ſam")
		folds := err == nil
		if !folds {
			require.ErrorIs(t, err, store.ErrNotFound)
		}
		for _, spelling := range []string{"ſam", "ſAm", "ſaM", "ſAM", "SAM"} {
			require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/login", "", map[string]string{"username": spelling, "password": "guess"}, nil))
		}
		want := http.StatusTooManyRequests
		if !folds {
			want = http.StatusOK // four attempts of a made-up name and one of sam's
		}
		require.Equal(t, want, e.call("POST", "/api/v1/login", "", map[string]string{"username": "sam", "password": "password-sam"}, nil),
			"the database finds sam for ſam: %v", folds)
		t.Logf("%s: the database finds sam for ſam: %v", e.st.Dialect(), folds)
	})
}

// TestValidateIsScopedToTheUsersApps: the preview of a job of an app the
// user may not manage would show whether that app has a calendar (by id) and which
// handlers its executors have: refused before anything is read.
func TestValidateIsScopedToTheUsersApps(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("bill", auth.RoleOperator)
		require.NoError(t, e.st.SetUserApps(t.Context(), e.userID("bill"), []string{"billing"}))
		tok := e.token("bill")
		job := map[string]any{"app": "payroll", "name": "n", "handler": "h", "cron": "0 3 * * *", "calendar_id": 1}
		var ans struct {
			Error  string
			Fields map[string]string
		}
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/jobs/validate", tok, job, &ans), "%+v", ans)
		require.Equal(t, "you may not manage jobs of app payroll", ans.Error)
		require.Contains(t, ans.Fields["app"], "not one of your apps")
		job["app"] = "billing"
		require.NotEqual(t, http.StatusForbidden, e.call("POST", "/api/v1/jobs/validate", tok, job, nil), "their own app is previewed")
	})
}

// TestManualRunsAreLimitedPerCaller: with ManualRunsPerMinute 3, a user's
// fourth trigger, backfill, retry or rerun within the minute is 429 with
// Retry-After and starts nothing; another user, and the user's own API
// key, have their own count; a minute later the user may again.
func TestManualRunsAreLimitedPerCaller(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		clk := clock.NewManual(time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
		h, err := api.New(api.Config{Store: e.st, ExecutorSecret: e.secret, Clock: clk, ManualRunsPerMinute: 3})
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		e.srv = srv
		e.user("ops", auth.RoleOperator)
		e.user("eve", auth.RoleOperator)
		ops, eve := e.token("ops"), e.token("eve")
		var job apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, validJob, &job))
		trigger := "/api/v1/jobs/" + itoa(job.ID) + "/trigger"
		backfill := "/api/v1/jobs/" + itoa(job.ID) + "/backfill"
		trig := func(tok string) int { // a second apart: each trigger is a run of its own instant
			clk.Advance(time.Second)
			return e.call("POST", trigger, tok, nil, nil)
		}
		require.Equal(t, http.StatusCreated, trig(ops))
		require.Equal(t, http.StatusCreated, trig(ops))
		require.Equal(t, http.StatusOK, e.call("POST", backfill, ops, map[string]any{"from": "2026-11-01", "to": "2026-11-02", "dry_run": true}, nil))
		clk.Advance(time.Second)
		code, msg := e.raw("POST", trigger, ops, nil, "")
		require.Equal(t, http.StatusTooManyRequests, code)
		require.Contains(t, msg, "too many manual runs (trigger, backfill, retry, rerun) from you: at most 3 tries per 1m")
		require.Equal(t, 2, e.countRuns(), "the refused trigger started nothing")

		require.Equal(t, http.StatusCreated, trig(eve), "eve has her own count")
		_, key := e.newAPIKey(ops, map[string]any{"name": "ci"})
		require.Equal(t, http.StatusCreated, trig(key), "an API key counts as its own caller")

		clk.Advance(time.Minute)
		require.Equal(t, http.StatusCreated, trig(ops), "a minute later")
	})
}

func (e *env) countRuns() int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.st.DB().Get(&n, `SELECT COUNT(*) FROM job_run`))
	return n
}
