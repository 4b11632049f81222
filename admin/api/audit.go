package api

import (
	"database/sql"
	"encoding/json"

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

func (s *Server) writeAudit(c *gin.Context, e store.AuditEntry, detail any) {
	b, _ := json.Marshal(detail)
	e.Actor, e.Detail = currentUser(c).Username, string(b)
	if t, ok := currentToken(c); ok {
		e.TokenID = sql.NullInt64{Int64: t.ID, Valid: true}
	}
	if err := s.st.Audit(c.Request.Context(), e); err != nil {
		s.log.Error("audit log write failed", "action", e.Action, "object", e.Object, "err", err)
	}
}
