package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
)

// TestJobBackfill: a dry run lists each date's action and instant (the
// job's 09:00 New York firing, across the DST change) and creates nothing;
// bad input names its fields; a backfill creates one run per date, trigger
// kind backfill; the same request again creates nothing; only_missing
// passes over a date with a succeeded run; viewers may not backfill (403),
// other apps do not see the job (404), the job of a workflow's inline node
// is 409, a deleted job 404; the backfills are listed; everything is
// audited.
func TestJobBackfill(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		wf := e.settlementWorkflow()
		ops := e.token("ops")
		id, err := e.st.CreateJob(ctx, store.Job{App: "billing", Name: "load-daily", Handler: "noop", CronExpr: "0 9 * * *", TimeZone: "America/New_York",
			MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 2, Params: `{"src":"a"}`, Enabled: true})
		require.NoError(t, err)
		path := "/api/v1/jobs/" + itoa(id) + "/backfill"
		runs := func() []apitypes.Run {
			var out struct{ Runs []apitypes.Run }
			require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs?job_id="+itoa(id), ops, nil, &out))
			return out.Runs
		}
		ny := mustZone(t, "America/New_York")

		var plan apitypes.JobBackfillPlan
		require.Equal(t, http.StatusOK, e.call("POST", path, ops, apitypes.JobBackfill{From: "2026-03-07", To: "2026-03-10", Parallel: 2, NewestFirst: true, DryRun: true}, &plan))
		require.True(t, plan.DryRun)
		require.Zero(t, plan.BackfillID)
		require.Equal(t, 4, plan.Created)
		require.Equal(t, []apitypes.JobBackfillDate{
			{Date: "2026-03-10", Action: "create", ScheduledAt: time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC)},
			{Date: "2026-03-09", Action: "create", ScheduledAt: time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC)},
			{Date: "2026-03-08", Action: "create", ScheduledAt: time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC)},
			{Date: "2026-03-07", Action: "create", ScheduledAt: time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC)},
		}, plan.Dates, "newest first, 09:00 in New York")
		require.Empty(t, runs(), "a dry run creates nothing")

		for _, c := range []struct {
			body   string
			fields []string
			code   string
		}{
			{`{"from": "2026-3-1", "to": "x", "parallel": 21, "params": "[1]"}`, []string{"from", "parallel", "params", "to"}, "backfill.date"},
			{`{"from": "2026-03-05", "to": "2026-03-01"}`, []string{"to"}, "backfill.backwards"},
			{`{"from": "2025-01-01", "to": "2026-01-02"}`, []string{"to"}, "backfill.too_long"},
			{`{"from": "2026-03-01", "to": "2026-03-01", "parallel": -1}`, []string{"parallel"}, "value.between"},
			{`{"from": "2026-03-01", "to": "2026-03-01", "params": "not json"}`, []string{"params"}, "workflow.params_object"},
		} {
			var bad errorAnswer
			require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, c.body, &bad), c.body)
			require.Equal(t, c.fields, sortedKeys(bad.Fields), c.body)
			require.Equal(t, c.code, string(bad.FieldCodes[c.fields[len(c.fields)-1]].Code), c.body)
		}
		require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, `{"from": "2026-03-01", "to": "2026-03-01", "speed": 2}`, nil), "unknown fields")
		require.Empty(t, runs(), "no bad request creates anything")

		require.Equal(t, http.StatusCreated, e.call("POST", path, ops, apitypes.JobBackfill{From: "2026-03-07", To: "2026-03-10", Parallel: 2, Params: `{"src":"b"}`}, &plan))
		require.Positive(t, plan.BackfillID)
		require.Equal(t, 4, plan.Created)
		got := runs()
		require.Len(t, got, 4)
		for _, r := range got {
			require.Equal(t, "backfill", r.Trigger)
			require.Equal(t, store.RunPending, r.Status)
			require.Equal(t, 9, r.ScheduledAt.In(ny).Hour(), "the date's 09:00 firing")
			require.Equal(t, 2, r.SlotCount)
		}
		require.Equal(t, "2026-03-07", plan.Dates[0].Date, "oldest first")
		var detail apitypes.RunDetail
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+itoa(plan.Dates[0].RunID), ops, nil, &detail))
		require.Equal(t, `{"src":"b"}`, detail.Run.Params, "the params given, not the job's")
		require.Less(t, plan.Dates[0].RunID, plan.Dates[3].RunID, "created in the order they start")

		// The same again creates nothing.
		first := plan.BackfillID
		require.Equal(t, http.StatusCreated, e.call("POST", path, ops, apitypes.JobBackfill{From: "2026-03-07", To: "2026-03-10", Parallel: 2}, &plan))
		require.Zero(t, plan.Created)
		for _, d := range plan.Dates {
			require.Equal(t, "exists", d.Action, d.Date)
			require.Positive(t, d.RunID)
		}
		require.Len(t, runs(), 4)

		// 8 March succeeded (at another time of the day: a manual run);
		// only the missing dates: the 6th is created, the 8th passed over.
		late := time.Date(2026, 3, 8, 22, 0, 0, 0, ny).UnixMilli()
		manual, _, err := e.st.InsertRun(ctx, 1, store.NewRun{JobID: id, ScheduledAt: late, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
		require.NoError(t, err)
		_, err = e.st.DB().Exec(`UPDATE job_run SET status = 'succeeded' WHERE id = ?`, manual.ID)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, e.call("POST", path, ops, apitypes.JobBackfill{From: "2026-03-06", To: "2026-03-10", OnlyMissing: true}, &plan))
		actions := map[string]string{}
		for _, d := range plan.Dates {
			actions[d.Date] = d.Action
		}
		require.Equal(t, map[string]string{"2026-03-06": "create", "2026-03-07": "exists", "2026-03-08": "succeeded", "2026-03-09": "exists",
			"2026-03-10": "exists"}, actions)
		require.Equal(t, 1, plan.Created)
		require.Len(t, runs(), 6)

		var list struct{ Backfills []apitypes.JobBackfillView }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs/"+itoa(id)+"/backfills", e.token("eve"), nil, &list))
		require.Len(t, list.Backfills, 3)
		require.Equal(t, first, list.Backfills[2].ID)
		require.Equal(t, apitypes.JobBackfillView{ID: first, JobID: id, From: "2026-03-07", To: "2026-03-10", Parallel: 2, CreatedBy: "ops",
			CreatedAt: list.Backfills[2].CreatedAt, Runs: 4, Pending: 4}, list.Backfills[2])

		body := apitypes.JobBackfill{From: "2026-03-01", To: "2026-03-01"}
		require.Equal(t, http.StatusForbidden, e.call("POST", path, e.token("eve"), body, nil), "a viewer")
		require.Equal(t, http.StatusNotFound, e.call("POST", path, e.token("other"), body, nil), "another app's job")
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/jobs/"+itoa(id)+"/backfills", e.token("other"), nil, nil))
		var inline int64
		require.NoError(t, e.st.DB().Get(&inline, `SELECT id FROM job WHERE workflow_id = ? ORDER BY id LIMIT 1`, wf.ID))
		var owned errorAnswer
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/jobs/"+itoa(inline)+"/backfill", ops, body, &owned), "a workflow's inline job")
		require.Equal(t, "job.workflow_owned", string(owned.FieldCodes["id"].Code))
		require.Equal(t, []string{"job.backfill", "job.backfill", "job.backfill", "job.backfill"}, e.auditActions("job/"+itoa(id)),
			"the dry run and the three backfills")
		require.NoError(t, e.st.DeleteJob(ctx, id))
		require.Equal(t, http.StatusNotFound, e.call("POST", path, ops, body, nil), "a deleted job")
	})
}
