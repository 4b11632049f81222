package apitypes

import "time"

// WorkflowLayout is a layered drawing of a workflow's graph for the console
// (GET /api/v1/workflows/{id}/layout), in grid units the console scales: a
// node's X is its layer (the longest path from a root), Y its row in the
// layer. Edges that span layers bend once per layer crossed. The layout is
// deterministic: the same definition draws the same way.
type WorkflowLayout struct {
	WorkflowID int64 `json:"workflow_id"`
	Version    int64 `json:"version"` // the workflow version drawn
	Layers     int   `json:"layers"`
	Rows       int   `json:"rows"` // the widest layer, bend points included
	// Crossings is the number of edge crossings left between adjacent
	// layers.
	Crossings int                  `json:"crossings"`
	Nodes     []WorkflowLayoutNode `json:"nodes"` // in definition order
	Edges     []WorkflowLayoutEdge `json:"edges"` // in definition order
}

// WorkflowLayoutNode is a node's place.
type WorkflowLayoutNode struct {
	Key   string  `json:"key"`
	Layer int     `json:"layer"`
	Row   int     `json:"row"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
}

// WorkflowLayoutEdge is an edge's polyline from its parent's point to its
// child's.
type WorkflowLayoutEdge struct {
	From   string          `json:"from"`
	To     string          `json:"to"`
	Points []WorkflowPoint `json:"points"`
}

// WorkflowPoint is a position in grid units.
type WorkflowPoint struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// WorkflowValidation answers POST /api/v1/workflows/validate: the draft is
// valid as a save would find it; its drawing (WorkflowID and Version 0) and
// its next firings (none without a cron).
type WorkflowValidation struct {
	Valid  bool             `json:"valid"`
	Layout WorkflowLayout   `json:"layout"`
	Next   []WorkflowFiring `json:"next"`
}

// WorkflowFiring is one coming firing of a workflow's schedule: its
// instant, the local time in the workflow's zone, and the business date
// its run gets.
type WorkflowFiring struct {
	At           time.Time `json:"at"`
	Local        string    `json:"local"`
	BusinessDate string    `json:"business_date"`
}
