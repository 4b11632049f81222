package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// cloneJob copies a job's definition under a new name (and optionally into
// another app the user may manage). The copy starts disabled unless the
// request says otherwise; child jobs are not copied (a child triggered by
// two parents is rarely what a copy means).
func (s *Server) cloneJob(c *gin.Context) {
	// The job is read before the body, as in updateJob.
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var req apitypes.CloneRequest
	if !decode(c, &req) {
		return
	}
	copied, err := s.ops.CloneJob(c.Request.Context(), actor(c), j.ID, req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusCreated, copied)
}

// runSlots lists the slots of a run, each with its current attempt, in slot
// order (the run detail's grid; GET /runs/:id has every attempt).
func (s *Server) runSlots(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	out, err := s.ops.RunSlots(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"slots": out})
}
