package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/xxljob"
)

// xxljobRoutes registers the admin API XXL-JOB executors call (outside
// /api/v1, authenticated by their access token, see admin/xxljob) and the
// console's log and kill of attempts on XXL-JOB executors (admin/ops
// xxljob.go).
func (s *Server) xxljobRoutes(r *gin.Engine, view, op *gin.RouterGroup) {
	for _, p := range xxljob.AdminPaths {
		r.POST(p, s.xxljobExecutorAPI)
	}
	view.GET("/xxljob/attempts/:token/log", s.xxljobLog)
	op.POST("/xxljob/attempts/:token/kill", s.xxljobKill)
}

// xxljobExecutorAPI serves the admin API XXL-JOB executors call.
func (s *Server) xxljobExecutorAPI(c *gin.Context) {
	if s.cfg.XXLJob == nil {
		msg := "XXL-JOB executor support is not enabled on this admin"
		c.JSON(http.StatusOK, xxljob.ReturnT{Code: xxljob.CodeFail, Msg: &msg})
		return
	}
	s.cfg.XXLJob.ServeHTTP(c.Writer, c.Request)
}

// xxljobNoRoute serves a POST to an XXL-JOB admin path written with doubled
// slashes ("//api/registry": the executor's admin address ends in a slash),
// which the router does not match; it reports whether it answered.
func (s *Server) xxljobNoRoute(c *gin.Context) bool {
	if c.Request.Method != http.MethodPost || !xxljob.IsAdminPath(c.Request.URL.Path) {
		return false
	}
	s.xxljobExecutorAPI(c)
	return true
}

// xxljobToken reads the attempt's fencing token of the route; false when
// it has answered 404 (XXL-JOB support not enabled) or 400.
func (s *Server) xxljobToken(c *gin.Context) (int64, bool) {
	if refused(c, s.ops.XXLJobEnabled()) {
		return 0, false
	}
	t, err := strconv.ParseInt(c.Param("token"), 10, 64)
	if err != nil || t <= 0 {
		fail(c, http.StatusBadRequest, "token must be a positive integer (the attempt's token, the logId the executor saw), got "+strconv.Quote(c.Param("token")))
		return 0, false
	}
	return t, true
}

// xxljobFailed answers an error of the XXL-JOB operations: a refusal, or
// 502 when the executor did not answer (down, partitioned, timed out) or
// answered an error.
func (s *Server) xxljobFailed(c *gin.Context, err error) {
	var ce *xxljob.CallError
	switch {
	case refused(c, err):
	case errors.As(err, &ce), c.Request.Context().Err() == nil:
		fail(c, http.StatusBadGateway, err.Error())
	default:
		s.internal(c, err)
	}
}

// xxljobLog proxies the executor's log call: GET …/log?from=N returns the
// lines from N (1-based, default 1), the last line number and whether the
// log is complete.
func (s *Server) xxljobLog(c *gin.Context) {
	token, ok := s.xxljobToken(c)
	if !ok {
		return
	}
	from := 1
	if v := c.Query("from"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fail(c, http.StatusBadRequest, "from must be a line number ≥ 1, got "+strconv.Quote(v))
			return
		}
		from = n
	}
	out, err := s.ops.XXLJobLog(c.Request.Context(), actor(c), token, from)
	if err != nil {
		s.xxljobFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// xxljobKill ends the attempt and asks its XXL-JOB executor to kill the
// slot's task there (admin/ops: XXLJobKill); 409 when the attempt has ended
// already. Cancel the run to stop it everywhere.
func (s *Server) xxljobKill(c *gin.Context) {
	token, ok := s.xxljobToken(c)
	if !ok {
		return
	}
	if err := s.ops.XXLJobKill(c.Request.Context(), actor(c), token); err != nil {
		s.xxljobFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, apitypes.XXLJobKilled{OK: true, Token: token})
}
