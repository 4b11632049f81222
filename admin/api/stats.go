package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// utilization answers GET /stats/utilization?from=&to=&app= (admin/ops
// utilization.go).
func (s *Server) utilization(c *gin.Context) {
	from, to, ok := timeRange(c, "the time range of the utilization samples")
	if !ok {
		return
	}
	app, given := c.GetQuery("app")
	out, err := s.ops.Utilization(c.Request.Context(), actor(c), from, to, app, given)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
