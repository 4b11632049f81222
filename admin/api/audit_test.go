package api_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/auth"
)

// auditEntry is an entry of GET /api/v1/audit.
type auditEntry struct {
	Actor, Action, Object string
	At                    time.Time
	TokenID               *int64 `json:"token_id"`
	TokenName             string `json:"token_name"`
}

func (e *env) audit(bearer string, query url.Values) (int, []auditEntry) {
	e.t.Helper()
	var out struct{ Entries []auditEntry }
	code := e.call("GET", "/api/v1/audit?"+query.Encode(), bearer, nil, &out)
	return code, out.Entries
}

func actions(entries []auditEntry) []string {
	out := make([]string, len(entries))
	for i, a := range entries {
		out[i] = a.Action + " " + a.Object
	}
	return out
}

// TestAuditSaysWhichTokenActedAndWhoFailedToLogIn: an entry written
// through an API token names the token; a failed login is an entry (the
// name only when it is a user's); the log filters by actor, action and
// object prefixes and time, with LIKE's characters taken literally.
func TestAuditSaysWhichTokenActedAndWhoFailedToLogIn(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("root", auth.RoleAdmin)
		e.user("ops", auth.RoleOperator)
		root := e.token("root")
		session := e.token("ops")
		tokenID, secret := e.newAPIKey(session, map[string]any{"name": "ci deploy", "expires_in_days": 30})
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", secret, validJob, nil))
		require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/login", "", map[string]string{"username": "ops", "password": "not-it"}, nil))
		require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/login", "", map[string]string{"username": "my-secret-password", "password": "x"}, nil))

		code, all := e.audit(root, nil)
		require.Equal(t, http.StatusOK, code)
		byAction := map[string]auditEntry{}
		for _, a := range all {
			byAction[a.Action+" "+a.Object] = a
		}
		created := byAction["job.create job/1"]
		require.Equal(t, "ops", created.Actor)
		require.NotNil(t, created.TokenID, "the job was created with a token: %+v", all)
		require.Equal(t, tokenID, *created.TokenID)
		require.Equal(t, "ci deploy", created.TokenName)
		tok := byAction["token.create token/"+itoa(tokenID)]
		require.Nil(t, tok.TokenID, "the token was created from a console session")
		require.Equal(t, "ops", byAction["login.failed user/ops"].Actor)
		require.Contains(t, byAction, "login.failed user/(no such user)")
		for _, a := range all {
			require.NotContains(t, a.Actor+a.Object, "my-secret-password", "a name that is no user's is not written")
		}

		// ops reads the failed login on their own account, not the other.
		_, own := e.audit(session, url.Values{"action": {"login."}})
		require.Equal(t, []string{"login.failed user/ops"}, actions(own))

		// Filters.
		_, got := e.audit(root, url.Values{"actor": {"ops"}, "action": {"job."}})
		require.Equal(t, []string{"job.create job/1"}, actions(got))
		_, got = e.audit(root, url.Values{"object": {"token/"}})
		require.Equal(t, []string{"token.create token/" + itoa(tokenID)}, actions(got))
		_, got = e.audit(root, url.Values{"object": {"%"}})
		require.Empty(t, got, "%% is a character, not a pattern")
		_, got = e.audit(root, url.Values{"action": {"login_failed"}})
		require.Empty(t, got, "_ is a character, not a pattern")
		last := all[0].At
		_, got = e.audit(root, url.Values{"from": {last.Add(time.Millisecond).Format(time.RFC3339Nano)}})
		require.Empty(t, got)
		var before []auditEntry // what to (exclusive) must leave
		for _, a := range all {
			if a.Actor == "ops" && a.At.Before(created.At) {
				before = append(before, a)
			}
		}
		_, got = e.audit(root, url.Values{"to": {created.At.Format(time.RFC3339Nano)}, "actor": {"ops"}})
		require.Equal(t, actions(before), actions(got), "to is exclusive")

		var bad struct{ Error string }
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/audit?from=yesterday", root, nil, &bad))
		require.Contains(t, bad.Error, "from must be an RFC 3339 time")
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/audit?from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", root, nil, &bad))
		require.Contains(t, bad.Error, "to must be after from")
	})
}
