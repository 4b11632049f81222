package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// workflowRoutes registers the workflows (issue 22), with the RBAC of
// jobs (admin/ops: workflows.go): viewers read the workflows of their
// apps, operators manage them; a workflow of an app the user may not see
// does not exist for them.
func (s *Server) workflowRoutes(view, op gin.IRoutes) {
	view.GET("/workflows", s.listWorkflows)
	view.GET("/workflows/:id", s.getWorkflow)
	view.GET("/workflows/:id/runs", s.listWorkflowRuns)
	view.GET("/workflows/:id/layout", s.workflowLayout) // workflow_layout.go
	view.GET("/workflow-runs/:id", s.getWorkflowRun)
	op.POST("/workflow-runs/:id/rerun", s.limitManualRuns, s.rerunWorkflowRun) // workflow_rerun.go
	op.POST("/workflow-runs/:id/cancel", s.cancelWorkflowRun)                  // workflow_cancel.go
	op.POST("/workflows/:id/trigger", s.limitManualRuns, s.triggerWorkflow)
	op.POST("/workflows/:id/backfill", s.limitManualRuns, s.backfillWorkflow) // workflow_backfill.go
	op.POST("/workflows/validate", s.validateWorkflow)                        // workflow_validate.go
	op.POST("/workflows", s.createWorkflow)
	op.PUT("/workflows/:id", s.updateWorkflow)
	op.DELETE("/workflows/:id", s.deleteWorkflow)
}

func (s *Server) listWorkflows(c *gin.Context) {
	after, _ := strconv.ParseInt(c.Query("after"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	out, err := s.ops.Workflows(c.Request.Context(), actor(c), after, limit)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"workflows": out})
}

// workflowID reads the id parameter and checks with check (admin/ops:
// StoredWorkflow, ManagedWorkflow) that the user may read or change that
// workflow, for a handler that decodes a body after: the workflow is
// answered (404, 403) before a body in error (400). False when it has
// answered.
func (s *Server) workflowID(c *gin.Context, check func(*gin.Context, int64) error) (int64, bool) {
	id, ok := idParam(c)
	if !ok {
		return 0, false
	}
	if err := check(c, id); err != nil {
		s.opsFailed(c, err)
		return 0, false
	}
	return id, true
}

// storedWorkflow is a check of workflowID: the user may read it.
func (s *Server) storedWorkflow(c *gin.Context, id int64) error {
	_, err := s.ops.StoredWorkflow(c.Request.Context(), actor(c), id)
	return err
}

// managedWorkflow is a check of workflowID: the user may change it.
func (s *Server) managedWorkflow(c *gin.Context, id int64) error {
	_, err := s.ops.ManagedWorkflow(c.Request.Context(), actor(c), id)
	return err
}

func (s *Server) getWorkflow(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	v, err := s.ops.Workflow(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) createWorkflow(c *gin.Context) {
	var spec apitypes.WorkflowSpec
	if !decode(c, &spec) {
		return
	}
	v, err := s.ops.CreateWorkflow(c.Request.Context(), actor(c), spec)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusCreated, v)
}

func (s *Server) updateWorkflow(c *gin.Context) {
	id, ok := s.workflowID(c, s.storedWorkflow)
	if !ok {
		return
	}
	var spec apitypes.WorkflowSpec
	if !decode(c, &spec) {
		return
	}
	v, err := s.ops.UpdateWorkflow(c.Request.Context(), actor(c), id, spec)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) deleteWorkflow(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	if err := s.ops.DeleteWorkflow(c.Request.Context(), actor(c), id); err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"deleted": id})
}

// listWorkflowRuns answers the runs of a workflow, newest first:
// ?before=ID for the page after, ?limit=N (1-1000, default 100).
func (s *Server) listWorkflowRuns(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	out, err := s.ops.WorkflowRuns(c.Request.Context(), actor(c), id, before, limit)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"runs": out})
}
