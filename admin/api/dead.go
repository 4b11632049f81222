package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// deadClasses are the error classes a dead letter can have.
var deadClasses = []string{protocol.ClassPermanent, protocol.ClassRetryable, protocol.ClassTimeout, protocol.ClassLost, protocol.ClassCancelled}

// listDead lists the dead letters of the user's apps, newest first
// (admin/ops: DeadLetters): filters app, job_id, handler, class, from/to
// (when they died); keyset pages (cursor); the first page counts them.
func (s *Server) listDead(c *gin.Context) {
	var f store.DeadFilter
	var ok bool
	if f.JobID, ok = positiveID(c, "job_id"); !ok {
		return
	}
	if f.Class, ok = oneOf(c, "class", deadClasses...); !ok {
		return
	}
	f.App, f.Handler = c.Query("app"), c.Query("handler")
	if v := c.Query("cursor"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			listParamFailed(c, "cursor", msg.New(msg.ListCursorInvalid))
			return
		}
		f.BeforeID = id
	}
	if f.FromMS, f.ToMS, ok = timeRange(c, "dead letters by when they died"); !ok {
		return
	}
	if f.Limit, ok = pageSize(c, 100, maxRunPage); !ok {
		return
	}
	count := c.Query("cursor") == "" && c.Query("count") != "0"
	out, err := s.ops.DeadLetters(c.Request.Context(), actor(c), f, count)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// replayDead runs dead slots again as new attempts of their runs
// (admin/ops: ReplayDead), all or none.
func (s *Server) replayDead(c *gin.Context) {
	var req apitypes.ReplayRequest
	if !decode(c, &req) {
		return
	}
	out, err := s.ops.ReplayDead(c.Request.Context(), actor(c), req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
