package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// triggerWorkflow creates a run of the workflow now (admin/ops:
// TriggerWorkflow; the leader's workflow engine drives it): 201 with the
// run, or 200 with the run a trigger with the same run_key created before.
func (s *Server) triggerWorkflow(c *gin.Context) {
	id, ok := s.workflowID(c, s.managedWorkflow)
	if !ok {
		return
	}
	var req apitypes.WorkflowTrigger
	if c.Request.ContentLength != 0 && !decode(c, &req) {
		return
	}
	run, created, err := s.ops.TriggerWorkflow(c.Request.Context(), actor(c), id, req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	c.JSON(code, gin.H{"run": run, "created": created})
}

// getWorkflowRun answers one workflow run with its node runs and the
// statuses of their job runs; a run of an app the user may not see is 404.
func (s *Server) getWorkflowRun(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	out, err := s.ops.WorkflowRun(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
