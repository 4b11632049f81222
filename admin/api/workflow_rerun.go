package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// rerunWorkflowRun runs a finished workflow run again from the nodes
// named (workflowrun.Rerun): 200 with the run and the nodes that run
// again; 400 naming from for an unknown node or one that would be skipped
// at once; 409 for a run that has not ended (a second click included).
func (s *Server) rerunWorkflowRun(c *gin.Context) {
	id, ok := s.manageableWorkflowRun(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	var req apitypes.WorkflowRerun
	if !decode(c, &req) {
		return
	}
	run, again, err := workflowrun.Rerun(ctx, s.st, id, req.From)
	switch {
	case errors.Is(err, workflow.ErrUnknownNode) || errors.Is(err, workflow.ErrRerunBlocked):
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: err.Error(), Fields: map[string]msg.Msg{"from": msg.New(msg.Text, "text", err.Error())}})
		return
	case errors.Is(err, workflow.ErrNotFinished) || errors.Is(err, workflowrun.ErrRerunRaced):
		fail(c, http.StatusConflict, err.Error())
		return
	case err != nil:
		s.internal(c, err)
		return
	}
	s.audit(c, run.App, "workflow.rerun", "workflow/"+strconv.FormatInt(run.WorkflowID, 10),
		map[string]any{"workflow_run_id": run.ID, "from": req.From, "nodes": again, "rerun": run.Reruns})
	if s.cfg.Workflows != nil {
		s.cfg.Workflows.Wake()
	}
	c.JSON(http.StatusOK, apitypes.WorkflowRerunDone{Run: workflowRunView(run), Nodes: again})
}

// manageableWorkflowRun reads the id parameter's workflow run for a change
// by the caller: 404 when it does not exist or is of an app the caller may
// not see, 403 when they may see but not manage it.
func (s *Server) manageableWorkflowRun(c *gin.Context) (int64, bool) {
	id, ok := idParam(c)
	if !ok {
		return 0, false
	}
	run, err := s.st.WorkflowRun(c.Request.Context(), id)
	if !s.visible(c, "workflow run", err, err == nil && currentUser(c).AppAllowed(run.App)) || !mayManageWorkflow(c, run.App) {
		return 0, false
	}
	return id, true
}
