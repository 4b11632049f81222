package api_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
)

// TestWorkflowBackfill: a dry run lists the dates and creates nothing; bad
// input names its fields (with codes); a backfill creates one run per date,
// keyed by the date, in the Europe/London zone's days; a second, only for
// missing dates, keeps the existing runs and skips the succeeded date;
// viewers may not backfill, other apps do not see the workflow; everything
// is audited.
func TestWorkflowBackfill(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		wf := e.settlementWorkflow()
		ops := e.token("ops")
		path := "/api/v1/workflows/" + itoa(wf.ID) + "/backfill"
		runs := func() []apitypes.WorkflowRun {
			var out struct{ Runs []apitypes.WorkflowRun }
			require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/workflows/"+itoa(wf.ID)+"/runs", ops, nil, &out))
			return out.Runs
		}

		var plan apitypes.WorkflowBackfillPlan
		require.Equal(t, http.StatusOK, e.call("POST", path, ops, apitypes.WorkflowBackfill{From: "2026-03-01", To: "2026-03-05", Parallel: 2, NewestFirst: true, DryRun: true}, &plan))
		require.True(t, plan.DryRun)
		require.Zero(t, plan.BackfillID)
		require.Equal(t, 5, plan.Created)
		require.Equal(t, "2026-03-05", plan.Dates[0].Date, "newest first")
		require.Equal(t, "create", plan.Dates[4].Action)
		require.Empty(t, runs(), "a dry run creates nothing")

		var bad errorAnswer
		require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, apitypes.WorkflowBackfill{From: "2026-03-05", To: "2026-03-01", Parallel: 21, Params: "[1]"}, &bad))
		require.Equal(t, []string{"parallel", "params", "to"}, sortedKeys(bad.Fields))
		require.Contains(t, bad.Fields["to"], "2026-03-01 is before 2026-03-05")
		require.Len(t, bad.FieldCodes, 3)
		require.Equal(t, "backfill.backwards", string(bad.FieldCodes["to"].Code))

		require.Equal(t, http.StatusCreated, e.call("POST", path, ops, apitypes.WorkflowBackfill{From: "2026-03-01", To: "2026-03-05", Parallel: 2}, &plan))
		require.Positive(t, plan.BackfillID)
		require.Equal(t, 5, plan.Created)
		got := runs()
		require.Len(t, got, 5)
		for _, r := range got {
			require.Equal(t, "backfill", r.Trigger)
			require.Equal(t, "date:"+r.BusinessDate, r.RunKey)
			require.Equal(t, 0, r.ScheduledAt.In(mustZone(t, "Europe/London")).Hour(), "the start of the day in the workflow's zone")
		}
		require.Equal(t, got[len(got)-1].ID, plan.Dates[0].RunID, "the first date is the oldest run")

		// 2 March succeeded; the rest are still pending.
		second := plan.Dates[1].RunID
		for _, tr := range []store.StatusTransition{{ID: second, From: store.RunPending, To: store.RunRunning}, {ID: second, From: store.RunRunning, To: store.RunSucceeded}} {
			ok, err := e.st.TransitionWorkflowRun(ctx, tr)
			require.NoError(t, err)
			require.True(t, ok)
		}
		require.Equal(t, http.StatusCreated, e.call("POST", path, ops, apitypes.WorkflowBackfill{From: "2026-03-01", To: "2026-03-06", OnlyMissing: true}, &plan))
		actions := map[string]string{}
		for _, d := range plan.Dates {
			actions[d.Date] = d.Action
		}
		require.Equal(t, map[string]string{"2026-03-01": "exists", "2026-03-02": "succeeded", "2026-03-03": "exists", "2026-03-04": "exists",
			"2026-03-05": "exists", "2026-03-06": "create"}, actions)
		require.Equal(t, 1, plan.Created)
		require.Len(t, runs(), 6, "each date once")

		require.Equal(t, http.StatusForbidden, e.call("POST", path, e.token("eve"), apitypes.WorkflowBackfill{From: "2026-03-01", To: "2026-03-01"}, nil))
		require.Equal(t, http.StatusNotFound, e.call("POST", path, e.token("other"), apitypes.WorkflowBackfill{From: "2026-03-01", To: "2026-03-01"}, nil))
		require.Equal(t, []string{"workflow.create", "workflow.backfill", "workflow.backfill", "workflow.backfill"}, e.auditActionsIn("billing", "workflow/"+itoa(wf.ID)))
		require.Equal(t, []string{"workflow.backfill", "workflow.backfill", "workflow.backfill"}, e.auditActionsIn("market-data", "workflow/"+itoa(wf.ID)),
			"its load_fx_rates node runs market-data's job: market-data's audit log says so")
	})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
