package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflow"
)

// workflowLayout answers the layered drawing of a workflow's graph (its
// current version), computed by admin/workflow so that the console, the
// CLI and tests draw the same picture.
func (s *Server) workflowLayout(c *gin.Context) {
	w, ok := s.loadWorkflow(c)
	if !ok {
		return
	}
	out, err := layoutOf(w)
	if err != nil {
		s.internal(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// layoutOf lays out a stored workflow's definition. A stored definition
// passed validation when it was saved; failing now is an internal error.
func layoutOf(w store.Workflow) (apitypes.WorkflowLayout, error) {
	var def workflow.Definition
	if err := json.Unmarshal([]byte(w.Definition), &def); err != nil {
		return apitypes.WorkflowLayout{}, fmt.Errorf("workflow %d: stored definition: %w", w.ID, err)
	}
	g, err := workflow.Validate(def)
	if err != nil {
		return apitypes.WorkflowLayout{}, fmt.Errorf("workflow %d: stored definition: %w", w.ID, err)
	}
	l := g.Layout()
	out := apitypes.WorkflowLayout{WorkflowID: w.ID, Version: w.Version, Layers: l.Layers, Rows: l.Rows, Crossings: l.Crossings,
		Nodes: make([]apitypes.WorkflowLayoutNode, len(l.Nodes)), Edges: make([]apitypes.WorkflowLayoutEdge, len(l.Edges))}
	for i, n := range l.Nodes {
		out.Nodes[i] = apitypes.WorkflowLayoutNode{Key: n.Key, Layer: n.Layer, Row: n.Row, X: n.X, Y: n.Y}
	}
	for i, e := range l.Edges {
		pts := make([]apitypes.WorkflowPoint, len(e.Points))
		for j, p := range e.Points {
			pts[j] = apitypes.WorkflowPoint{X: p.X, Y: p.Y}
		}
		out.Edges[i] = apitypes.WorkflowLayoutEdge{From: e.From, To: e.To, Points: pts}
	}
	return out, nil
}
