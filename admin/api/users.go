package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/names"
)

func userView(u store.User) apitypes.UserView {
	return apitypes.UserView{ID: u.ID, Username: u.Username, Role: u.Role, Apps: appsOf(u), CreatedAt: msTime(u.CreatedAt)}
}

// appsOf lists the apps a user is limited to ([] for every app).
func appsOf(u store.User) []string {
	if u.Apps == "" {
		return []string{}
	}
	return strings.Split(u.Apps, ",")
}

// appsError checks a list of apps for a user; it answers 400 itself.
func appsError(c *gin.Context, apps []string) bool {
	seen := map[string]bool{}
	for _, a := range apps {
		if !names.Valid(a) || seen[a] {
			c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid apps",
				Fields: map[string]msg.Msg{"apps": msg.New(msg.UserAppsInvalid, "rule", msg.New(msg.NameRule), "value", strconv.Quote(a))}})
			return true
		}
		seen[a] = true
	}
	if len(strings.Join(apps, ",")) > 2000 {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid apps", Fields: map[string]msg.Msg{"apps": msg.New(msg.UserAppsTooLong, "max", 2000)}})
		return true
	}
	return false
}

func (s *Server) listUsers(c *gin.Context) {
	users, err := s.st.Users(c.Request.Context())
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.UserView, 0, len(users))
	for _, u := range users {
		out = append(out, userView(u))
	}
	c.JSON(http.StatusOK, gin.H{"users": out})
}

func roleError(c *gin.Context, role string) bool {
	if auth.ValidRole(role) {
		return false
	}
	c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "unknown role", Fields: map[string]msg.Msg{"role": msg.New(msg.RoleOneOf)}})
	return true
}

func (s *Server) createUser(c *gin.Context) {
	var req apitypes.UserRequest
	if !decode(c, &req) {
		return
	}
	if !names.Valid(req.Username) {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid user name", Fields: map[string]msg.Msg{"username": msg.New(msg.NameRule)}})
		return
	}
	if roleError(c, req.Role) || appsError(c, req.Apps) {
		return
	}
	hash, ok := s.hashPassword(c, "password", req.Password)
	if !ok {
		return
	}
	id, err := s.st.CreateUser(c.Request.Context(), req.Username, hash, req.Role)
	if errors.Is(err, store.ErrConflict) {
		// User names are case-insensitive: name the user that has it.
		taken := req.Username
		if other, err := s.st.UserByName(c.Request.Context(), req.Username); err == nil {
			taken = other.Username
		}
		c.AbortWithStatusJSON(http.StatusConflict, errorBody{
			Error:  "user name " + req.Username + " is taken by the user " + taken + " (user names are case-insensitive); choose another name",
			Fields: map[string]msg.Msg{"username": msg.New(msg.UserNameTaken, "user", taken)}})
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	if len(req.Apps) > 0 {
		if err := s.st.SetUserApps(c.Request.Context(), id, req.Apps); err != nil {
			s.internal(c, err)
			return
		}
	}
	u, err := s.st.UserByID(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, noApp, "user.create", "user/"+u.Username, map[string]any{"role": u.Role, "apps": appsOf(u)})
	c.JSON(http.StatusCreated, userView(u))
}

func (s *Server) updateUser(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	var req apitypes.UserUpdate
	if !decode(c, &req) {
		return
	}
	u, err := s.st.UserByID(c.Request.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		fail(c, http.StatusNotFound, "user "+c.Param("id")+" does not exist")
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	// Check every field before writing any: a refused update changes nothing.
	if req.Role != nil {
		if roleError(c, *req.Role) {
			return
		}
		if u.ID == currentUser(c).ID && *req.Role != auth.RoleAdmin {
			fail(c, http.StatusConflict, "you cannot take the admin role from yourself; ask another admin")
			return
		}
	}
	if req.Apps != nil && appsError(c, *req.Apps) {
		return
	}
	var hash string
	if req.Password != nil {
		if hash, ok = s.hashPassword(c, "password", *req.Password); !ok {
			return
		}
	}
	if req.Role != nil {
		if err := s.st.SetUserRole(c.Request.Context(), id, *req.Role); err != nil {
			s.internal(c, err)
			return
		}
	}
	if req.Apps != nil {
		if err := s.st.SetUserApps(c.Request.Context(), id, *req.Apps); err != nil {
			s.internal(c, err)
			return
		}
	}
	if req.Password != nil {
		if err := s.st.SetUserPassword(c.Request.Context(), id, hash); err != nil {
			s.internal(c, err)
			return
		}
		s.forgetInitialPassword(u.Username)
	}
	before := u
	u, _ = s.st.UserByID(c.Request.Context(), id)
	s.audit(c, noApp, "user.update", "user/"+u.Username, map[string]any{"before": map[string]any{"role": before.Role, "apps": appsOf(before)},
		"after": map[string]any{"role": u.Role, "apps": appsOf(u)}, "password_changed": req.Password != nil})
	c.JSON(http.StatusOK, userView(u))
}

func (s *Server) deleteUser(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	if id == currentUser(c).ID {
		fail(c, http.StatusConflict, "you cannot delete yourself; ask another admin")
		return
	}
	u, err := s.st.UserByID(c.Request.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		fail(c, http.StatusNotFound, "user "+c.Param("id")+" does not exist")
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	if err := s.st.DeleteUser(c.Request.Context(), id); err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, noApp, "user.delete", "user/"+u.Username, nil)
	c.JSON(http.StatusOK, gin.H{"deleted": id})
}

// hashPassword hashes a new password; a password the policy refuses is a
// 400 naming field, with the policy's reason.
func (s *Server) hashPassword(c *gin.Context, field, pw string) (string, bool) {
	hash, err := auth.HashPassword(pw)
	if err != nil {
		if !passwordRefused(c, field, err) {
			s.internal(c, err)
		}
		return "", false
	}
	return hash, true
}

// passwordRefused answers 400 for a refusal of the password policy and
// reports whether err was one.
func passwordRefused(c *gin.Context, field string, err error) bool {
	var pe *auth.PasswordError
	if !errors.As(err, &pe) {
		return false
	}
	c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: pe.Error(), Fields: map[string]msg.Msg{field: msg.Of(pe)}})
	return true
}

func (s *Server) changeOwnPassword(c *gin.Context) {
	var req apitypes.PasswordChange
	if !decode(c, &req) {
		return
	}
	u := currentUser(c)
	// The new password is checked first: a refusal by the policy reveals
	// nothing and does not count against the throttle.
	if err := auth.ValidatePassword(req.New); err != nil {
		passwordRefused(c, "new", err)
		return
	}
	// Wrong current passwords are throttled per user (a stolen session must
	// not become a way to guess the password), counted before the check.
	key := strconv.FormatInt(u.ID, 10)
	if throttled(c, s.passwordThrottle, key, "too many wrong current passwords for this user") {
		return
	}
	if !auth.CheckPassword(u.PasswordHash, req.Old) {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "current password is wrong", Fields: map[string]msg.Msg{"old": msg.New(msg.PasswordWrongOld)}})
		return
	}
	s.passwordThrottle.Reset(key)
	hash, ok := s.hashPassword(c, "new", req.New)
	if !ok {
		return
	}
	if err := s.st.SetUserPassword(c.Request.Context(), u.ID, hash); err != nil {
		s.internal(c, err)
		return
	}
	s.forgetInitialPassword(u.Username)
	s.auditAccount(c, u.ID, "user.password", "user/"+u.Username, nil)
	c.JSON(http.StatusOK, gin.H{"ok": true, "note": "all sessions of this user ended; log in again"})
}

// auditScope is what u may read of the audit log: admins everything;
// others the entries of their apps (of every app when they have no limit)
// and those about their own account (logins, password, API tokens).
// Entries about users, roles, other users' tokens and the platform are for
// admins only, whatever the app limit.
func auditScope(u store.User) store.AuditScope {
	if auth.Allows(u.Role, auth.RoleAdmin) {
		return store.AuditScope{All: true}
	}
	return store.AuditScope{Apps: u.AppList(), OwnerID: u.ID}
}

func (s *Server) listAudit(c *gin.Context) {
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	f := store.AuditFilter{Actor: c.Query("actor"), Action: c.Query("action"), Object: c.Query("object")}
	for name, v := range map[string]string{"actor": f.Actor, "action": f.Action, "object": f.Object} {
		if len(v) > 255 {
			fail(c, http.StatusBadRequest, name+" is longer than 255 bytes: give a user name, an action prefix (token.) or an object prefix (job/5)")
			return
		}
	}
	var ok bool
	if f.From, f.To, ok = timeRange(c, "entries by time"); !ok {
		return
	}
	entries, err := s.st.AuditLog(c.Request.Context(), before, limit, auditScope(currentUser(c)), f)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.AuditView, 0, len(entries))
	for _, e := range entries {
		v := apitypes.AuditView{ID: e.ID, At: msTime(e.At), Actor: e.Actor, Action: e.Action, Object: e.Object, Detail: e.Detail, App: e.App, TokenName: e.TokenName}
		if e.TokenID.Valid {
			id := e.TokenID.Int64
			v.TokenID = &id
		}
		out = append(out, v)
	}
	resp := gin.H{"entries": out}
	if len(entries) == limit {
		resp["next_before"] = entries[len(entries)-1].ID
	}
	c.JSON(http.StatusOK, resp)
}
