package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// validateWorkflow checks a workflow definition as a save would, without
// saving it (admin/ops: ValidateWorkflow), and answers its drawing and
// next firings: the console's editor previews the draft as it is typed.
// Every mistake is a 400 naming its field, as on save.
func (s *Server) validateWorkflow(c *gin.Context) {
	var spec apitypes.WorkflowSpec
	if !decode(c, &spec) {
		return
	}
	out, err := s.ops.ValidateWorkflow(c.Request.Context(), actor(c), spec)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
