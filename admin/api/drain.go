package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// drainExecutor asks that an executor get no new slots and give back the
// slots it has queued (admin/ops: SetDrain). The executor process keeps
// running: stop it afterwards (SIGTERM) or undrain it.
func (s *Server) drainExecutor(c *gin.Context) { s.setDrain(c, true) }

// undrainExecutor lets a drained executor take slots again.
func (s *Server) undrainExecutor(c *gin.Context) { s.setDrain(c, false) }

func (s *Server) setDrain(c *gin.Context, drain bool) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	e, err := s.ops.SetDrain(c.Request.Context(), actor(c), id, drain)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, e)
}
