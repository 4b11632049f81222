package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
)

// TestWorkflowLayout: the settlement workflow is drawn in three layers
// (the two loads, the settlement, then the report and the clean-up), every
// edge from its parent's point to its child's, without crossings; users of
// another app do not see it.
func TestWorkflowLayout(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		e.user("other", auth.RoleViewer)
		e.limitTo("ops", "billing", "market-data")
		e.limitTo("other", "search")
		e.createJobRow("billing", "load-trades")
		e.createJobRow("market-data", "load-fx")
		report := e.createJobRow("billing", "eod-report")
		var wf apitypes.Workflow
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows", e.token("ops"), settlementSpec(report), &wf))
		path := "/api/v1/workflows/" + itoa(wf.ID) + "/layout"

		var l apitypes.WorkflowLayout
		require.Equal(t, http.StatusOK, e.call("GET", path, e.token("ops"), nil, &l))
		require.Equal(t, wf.ID, l.WorkflowID)
		require.Equal(t, wf.Version, l.Version)
		require.Equal(t, 3, l.Layers)
		require.Equal(t, 2, l.Rows)
		require.Zero(t, l.Crossings)
		layer := map[string]int{}
		at := map[string]apitypes.WorkflowPoint{}
		for _, n := range l.Nodes {
			layer[n.Key] = n.Layer
			require.InDelta(t, float64(n.Layer), n.X, 1e-9, "x is the layer")
			at[n.Key] = apitypes.WorkflowPoint{X: n.X, Y: n.Y}
		}
		require.Equal(t, map[string]int{"load_trades": 0, "load_fx_rates": 0, "settle": 1, "report": 2, "cleanup": 2}, layer)
		require.Len(t, l.Edges, 4)
		for _, ed := range l.Edges {
			require.GreaterOrEqual(t, len(ed.Points), 2, "%s→%s", ed.From, ed.To)
			require.Equal(t, at[ed.From], ed.Points[0], "%s→%s starts at its parent", ed.From, ed.To)
			require.Equal(t, at[ed.To], ed.Points[len(ed.Points)-1], "%s→%s ends at its child", ed.From, ed.To)
		}
		require.Equal(t, http.StatusNotFound, e.call("GET", path, e.token("other"), nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/workflows/999999/layout", e.token("ops"), nil, nil))
	})
}
