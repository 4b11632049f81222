package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// backfillJob creates the runs of a plain job for a range of business
// dates (or, as a dry run, lists what it would do; admin/ops: BackfillJob):
// 201 with the plan and the backfill's id, 200 for a dry run. Field errors
// name from, to, parallel or params. The job of a workflow's inline node
// is 409 (it runs with its workflow: backfill the workflow), a job that
// does not exist or of an app the caller may not see 404.
func (s *Server) backfillJob(c *gin.Context) {
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var req apitypes.JobBackfill
	if !decode(c, &req) {
		return
	}
	out, err := s.ops.BackfillJob(c.Request.Context(), actor(c), j.ID, req)
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

// listJobBackfills lists the backfills of a job, newest first
// (?before=ID&limit=N, at most 500, default 50).
func (s *Server) listJobBackfills(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	out, err := s.ops.JobBackfills(c.Request.Context(), actor(c), id, before, limit)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"backfills": out})
}
