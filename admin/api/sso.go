package api

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/sso"
)

// ssoInfo tells the sign-in page how people sign in here (public: it is
// asked before anyone is signed in).
func (s *Server) ssoInfo(c *gin.Context) {
	info := apitypes.SSOInfo{Password: !s.cfg.NoPasswordSignIn}
	if d := s.cfg.SSO; d != nil {
		info.LDAP = d.LDAP != nil
		if d.OIDC != nil && d.Config.OIDC != nil {
			info.OIDC = &apitypes.SSOProvider{Name: d.Config.OIDC.Name, LoginURL: "/api/v1/sso/oidc/login"}
		}
	}
	c.JSON(http.StatusOK, info)
}

// ssoHint says how people sign in here instead of a password.
func (s *Server) ssoHint() string {
	if d := s.cfg.SSO; d != nil && d.OIDC != nil && d.Config.OIDC != nil {
		return "use \"Sign in with " + d.Config.OIDC.Name + "\""
	}
	if d := s.cfg.SSO; d != nil && d.LDAP != nil {
		return "sign in with your directory (LDAP) account"
	}
	return "ask an administrator"
}

// oidcLogin begins an OIDC sign-in: it sends the browser to the provider,
// to come back to the console path of ?return= (default /).
func (s *Server) oidcLogin(c *gin.Context) {
	ret := c.DefaultQuery("return", "/")
	authURL, err := s.ops.BeginOIDC(c.Request.Context(), ret)
	if err != nil {
		s.ssoFailed(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusFound, authURL)
}

// oidcCallback is where the provider sends the browser back: the sign-in
// is completed, a console session started, and the browser sent to the
// console path the sign-in began from. A refusal goes back to the sign-in
// page with the reason (?sso_error=).
func (s *Server) oidcCallback(c *gin.Context) {
	if e := c.Query("error"); e != "" {
		text := "the provider refused the sign-in: " + e
		if d := c.Query("error_description"); d != "" {
			text += " (" + d + ")"
		}
		// The pending sign-in is left to expire: its state was not used.
		s.backToSignIn(c, text)
		return
	}
	u, ret, err := s.ops.FinishOIDC(c.Request.Context(), c.Query("state"), c.Query("code"))
	if err != nil {
		s.ssoFailed(c, err)
		return
	}
	if _, _, ok := s.startSession(c, u); !ok {
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusFound, ret)
}

// ssoFailed sends the browser back to the sign-in page with the reason of
// a refusal; a failure of ours is answered 500 as anywhere else.
func (s *Server) ssoFailed(c *gin.Context, err error) {
	var refusal *ops.Error
	if !errors.As(err, &refusal) {
		s.internal(c, err)
		return
	}
	s.backToSignIn(c, refusal.Msg)
}

// backToSignIn sends the browser to the console's sign-in page, which
// shows text (?sso_error=).
func (s *Server) backToSignIn(c *gin.Context, text string) {
	s.log.Info("sso sign-in refused", "reason", text)
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusFound, "/?"+url.Values{"sso_error": {text}}.Encode())
}

// ldapLogin signs in a user name that is not a local user's through the
// LDAP directory (login, session.go), throttled by key like a password
// sign-in.
func (s *Server) ldapLogin(c *gin.Context, key string, req apitypes.LoginRequest) {
	u, err := s.ops.SignInLDAP(c.Request.Context(), req.Username, req.Password)
	if errors.Is(err, ops.ErrCredential) {
		s.auditFailedLogin(c, req.Username, sso.SourceLDAP)
		fail(c, http.StatusUnauthorized, "wrong user name or password")
		return
	}
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	s.loginThrottle.Reset(key)
	token, csrf, ok := s.startSession(c, u)
	if !ok {
		return
	}
	c.JSON(http.StatusOK, apitypes.LoginResponse{Token: token, CSRF: csrf, Username: u.Username, Role: u.Role})
}
