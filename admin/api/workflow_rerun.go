package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// rerunWorkflowRun runs a finished workflow run again from the nodes
// named (admin/ops: RerunWorkflowRun): 200 with the run and the nodes that
// run again; 400 naming from for an unknown node or one that would be
// skipped at once; 409 for a run that has not ended (a second click
// included).
func (s *Server) rerunWorkflowRun(c *gin.Context) {
	id, ok := s.workflowID(c, s.managedWorkflowRun)
	if !ok {
		return
	}
	var req apitypes.WorkflowRerun
	if !decode(c, &req) {
		return
	}
	out, err := s.ops.RerunWorkflowRun(c.Request.Context(), actor(c), id, req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// managedWorkflowRun is a check of workflowID for a workflow run
// (admin/ops: ManagedWorkflowRun): 404 when it does not exist or is of an
// app the caller may not see, 403 when they may see but not manage it.
func (s *Server) managedWorkflowRun(c *gin.Context, id int64) error {
	return s.ops.ManagedWorkflowRun(c.Request.Context(), actor(c), id)
}
