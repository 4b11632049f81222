package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/xxljob"
)

// xxljobRoutes registers the admin API XXL-JOB executors call (outside
// /api/v1, authenticated by their access token, see admin/xxljob) and the
// console's log and kill of attempts on XXL-JOB executors.
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

// xxljobToken returns the attempt token of the request and its run; it
// answers the request itself when it fails.
func (s *Server) xxljobToken(c *gin.Context) (int64, store.Run, bool) {
	if s.cfg.XXLJob == nil {
		fail(c, http.StatusNotFound, "XXL-JOB executor support is not enabled on this admin")
		return 0, store.Run{}, false
	}
	t, err := strconv.ParseInt(c.Param("token"), 10, 64)
	if err != nil || t <= 0 {
		fail(c, http.StatusBadRequest, "token must be a positive integer (the attempt's token, the logId the executor saw), got "+strconv.Quote(c.Param("token")))
		return 0, store.Run{}, false
	}
	// Per-app permissions: an attempt of a run the user may not see does
	// not exist for them.
	a, err := s.st.Attempt(c.Request.Context(), t)
	if errors.Is(err, store.ErrNotFound) {
		fail(c, http.StatusNotFound, "attempt "+c.Param("token")+" does not exist")
		return 0, store.Run{}, false
	}
	if err != nil {
		s.internal(c, err)
		return 0, store.Run{}, false
	}
	r, ok := s.loadRun(c, a.RunID)
	return t, r, ok
}

// xxljobFail maps Log and Kill errors to HTTP answers.
func (s *Server) xxljobFail(c *gin.Context, err error) {
	var ce *xxljob.CallError
	switch {
	case errors.Is(err, store.ErrNotFound):
		fail(c, http.StatusNotFound, err.Error())
	case errors.Is(err, xxljob.ErrNotXXL):
		fail(c, http.StatusConflict, err.Error()+": use the executor's own logs")
	case errors.Is(err, xxljob.ErrNoToken), errors.Is(err, xxljob.ErrEnded):
		fail(c, http.StatusConflict, err.Error())
	case errors.As(err, &ce):
		fail(c, http.StatusBadGateway, err.Error())
	case c.Request.Context().Err() == nil:
		// The executor did not answer (down, partitioned, timed out).
		fail(c, http.StatusBadGateway, err.Error())
	default:
		s.internal(c, err)
	}
}

// xxljobLog proxies the executor's log call: GET …/log?from=N returns the
// lines from N (1-based, default 1), the last line number and whether the
// log is complete.
func (s *Server) xxljobLog(c *gin.Context) {
	token, _, ok := s.xxljobToken(c)
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
	res, err := s.cfg.XXLJob.Log(c.Request.Context(), token, from)
	if err != nil {
		s.xxljobFail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{
		"token": token, "from_line": res.FromLineNum, "to_line": res.ToLineNum,
		"content": res.LogContent, "end": res.IsEnd,
	})
}

// xxljobKill ends the attempt (failed, "killed by <user>"; the job's retry
// policy handles it) and asks its XXL-JOB executor to kill the slot's task
// there (see xxljob.Service.Kill); 409 when the attempt has ended already.
// Cancel the run to stop it everywhere.
func (s *Server) xxljobKill(c *gin.Context) {
	token, run, ok := s.xxljobToken(c)
	if !ok {
		return
	}
	if err := s.cfg.XXLJob.Kill(c.Request.Context(), token, currentUser(c).Username); err != nil {
		s.xxljobFail(c, err)
		return
	}
	s.audit(c, run.App, "xxljob.kill", "attempt/"+strconv.FormatInt(token, 10), nil)
	c.JSON(http.StatusOK, gin.H{"ok": true, "token": token})
}
