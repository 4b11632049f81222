package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// workflowLayout answers the layered drawing of a workflow's graph (its
// current version; admin/ops: WorkflowLayout), computed by admin/workflow
// so that the console, the CLI and tests draw the same picture.
func (s *Server) workflowLayout(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	out, err := s.ops.WorkflowLayout(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
