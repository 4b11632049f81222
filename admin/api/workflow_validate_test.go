package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestWorkflowValidate: the console's editor previews a draft. The
// settlement workflow is valid: drawn in three layers, with its next
// five firings (weekdays 18:00 London, across the clock change of 29
// March) and their business dates; nothing is saved. A cycle, an unknown
// job and a bad cron are 400s naming their fields, as on save; a draft in
// an app the caller may not manage is 403, and viewers may not validate.
func TestWorkflowValidate(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		// Thursday 26 March 2026, 12:00 UTC.
		e := newEnvWithClock(t, st, clock.NewManual(time.Date(2026, 3, 26, 12, 0, 0, 0, time.UTC)))
		report := e.settlementUsers()
		ops := e.token("ops")

		var v apitypes.WorkflowValidation
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/workflows/validate", ops, settlementSpec(report), &v))
		require.True(t, v.Valid)
		require.Equal(t, 3, v.Layout.Layers)
		require.Len(t, v.Layout.Nodes, 5)
		require.Len(t, v.Layout.Edges, 4)
		require.Zero(t, v.Layout.WorkflowID, "a draft has no id")
		var at, dates []string
		for _, f := range v.Next {
			at = append(at, f.At.UTC().Format(time.RFC3339))
			dates = append(dates, f.BusinessDate)
		}
		require.Equal(t, []string{"2026-03-26T18:00:00Z", "2026-03-27T18:00:00Z", "2026-03-30T17:00:00Z", "2026-03-31T17:00:00Z", "2026-04-01T17:00:00Z"}, at,
			"18:00 London: GMT, then BST after 29 March; no weekend")
		require.Equal(t, []string{"2026-03-26", "2026-03-27", "2026-03-30", "2026-03-31", "2026-04-01"}, dates)
		require.Equal(t, "2026-03-30 18:00:00 BST", v.Next[2].Local)
		var n int
		require.NoError(t, st.DB().QueryRow(`SELECT COUNT(*) FROM workflow`).Scan(&n))
		require.Zero(t, n, "validation saves nothing")

		// Without a cron: valid, no firings.
		manual := settlementSpec(report)
		manual.Cron = ""
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/workflows/validate", ops, manual, &v))
		require.Empty(t, v.Next)

		// Mistakes are the save's 400s, each naming its field.
		bad := settlementSpec(report)
		bad.Cron = "0 25 * * *"
		bad.Nodes[0].Job = &apitypes.WorkflowJobRef{Name: "no-such-job"}
		bad.Edges = append(bad.Edges, apitypes.WorkflowEdge{From: "report", To: "load_trades"})
		var body struct{ Fields map[string]string }
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/workflows/validate", ops, bad, &body))
		require.Contains(t, body.Fields, "cron")
		require.Contains(t, body.Fields["edges"], "a cycle: load_trades → settle → report → load_trades")
		bad.Cron, bad.Edges = "", settlementSpec(report).Edges
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/workflows/validate", ops, bad, &body))
		require.Equal(t, "no job billing/no-such-job in the apps you may manage", body.Fields["nodes[0].job"])

		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/workflows/validate", e.token("other"), settlementSpec(report), nil))
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/workflows/validate", e.token("eve"), settlementSpec(report), nil))
	})
}
