package api

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// Personal API tokens.
//
// A token is APITokenPrefix followed by 52 lower-case base32 characters
// (256 random bits), sent as "Authorization: Bearer sjt_…". It acts as its
// user, with the user's current role, lowered to the token's role cap when
// it has one. The secret is shown once, in the answer to its creation; the
// database keeps its SHA-256 (auth.HashToken): a fast hash is enough for a
// long random secret, there is nothing to guess. Revoked and expired tokens
// are refused with 401 and a message that says which token and since when.

// APITokenPrefix starts every API token, so that the server (and secret
// scanners) can tell them from session tokens.
const APITokenPrefix = "sjt_"

const (
	apiTokenRandomLen = 52 // base32 characters of 32 random bytes, no padding
	apiTokenShownLen  = 8  // characters of the random part kept as the display prefix
	maxTokenDays      = 3650
)

var apiTokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newAPIToken returns a new secret and its display prefix.
func newAPIToken() (secret, prefix string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	secret = APITokenPrefix + apiTokenEncoding.EncodeToString(b)
	return secret, secret[:len(APITokenPrefix)+apiTokenShownLen]
}

// sessionTokenLen is the length of session tokens (auth.NewToken).
var sessionTokenLen = len(auth.NewToken())

// looksLikeAPIToken tells API tokens from session tokens among bearer
// tokens. A session token is base64url and may start with "sjt_" too (one
// in 16 million), but it never has an API token's length.
func looksLikeAPIToken(s string) bool {
	return strings.HasPrefix(s, APITokenPrefix) && len(s) != sessionTokenLen
}

// wellFormedAPIToken checks the shape of a token before any database read.
func wellFormedAPIToken(s string) bool {
	rest, ok := strings.CutPrefix(s, APITokenPrefix)
	if !ok || len(rest) != apiTokenRandomLen {
		return false
	}
	for _, r := range rest {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

// tokenRefused answers 401 with the RFC 6750 challenge.
func tokenRefused(c *gin.Context, msg string) {
	c.Header("WWW-Authenticate", `Bearer error="invalid_token"`)
	fail(c, http.StatusUnauthorized, msg)
}

// apiTokenUser authenticates a bearer API token and returns the user it acts
// as, with the effective role; it answers the request itself when it fails.
func (s *Server) apiTokenUser(c *gin.Context, secret string) (store.User, bool) {
	if !wellFormedAPIToken(secret) {
		tokenRefused(c, "malformed API token: expected "+APITokenPrefix+" followed by "+strconv.Itoa(apiTokenRandomLen)+" characters; copy the whole token")
		return store.User{}, false
	}
	t, u, err := s.st.AuthenticateAPIToken(c.Request.Context(), auth.HashToken(secret))
	switch {
	case errors.Is(err, store.ErrNotFound):
		tokenRefused(c, "unknown API token: it was not issued by this cluster or its user was deleted; create a new one (POST /api/v1/tokens)")
		return u, false
	case errors.Is(err, store.ErrTokenRevoked), errors.Is(err, store.ErrTokenExpired):
		tokenRefused(c, err.Error()+"; create a new token (POST /api/v1/tokens)")
		return u, false
	case err != nil:
		s.internal(c, err)
		return u, false
	}
	if t.RoleCap != "" && auth.Allows(u.Role, t.RoleCap) {
		u.Role = t.RoleCap // a cap lowers the role; it never raises it above the user's
	}
	c.Set("api_token", t)
	return u, true
}

// currentToken returns the API token of the request, if it used one.
func currentToken(c *gin.Context) (store.APIToken, bool) {
	v, ok := c.Get("api_token")
	if !ok {
		return store.APIToken{}, false
	}
	t, ok := v.(store.APIToken)
	return t, ok
}

func (s *Server) tokenView(t store.APIToken) apitypes.TokenView {
	v := apitypes.TokenView{
		ID: t.ID, User: t.Username, Name: t.Name, Prefix: t.Prefix, RoleCap: t.RoleCap, State: "active",
		CreatedAt: msTime(t.CreatedAt), LastUsedAt: optTime(t.LastUsedAt), ExpiresAt: optTime(t.ExpiresAt), RevokedAt: optTime(t.RevokedAt),
		ParentID: optID(t.ParentID),
	}
	switch {
	case t.RevokedAt.Valid:
		v.State = "revoked"
	case t.ExpiresAt.Valid && t.ExpiresAt.Int64 <= s.cfg.Clock.Now().UnixMilli():
		v.State = "expired"
	}
	return v
}

// listTokens lists the caller's tokens; admins may ask for everyone's
// with ?all=true.
func (s *Server) listTokens(c *gin.Context) {
	u := currentUser(c)
	userID := u.ID
	if all, _ := strconv.ParseBool(c.Query("all")); all {
		if !auth.Allows(u.Role, auth.RoleAdmin) {
			fail(c, http.StatusForbidden, "role "+u.Role+" may list only its own tokens; all=true needs admin")
			return
		}
		userID = 0
	}
	toks, err := s.st.APITokens(c.Request.Context(), userID, 1000)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.TokenView, 0, len(toks))
	for _, t := range toks {
		out = append(out, s.tokenView(t))
	}
	c.JSON(http.StatusOK, gin.H{"tokens": out})
}

func validTokenName(s string) bool {
	if s == "" || len(s) > 64 || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func (s *Server) createToken(c *gin.Context) {
	var req apitypes.TokenRequest
	if !decode(c, &req) {
		return
	}
	u := currentUser(c)
	fields := map[string]msg.Msg{}
	if !validTokenName(req.Name) {
		fields["name"] = msg.New(msg.TokenNameRule)
	}
	if req.Role != "" && !auth.ValidRole(req.Role) {
		fields["role"] = msg.New(msg.TokenRoleOneOf)
	}
	if d := req.ExpiresInDays; d != nil && (*d < 0 || *d > maxTokenDays) {
		fields["expires_in_days"] = msg.New(msg.TokenDays, "max", maxTokenDays)
	}
	if len(fields) > 0 {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid token request", Fields: fields})
		return
	}
	if req.Role != "" && !auth.Allows(u.Role, req.Role) {
		fail(c, http.StatusForbidden, "a token cannot have more rights than its creator: your role here is "+u.Role+", the token asks for "+req.Role)
		return
	}
	parent, viaToken := currentToken(c)
	if viaToken && req.Role == "" {
		req.Role = u.Role // a capped token must not mint an uncapped one
	}
	expires, ok := s.childExpiry(c, parent, viaToken, req.ExpiresInDays)
	if !ok {
		return
	}
	n, err := s.st.CountActiveAPITokens(c.Request.Context(), u.ID)
	if err != nil {
		s.internal(c, err)
		return
	}
	if n >= store.MaxActiveTokens {
		fail(c, http.StatusConflict, "you have "+strconv.Itoa(n)+" active API tokens, the limit is "+strconv.Itoa(store.MaxActiveTokens)+"; revoke unused ones first (DELETE /api/v1/tokens/{id})")
		return
	}
	secret, prefix := newAPIToken()
	t, err := s.st.CreateAPIToken(c.Request.Context(), store.NewAPIToken{
		UserID: u.ID, Name: req.Name, Prefix: prefix, Hash: auth.HashToken(secret), RoleCap: req.Role, ExpiresAt: expires,
		ParentID: parent.ID,
	})
	if errors.Is(err, store.ErrTokenRevoked) || errors.Is(err, store.ErrNotFound) {
		// The caller's token was revoked (or its user deleted) while this
		// request ran: it is refused as it would be now.
		tokenRefused(c, "the API token of this request is no longer valid: "+err.Error()+"; create a new token (POST /api/v1/tokens)")
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	v := s.tokenView(t)
	s.auditAccount(c, t.UserID, "token.create", "token/"+strconv.FormatInt(t.ID, 10), map[string]any{
		"name": t.Name, "prefix": t.Prefix, "user": t.Username, "role_cap": t.RoleCap, "expires_at": v.ExpiresAt, "parent_id": v.ParentID,
	})
	c.JSON(http.StatusCreated, apitypes.CreatedToken{Token: v, Secret: secret,
		Note: "the secret is shown only now; store it safely and send it as 'Authorization: Bearer <secret>'"})
}

// revokeToken revokes one of the caller's tokens; an admin may revoke
// anyone's. Revoking a revoked token changes nothing and answers 200.
func (s *Server) revokeToken(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	u := currentUser(c)
	t, err := s.st.APIToken(c.Request.Context(), id)
	if err == nil && t.UserID != u.ID && !auth.Allows(u.Role, auth.RoleAdmin) {
		err = store.ErrNotFound // do not tell others' token ids apart from missing ones
	}
	if errors.Is(err, store.ErrNotFound) {
		fail(c, http.StatusNotFound, "API token "+c.Param("id")+" does not exist or is not yours")
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	revoked, descendants, err := s.st.RevokeAPIToken(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return
	}
	if revoked || len(descendants) > 0 {
		s.auditAccount(c, t.UserID, "token.revoke", "token/"+strconv.FormatInt(id, 10), map[string]any{
			"name": t.Name, "prefix": t.Prefix, "user": t.Username, "also_revoked": nonNil(descendants)})
	}
	if t, err = s.st.APIToken(c.Request.Context(), id); err != nil {
		s.internal(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"token": s.tokenView(t), "revoked": revoked, "also_revoked": nonNil(descendants)})
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// childExpiry returns the expiry of a new token (zero: never) from the
// request's expires_in_days, capped by the token the request was
// authenticated with, if any (viaToken): a token never outlives the token
// that creates it. Without expires_in_days the new token expires with
// that token; asking for longer (0 is "never") answers 400 with the limit.
// A token created from a console session is capped by nothing here.
func (s *Server) childExpiry(c *gin.Context, parent store.APIToken, viaToken bool, days *int) (time.Time, bool) {
	now := s.cfg.Clock.Now()
	var want time.Time
	if days != nil && *days > 0 {
		want = now.Add(time.Duration(*days) * 24 * time.Hour)
	}
	if !viaToken || !parent.ExpiresAt.Valid {
		return want, true
	}
	limit := time.UnixMilli(parent.ExpiresAt.Int64)
	if days == nil {
		return limit, true
	}
	if !want.IsZero() && !want.After(limit) {
		return want, true
	}
	most := int(limit.Sub(now) / (24 * time.Hour))
	hint := msg.New(msg.TokenOutliveMost, "days", most)
	if most < 1 {
		hint = msg.New(msg.TokenOutliveNone)
	}
	c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{
		Error: "a token cannot outlive the token that creates it: the API token of this request (" + parent.Prefix + "…, " +
			strconv.Quote(parent.Name) + ") expires at " + limit.UTC().Format(time.RFC3339),
		Fields: map[string]msg.Msg{"expires_in_days": hint},
	})
	return time.Time{}, false
}
