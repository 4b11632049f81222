package api_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/auth"
)

var apiKeyRE = regexp.MustCompile(`^sjt_[a-z2-7]{52}$`)

type tokenOut struct {
	ID         int64   `json:"id"`
	User       string  `json:"user"`
	Name       string  `json:"name"`
	Prefix     string  `json:"prefix"`
	RoleCap    string  `json:"role_cap"`
	State      string  `json:"state"`
	LastUsedAt *string `json:"last_used_at"`
	ExpiresAt  *string `json:"expires_at"`
}

// newAPIKey creates an API token as the holder of bearer and returns its
// id and secret.
func (e *env) newAPIKey(bearer string, body map[string]any) (int64, string) {
	e.t.Helper()
	var out struct {
		Token  tokenOut
		Secret string
	}
	code := e.call("POST", "/api/v1/tokens", bearer, body, &out)
	require.Equal(e.t, http.StatusCreated, code)
	require.Regexp(e.t, apiKeyRE, out.Secret)
	require.Equal(e.t, out.Secret[:12], out.Token.Prefix)
	return out.Token.ID, out.Secret
}

func (e *env) auditActions(object string) []string {
	var acts []string
	require.NoError(e.t, e.st.DB().Select(&acts, `SELECT action FROM audit_log WHERE object = ? ORDER BY id`, object))
	return acts
}

// auditActionsIn is auditActions of the entries under app.
func (e *env) auditActionsIn(app, object string) []string {
	var acts []string
	require.NoError(e.t, e.st.DB().Select(&acts, e.st.DB().Rebind(`SELECT action FROM audit_log WHERE app = ? AND object = ? ORDER BY id`), app, object))
	return acts
}

func TestAPIKeyActsAsItsUser(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		session := e.token("ops")
		id, secret := e.newAPIKey(session, map[string]any{"name": "ci deploy", "expires_in_days": 30})

		var me struct{ Username, Role string }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", secret, nil, &me))
		require.Equal(t, "ops", me.Username)
		require.Equal(t, auth.RoleOperator, me.Role)
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", secret, validJob, nil), "no CSRF needed with a bearer token")

		var list struct{ Tokens []tokenOut }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/tokens", secret, nil, &list))
		require.Len(t, list.Tokens, 1)
		tok := list.Tokens[0]
		require.Equal(t, id, tok.ID)
		require.Equal(t, "ops", tok.User)
		require.Equal(t, "ci deploy", tok.Name)
		require.Equal(t, "active", tok.State)
		require.NotNil(t, tok.LastUsedAt, "use is recorded")
		require.NotNil(t, tok.ExpiresAt)
		var raw string
		require.NoError(t, e.st.DB().Get(&raw, `SELECT hash FROM api_token WHERE id = ?`, id))
		require.Equal(t, auth.HashToken(secret), raw, "only the hash is stored")

		// The job was created by ops, and the creation of the token is audited.
		var actor string
		require.NoError(t, e.st.DB().Get(&actor, `SELECT actor FROM audit_log WHERE action = 'job.create'`))
		require.Equal(t, "ops", actor)
		require.Equal(t, []string{"token.create"}, e.auditActions("token/"+strconv.FormatInt(id, 10)))
	})
}

func TestAPIKeyRoleCap(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("root", auth.RoleAdmin)
		e.user("eve", auth.RoleViewer)
		root := e.token("root")

		_, capped := e.newAPIKey(root, map[string]any{"name": "read only", "role": auth.RoleViewer})
		var me struct{ Role string }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", capped, nil, &me))
		require.Equal(t, auth.RoleViewer, me.Role)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs", capped, nil, nil))
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/jobs", capped, validJob, nil))
		require.Equal(t, http.StatusForbidden, e.call("GET", "/api/v1/users", capped, nil, nil))

		// A capped token cannot mint a stronger one, with or without asking.
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/tokens", capped, map[string]any{"name": "up", "role": auth.RoleAdmin}, nil))
		_, minted := e.newAPIKey(capped, map[string]any{"name": "child"})
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/me", minted, nil, &me))
		require.Equal(t, auth.RoleViewer, me.Role)

		// A viewer cannot ask for more than viewer either.
		var out struct{ Error string }
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/tokens", e.token("eve"), map[string]any{"name": "x", "role": auth.RoleOperator}, &out))
		require.Contains(t, out.Error, "cannot have more rights")

		// A cap above the user's role does not raise it: demote root, the
		// uncapped admin token follows.
		_, full := e.newAPIKey(root, map[string]any{"name": "full"})
		_, err := e.st.DB().Exec(`UPDATE app_user SET role = 'viewer' WHERE username = 'root'`)
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, e.call("GET", "/api/v1/users", full, nil, nil))
	})
}

func TestAPIKeyBadRequests(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		tok := e.token("ops")
		for _, body := range []any{
			map[string]any{"name": ""},
			map[string]any{"name": " padded"},
			map[string]any{"name": "ok", "role": "god"},
			map[string]any{"name": "ok", "expires_in_days": -1},
			map[string]any{"name": "ok", "expires_in_days": 4000},
			`{"name":"ok","bogus":1}`,
		} {
			require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/tokens", tok, body, nil), "%v", body)
		}
		var n int
		require.NoError(t, e.st.DB().Get(&n, `SELECT COUNT(*) FROM api_token`))
		require.Zero(t, n)
		require.Equal(t, http.StatusUnauthorized, e.call("POST", "/api/v1/tokens", "", map[string]any{"name": "x"}, nil))
		require.Equal(t, http.StatusForbidden, e.call("GET", "/api/v1/tokens?all=true", tok, nil, nil))
	})
}

func TestAPIKeyRevokedOrExpiredIsRefusedClearly(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		e.user("other", auth.RoleOperator)
		e.user("root", auth.RoleAdmin)
		ops := e.token("ops")
		id, secret := e.newAPIKey(ops, map[string]any{"name": "laptop"})
		path := "/api/v1/tokens/" + strconv.FormatInt(id, 10)

		// Someone else's token looks like a missing one; an admin may revoke it.
		require.Equal(t, http.StatusNotFound, e.call("DELETE", path, e.token("other"), nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("DELETE", "/api/v1/tokens/99999", ops, nil, nil))
		var rev struct {
			Token   tokenOut
			Revoked bool
		}
		require.Equal(t, http.StatusOK, e.call("DELETE", path, e.token("root"), nil, &rev))
		require.True(t, rev.Revoked)
		require.Equal(t, "revoked", rev.Token.State)
		require.Equal(t, http.StatusOK, e.call("DELETE", path, ops, nil, &rev), "revoking twice is fine")
		require.False(t, rev.Revoked)
		require.Equal(t, []string{"token.create", "token.revoke"}, e.auditActions("token/"+strconv.FormatInt(id, 10)))

		res := e.do(http.MethodGet, "/api/v1/jobs", secret, "", nil)
		require.Equal(t, http.StatusUnauthorized, res.Status)
		require.Equal(t, `Bearer error="invalid_token"`, res.Header.Get("WWW-Authenticate"))

		var out struct{ Error string }
		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/jobs", secret, nil, &out))
		require.Contains(t, out.Error, secret[:12])
		require.Contains(t, out.Error, "was revoked at")
		require.Contains(t, out.Error, "create a new key")

		// Expired (by the database clock).
		id2, secret2 := e.newAPIKey(ops, map[string]any{"name": "short", "expires_in_days": 1})
		_, err := e.st.DB().Exec(`UPDATE api_token SET expires_at = 1000 WHERE id = ?`, id2)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/jobs", secret2, nil, &out))
		require.Contains(t, out.Error, "expired at 1970-01-01T00:00:01Z")

		// Unknown and malformed tokens.
		_, bogus := e.newAPIKey(ops, map[string]any{"name": "deleted"})
		_, err = e.st.DB().ExecContext(context.Background(), `DELETE FROM api_token WHERE name = 'deleted'`)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/jobs", bogus, nil, &out))
		require.Contains(t, out.Error, "unknown API key")
		require.Equal(t, http.StatusUnauthorized, e.call("GET", "/api/v1/jobs", "sjt_short", nil, &out))
		require.Contains(t, out.Error, "malformed API key")

		// The admin sees everyone's tokens with their state.
		var list struct{ Tokens []tokenOut }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/tokens?all=true", e.token("root"), nil, &list))
		states := map[string]string{}
		for _, tk := range list.Tokens {
			states[tk.Name] = tk.State
		}
		require.Equal(t, map[string]string{"laptop": "revoked", "short": "expired"}, states)
	})
}
