package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// dashboard answers GET /dashboard?window=1h|6h|24h|7d&app= (admin/ops
// dashboard.go).
func (s *Server) dashboard(c *gin.Context) {
	app, given := c.GetQuery("app")
	out, err := s.ops.Dashboard(c.Request.Context(), actor(c), c.DefaultQuery("window", "1h"), app, given)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
