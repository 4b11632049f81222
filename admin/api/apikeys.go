package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
)

// Personal API keys (admin/ops apikeys.go: their format and rules). Here:
// authenticating a request made with one, and the routes, under
// /api/v1/api-keys and under their old name /api/v1/tokens, kept for
// existing scripts. Revoked and expired keys are refused with 401 and a
// message that says which key and since when.

// APIKeyPrefix starts every API key (ops.APIKeyPrefix).
const APIKeyPrefix = ops.APIKeyPrefix

// apiKeyRoutes registers the routes of one's own API keys under base.
func (s *Server) apiKeyRoutes(view gin.IRoutes, base string) {
	view.GET(base, s.listAPIKeys)
	view.POST(base, s.createAPIKey)
	view.DELETE(base+"/:id", s.revokeAPIKey) // own; admins: anyone's
}

// sessionTokenLen is the length of session tokens (auth.NewToken).
var sessionTokenLen = len(auth.NewToken())

// looksLikeAPIKey tells API keys from session tokens among bearer
// credentials. A session token is base64url and may start with "sjt_" too
// (one in 16 million), but it never has an API key's length.
func looksLikeAPIKey(s string) bool {
	return strings.HasPrefix(s, APIKeyPrefix) && len(s) != sessionTokenLen
}

// credentialRefused answers 401 with the RFC 6750 challenge.
func credentialRefused(c *gin.Context, msg string) {
	c.Header("WWW-Authenticate", `Bearer error="invalid_token"`)
	fail(c, http.StatusUnauthorized, msg)
}

// apiKeyUser authenticates a bearer API key and returns the user it acts
// as, with the effective role; it answers the request itself when it fails.
func (s *Server) apiKeyUser(c *gin.Context, secret string) (store.User, bool) {
	if !ops.WellFormedAPIKey(secret) {
		credentialRefused(c, "malformed API key: expected "+APIKeyPrefix+" followed by "+strconv.Itoa(ops.APIKeyRandomLen)+" characters; copy the whole key")
		return store.User{}, false
	}
	k, u, err := s.st.AuthenticateAPIKey(c.Request.Context(), auth.HashToken(secret))
	switch {
	case errors.Is(err, store.ErrNotFound):
		credentialRefused(c, "unknown API key: it was not issued by this cluster or its user was deleted; create a new one (POST /api/v1/api-keys)")
		return u, false
	case errors.Is(err, store.ErrAPIKeyRevoked), errors.Is(err, store.ErrAPIKeyExpired):
		credentialRefused(c, err.Error()+"; create a new key (POST /api/v1/api-keys)")
		return u, false
	case err != nil:
		s.internal(c, err)
		return u, false
	}
	if u, err = s.ops.Recheck(c.Request.Context(), u); err != nil { // a directory user: ask again (sso.go)
		s.opsFailed(c, err)
		return u, false
	}
	if k.RoleCap != "" && auth.Allows(u.Role, k.RoleCap) {
		u.Role = k.RoleCap // a cap lowers the role; it never raises it above the user's
	}
	c.Set("api_key", k)
	return u, true
}

// currentAPIKey returns the API key of the request, if it used one.
func currentAPIKey(c *gin.Context) (store.APIKey, bool) {
	v, ok := c.Get("api_key")
	if !ok {
		return store.APIKey{}, false
	}
	k, ok := v.(store.APIKey)
	return k, ok
}

// listAPIKeys lists the caller's API keys; admins may ask for everyone's
// with ?all=true.
func (s *Server) listAPIKeys(c *gin.Context) {
	all, _ := strconv.ParseBool(c.Query("all"))
	keys, err := s.ops.APIKeys(c.Request.Context(), actor(c), all)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, keys)
}

func (s *Server) createAPIKey(c *gin.Context) {
	var req apitypes.APIKeyRequest
	if !decode(c, &req) {
		return
	}
	k, err := s.ops.CreateAPIKey(c.Request.Context(), actor(c), req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusCreated, k)
}

// revokeAPIKey revokes one of the caller's API keys; an admin may revoke
// anyone's. Revoking a revoked key changes nothing and answers 200.
func (s *Server) revokeAPIKey(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	k, err := s.ops.RevokeAPIKey(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, k)
}
