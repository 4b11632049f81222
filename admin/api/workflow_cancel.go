package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// cancelWorkflowRun ends a pending or running workflow run as cancelled
// (operators of its app): its nodes not started never start, its node runs
// in progress are cancelled, and so are their job runs (their executors
// are told to stop their slots, as for a run cancelled by hand). An ended
// run is 409. Audited (workflow.cancel).
func (s *Server) cancelWorkflowRun(c *gin.Context) {
	id, ok := s.manageableWorkflowRun(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	var req apitypes.CancelRequest
	if c.Request.ContentLength != 0 && !decode(c, &req) {
		return
	}
	reason := ops.CancelReason(actor(c), req.Reason)
	run, jobRuns, err := workflowrun.Cancel(ctx, s.st, id, reason)
	switch {
	case errors.Is(err, workflowrun.ErrEnded):
		fail(c, http.StatusConflict, "workflow run "+c.Param("id")+" has ended; only a pending or running workflow run can be cancelled")
		return
	case err != nil:
		s.internal(c, err)
		return
	}
	// The job runs: each as a run cancelled by hand. One that ended
	// meanwhile is left as it ended.
	cancelled := []int64{}
	for _, jr := range jobRuns {
		ok, err := s.ops.CancelRunOf(ctx, jr, reason)
		if err != nil {
			s.internal(c, err)
			return
		}
		if ok {
			cancelled = append(cancelled, jr)
		}
	}
	s.audit(c, run.App, "workflow.cancel", "workflow/"+strconv.FormatInt(run.WorkflowID, 10),
		map[string]any{"workflow_run_id": run.ID, "reason": reason.String(), "job_runs": cancelled})
	c.JSON(http.StatusOK, apitypes.WorkflowCancelled{Run: workflowRunView(run), JobRuns: cancelled})
}
