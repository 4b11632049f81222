package api

import (
	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/store"
)

// audit records a change to an object of app (a job, run, executor or
// slot attempt): the users of that app may read the entry. With app ""
// only admins may.
func (s *Server) audit(c *gin.Context, app, action, object string, detail any) {
	s.writeAudit(c, store.AuditEntry{App: app, Action: action, Object: object}, detail)
}

// writeAudit records e with detail, by the request's user (admin/ops:
// Audit).
func (s *Server) writeAudit(c *gin.Context, e store.AuditEntry, detail any) {
	s.ops.Audit(c.Request.Context(), actor(c), e, detail)
}
