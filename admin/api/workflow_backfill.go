package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// backfillWorkflow creates the runs of a range of business dates (or, as a
// dry run, lists what it would do; admin/ops: BackfillWorkflow): 201 with
// the plan and the backfill's id, 200 for a dry run. Field errors name
// from, to, parallel or params.
func (s *Server) backfillWorkflow(c *gin.Context) {
	id, ok := s.workflowID(c, s.managedWorkflow)
	if !ok {
		return
	}
	var req apitypes.WorkflowBackfill
	if !decode(c, &req) {
		return
	}
	out, err := s.ops.BackfillWorkflow(c.Request.Context(), actor(c), id, req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	code := http.StatusCreated
	if out.DryRun {
		code = http.StatusOK
	}
	c.JSON(code, out)
}
