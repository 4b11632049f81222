package api

import (
	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/store"
)

// noApp is the app of audit entries about users and the platform: only
// admins read them.
const noApp = ""

// audit records a change to an object of app (a job, run, executor or
// slot attempt): the users of that app may read the entry. With noApp only
// admins may.
func (s *Server) audit(c *gin.Context, app, action, object string, detail any) {
	s.writeAudit(c, store.AuditEntry{App: app, Action: action, Object: object}, detail)
}

// auditAccount records a change to the account of user userID (their
// password, one of their API tokens): admins and that user may read it.
func (s *Server) auditAccount(c *gin.Context, userID int64, action, object string, detail any) {
	s.writeAudit(c, store.AuditEntry{OwnerID: userID, Action: action, Object: object}, detail)
}

// writeAudit records e with detail, by the request's user (admin/ops:
// Audit).
func (s *Server) writeAudit(c *gin.Context, e store.AuditEntry, detail any) {
	s.ops.Audit(c.Request.Context(), actor(c), e, detail)
}
