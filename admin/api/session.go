package api

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/sso"
	"github.com/shardjob/shardjob/admin/store"
)

// Cookie and header names of console sessions.
const (
	SessionCookie = "sj_session"
	CSRFCookie    = "sj_csrf"
	CSRFHeader    = "X-CSRF-Token"
)

func (s *Server) login(c *gin.Context) {
	if !jsonOnly(c) {
		return
	}
	var req apitypes.LoginRequest
	if !decode(c, &req) {
		return
	}
	u, err := s.st.UserByName(c.Request.Context(), req.Username)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.internal(c, err)
		return
	}
	// The attempt is counted before the password is checked: parallel
	// attempts cannot all pass the throttle before any of them failed. It
	// is counted against the user the database found, whatever spelling
	// found them: the database's collation folds more than strings.ToLower
	// ("ſam" finds sam), and every spelling shares sam's attempts.
	key := "name:" + strings.ToLower(req.Username) + "|" + c.ClientIP()
	if err == nil {
		key = "user:" + strconv.FormatInt(u.ID, 10) + "|" + c.ClientIP()
	}
	if throttled(c, s.loginThrottle, key, "too many failed logins for this user name from your address") {
		return
	}
	if s.cfg.SSO != nil && s.cfg.SSO.LDAP != nil && (err != nil || u.Source == sso.SourceLDAP) {
		s.ldapLogin(c, key, req) // sso.go: a name that is no local user's is the directory's
		return
	}
	var hash string // none: no such user, and CheckPassword takes as long as for one
	if err == nil && (u.Source == "" || u.Source == sso.SourceLocal) {
		hash = u.PasswordHash // a directory user has no password here
	}
	if !auth.CheckPassword(hash, req.Password) {
		s.auditFailedLogin(c, u.Username, sso.SourceLocal)
		fail(c, http.StatusUnauthorized, "wrong user name or password")
		return
	}
	if s.cfg.NoPasswordSignIn && !strings.EqualFold(u.Username, s.cfg.BreakGlassUser) {
		// Said only to whoever knows the password: the refusal tells
		// nobody else that the user exists.
		fail(c, http.StatusForbidden, "password sign-in is turned off on this platform (--auth-local=false): "+s.ssoHint())
		return
	}
	s.loginThrottle.Reset(key)
	s.ops.ForgetInitialPassword(u.Username)
	token, csrf, ok := s.startSession(c, u)
	if !ok {
		return
	}
	c.JSON(http.StatusOK, apitypes.LoginResponse{Token: token, CSRF: csrf, Username: u.Username, Role: u.Role})
}

// auditFailedLogin records a failed sign-in of username (source: local or
// ldap). Failed logins are audited (admins read them, and the user whose
// name was tried), at most the throttle's number per name and address and
// window. A name that is no user's is not written: it may be a password
// typed into the wrong field.
func (s *Server) auditFailedLogin(c *gin.Context, username, source string) {
	ctx := c.Request.Context()
	entry := store.AuditEntry{Actor: "(no such user)", Action: "login.failed", Object: "user/(no such user)"}
	if username != "" {
		if u, err := s.st.UserByName(ctx, username); err == nil {
			entry.Actor, entry.Object, entry.OwnerID = u.Username, "user/"+u.Username, u.ID
		}
	}
	b, _ := json.Marshal(map[string]any{"client": c.ClientIP(), "source": source})
	entry.Detail = string(b)
	if err := s.st.Audit(ctx, entry); err != nil {
		s.log.Error("audit log write failed", "action", entry.Action, "err", err)
	}
}

// startSession creates a console session for u, sets its cookies and
// audits the sign-in; false when it answered an error.
func (s *Server) startSession(c *gin.Context, u store.User) (token, csrf string, ok bool) {
	token, csrf = auth.NewToken(), auth.NewToken()
	if err := s.st.CreateSession(c.Request.Context(), auth.HashToken(token), u.ID, s.cfg.SessionTTL); err != nil {
		s.internal(c, err)
		return "", "", false
	}
	maxAge := int(s.cfg.SessionTTL.Seconds())
	c.SetSameSite(http.SameSiteStrictMode)
	c.SetCookie(SessionCookie, token, maxAge, "/", "", s.secure(c), true)
	c.SetCookie(CSRFCookie, csrf, maxAge, "/", "", s.secure(c), false)
	entry := store.AuditEntry{Actor: u.Username, Action: "login", Object: "user/" + u.Username, OwnerID: u.ID}
	b, _ := json.Marshal(map[string]any{"source": sourceOf(u), "subject": u.Subject, "client": c.ClientIP()})
	entry.Detail = string(b)
	_ = s.st.Audit(c.Request.Context(), entry)
	return token, csrf, true
}

// sourceOf is where u signs in.
func sourceOf(u store.User) string {
	if u.Source == "" {
		return sso.SourceLocal
	}
	return u.Source
}

// jsonOnly answers 415 unless the request body is declared as JSON. On
// login it stops login CSRF (a foreign page logging the browser into the
// attacker's account): an HTML form can only send form encodings or
// text/plain, and a script of another origin can send application/json
// only after a CORS preflight, which the admin never grants.
func jsonOnly(c *gin.Context) bool {
	ct := c.GetHeader("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return true
	}
	fail(c, http.StatusUnsupportedMediaType, "Content-Type is "+strconv.Quote(ct)+": send the body as JSON with 'Content-Type: application/json'")
	return false
}

// throttled counts an attempt on key in th and answers 429 with
// Retry-After when key has none left (what says what was tried too often).
func throttled(c *gin.Context, th *auth.Throttle, key, what string) bool {
	ok, wait := th.Take(key)
	if ok {
		return false
	}
	secs := int((wait + time.Second - 1) / time.Second)
	c.Header("Retry-After", strconv.Itoa(secs))
	fail(c, http.StatusTooManyRequests, fmt.Sprintf("%s: at most %d tries per %s; try again in %ds", what, th.Max, shortDuration(th.Window), secs))
	return true
}

// limitManualRuns lets a request that starts runs by hand through while
// its caller (the user, or the API key it came with) has made fewer than
// Config.ManualRunsPerMinute such requests in the minute, and answers 429
// with Retry-After otherwise (docs/tenancy.md): one user's script cannot
// flood the leader with manual runs that the other teams' runs then queue
// behind. Refused requests count too.
func (s *Server) limitManualRuns(c *gin.Context) {
	a := actor(c)
	key := "user:" + strconv.FormatInt(a.User.ID, 10)
	if a.APIKeyID != 0 {
		key = "key:" + strconv.FormatInt(a.APIKeyID, 10)
	}
	if throttled(c, s.manualRuns, key, "too many manual runs (trigger, backfill, retry, rerun) from you") {
		return // answered: 429
	}
}

// shortDuration writes d without zero units: 1m, 1h, 1m30s.
func shortDuration(d time.Duration) string {
	return strings.Replace(strings.Replace(d.String(), "m0s", "m", 1), "h0m", "h", 1)
}

// secure reports whether cookies get the Secure flag: always with
// Config.SecureCookies, and for every request that reached us over TLS or
// through a proxy that terminated TLS (X-Forwarded-Proto: https). The header
// can only make the cookie stricter, so it need not come from a trusted proxy.
func (s *Server) secure(c *gin.Context) bool {
	return s.cfg.SecureCookies || c.Request.TLS != nil || strings.EqualFold(c.GetHeader("X-Forwarded-Proto"), "https")
}

func (s *Server) logout(c *gin.Context) {
	if tok := sessionToken(c); tok != "" {
		_ = s.st.DeleteSession(c.Request.Context(), auth.HashToken(tok))
	}
	c.SetSameSite(http.SameSiteStrictMode)
	c.SetCookie(SessionCookie, "", -1, "/", "", s.secure(c), true)
	c.SetCookie(CSRFCookie, "", -1, "/", "", s.secure(c), false)
	resp := apitypes.LogoutResponse{OK: true}
	if d := s.cfg.SSO; d != nil && d.Config.OIDC != nil {
		resp.LogoutURL, _ = s.ops.OIDCLogoutURL(c.Request.Context(), currentUser(c), postLogoutURL(d.Config.OIDC))
	}
	c.JSON(http.StatusOK, resp)
}

// postLogoutURL is where the provider sends the browser after an
// RP-initiated logout: the configured URL, or the console's root of the
// callback URL.
func postLogoutURL(o *sso.OIDCConfig) string {
	if o.PostLogoutRedirectURL != "" {
		return o.PostLogoutRedirectURL
	}
	u, err := url.Parse(o.RedirectURL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host + "/"
}

func (s *Server) me(c *gin.Context) {
	u := currentUser(c)
	c.JSON(http.StatusOK, gin.H{"username": u.Username, "role": u.Role, "apps": ops.AppsOf(u), "source": sourceOf(u)})
}

func sessionToken(c *gin.Context) string {
	if h := c.GetHeader("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimSpace(strings.TrimPrefix(h, "Bearer "))
	}
	if v, err := c.Cookie(SessionCookie); err == nil {
		return v
	}
	return ""
}

// authenticate accepts a bearer token or a session cookie. Cookie-based
// requests that change state must echo the CSRF cookie in X-CSRF-Token.
func (s *Server) authenticate(c *gin.Context) {
	bearer := strings.HasPrefix(c.GetHeader("Authorization"), "Bearer ")
	tok := sessionToken(c)
	if tok == "" {
		fail(c, http.StatusUnauthorized, "not logged in: POST /api/v1/login, then send the session cookie or 'Authorization: Bearer <token>'")
		return
	}
	if bearer && looksLikeAPIKey(tok) { // personal API key (apikeys.go); no CSRF for bearer
		u, ok := s.apiKeyUser(c, tok)
		if !ok {
			return
		}
		c.Set("user", u)
		c.Next()
		return
	}
	u, err := s.st.SessionUser(c.Request.Context(), auth.HashToken(tok))
	if errors.Is(err, store.ErrNotFound) {
		fail(c, http.StatusUnauthorized, "session expired or unknown: log in again")
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	if u, err = s.ops.Recheck(c.Request.Context(), u); err != nil { // a directory user: ask again (sso.go)
		s.opsFailed(c, err)
		return
	}
	if !bearer && c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead {
		cookie, _ := c.Cookie(CSRFCookie)
		hdr := c.GetHeader(CSRFHeader)
		if cookie == "" || subtle.ConstantTimeCompare([]byte(cookie), []byte(hdr)) != 1 {
			fail(c, http.StatusForbidden, "missing or wrong "+CSRFHeader+" header (send the value of the "+CSRFCookie+" cookie)")
			return
		}
	}
	c.Set("user", u)
	c.Next()
}

func currentUser(c *gin.Context) store.User {
	u, _ := c.Get("user")
	user, _ := u.(store.User)
	return user
}

func require(role string) gin.HandlerFunc {
	return func(c *gin.Context) {
		u := currentUser(c)
		if !auth.Allows(u.Role, role) {
			fail(c, http.StatusForbidden, "role "+u.Role+" may not do this; it needs "+role)
			return
		}
		c.Next()
	}
}
