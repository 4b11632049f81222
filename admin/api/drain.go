package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/store"
)

// drainExecutor asks that an executor get no new slots and give back the
// slots it has queued (the leader moves them elsewhere); its running slots
// finish there. The executor process keeps running: stop it afterwards
// (SIGTERM) or undrain it.
func (s *Server) drainExecutor(c *gin.Context) { s.setDrain(c, true) }

// undrainExecutor lets a drained executor take slots again.
func (s *Server) undrainExecutor(c *gin.Context) { s.setDrain(c, false) }

func (s *Server) setDrain(c *gin.Context, drain bool) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	e, err := s.st.ExecutorByID(c.Request.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !currentUser(c).AppAllowed(e.App)) {
		fail(c, http.StatusNotFound, "executor "+c.Param("id")+" does not exist")
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	if err := s.st.SetDrain(c.Request.Context(), id, drain); err != nil {
		s.internal(c, err)
		return
	}
	action := "executor.undrain"
	if drain {
		action = "executor.drain"
	}
	s.audit(c, e.App, action, "executor/"+strconv.FormatInt(id, 10), map[string]any{"instance_id": e.InstanceID, "app": e.App,
		"before": map[string]bool{"drain_requested": e.DrainRequested}, "after": map[string]bool{"drain_requested": drain}})
	s.wake()
	e.DrainRequested = drain
	c.JSON(http.StatusOK, executorView(e))
}
