package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/ops"
)

// Users, one's own password and the audit log: admin/ops (users.go,
// audit_log.go) holds their rules.

func (s *Server) listUsers(c *gin.Context) {
	users, err := s.ops.Users(c.Request.Context(), actor(c))
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, users)
}

func (s *Server) createUser(c *gin.Context) {
	var req apitypes.UserRequest
	if !decode(c, &req) {
		return
	}
	u, err := s.ops.CreateUser(c.Request.Context(), actor(c), req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusCreated, u)
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
	u, err := s.ops.UpdateUser(c.Request.Context(), actor(c), id, req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, u)
}

func (s *Server) deleteUser(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	if err := s.ops.DeleteUser(c.Request.Context(), actor(c), id); err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"deleted": id})
}

// changeOwnPassword: wrong current passwords are throttled per user (a
// stolen session must not become a way to guess the password), counted
// before the check; a new password the policy refuses reveals nothing and
// does not count.
func (s *Server) changeOwnPassword(c *gin.Context) {
	var req apitypes.PasswordChange
	if !decode(c, &req) {
		return
	}
	if refused(c, ops.CheckPassword("new", req.New)) {
		return
	}
	a := actor(c)
	key := strconv.FormatInt(a.User.ID, 10)
	if throttled(c, s.passwordThrottle, key, "too many wrong current passwords for this user") {
		return
	}
	err := s.ops.ChangeOwnPassword(c.Request.Context(), a, req)
	var e *ops.Error
	if !errors.As(err, &e) || e.Fields[ops.WrongPasswordField].Code == "" {
		s.passwordThrottle.Reset(key)
	}
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "note": "all sessions of this user ended; log in again"})
}

func (s *Server) listAudit(c *gin.Context) {
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	q := apitypes.AuditQuery{Before: before, Limit: limit, Actor: c.Query("actor"), Action: c.Query("action"), Object: c.Query("object")}
	from, to, ok := timeRange(c, "entries by time")
	if !ok {
		return
	}
	q.From, q.To = optMS(from), optMS(to)
	page, err := s.ops.AuditLog(c.Request.Context(), actor(c), q)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, page)
}

// optMS is a Unix ms instant of a query, nil for 0 (not given).
func optMS(ms int64) *time.Time {
	if ms == 0 {
		return nil
	}
	t := msTime(ms)
	return &t
}
