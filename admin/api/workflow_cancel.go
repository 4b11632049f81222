package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// cancelWorkflowRun ends a pending or running workflow run as cancelled
// (operators of its app; admin/ops: CancelWorkflowRun): its nodes not
// started never start, its node runs in progress are cancelled, and so are
// their job runs (their executors are told to stop their slots, as for a
// run cancelled by hand). An ended run is 409. Audited (workflow.cancel).
func (s *Server) cancelWorkflowRun(c *gin.Context) {
	id, ok := s.workflowID(c, s.managedWorkflowRun)
	if !ok {
		return
	}
	var req apitypes.CancelRequest
	if c.Request.ContentLength != 0 && !decode(c, &req) {
		return
	}
	out, err := s.ops.CancelWorkflowRun(c.Request.Context(), actor(c), id, req.Reason)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
