package workflowrun_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// TestBackfillRunsAtMostParallelAtOnce: a 30-date backfill of a two-node
// workflow with parallelism 3 never has more than 3 runs running, starts
// them oldest date first, creates each date once (a second, overlapping
// backfill keeps the runs it finds), and ends with 30 succeeded runs.
func TestBackfillRunsAtMostParallelAtOnce(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, workflow.Definition{Nodes: []workflow.Node{{Key: "load"}, {Key: "settle"}},
			Edges: []workflow.Edge{{From: "load", To: "settle"}}})
		backfill := func(from, to string, parallel int) ([]workflowrun.BackfillDate, []bool) {
			existing, err := st.RunsOfDates(ctx, f.wf.ID, from, to)
			require.NoError(t, err)
			plan, fields := workflowrun.PlanBackfill(workflowrun.BackfillRequest{From: from, To: to, Parallel: parallel}, existing)
			require.Empty(t, fields)
			runs := workflowrun.BackfillRuns(f.wf, plan, time.UTC, "", "ops")
			_, _, created, err := st.CreateBackfill(ctx, f.epoch, store.Backfill{WorkflowID: f.wf.ID, App: f.wf.App, FromDate: from, ToDate: to,
				Parallel: parallel, CreatedBy: "ops"}, runs)
			require.NoError(t, err)
			return plan, created
		}
		plan, created := backfill("2026-01-01", "2026-01-30", 3)
		require.Len(t, plan, 30)
		require.Len(t, created, 30)
		require.NotContains(t, created, false)

		var started []string
		seen := map[int64]bool{}
		most := 0
		for range 200 {
			f.pass()
			runs, err := st.WorkflowRuns(ctx, f.wf.ID, 0, 100)
			require.NoError(t, err)
			running, active := 0, 0
			for _, r := range slices.Backward(runs) { // oldest first
				if r.Status == store.RunRunning {
					running++
					if !seen[r.ID] {
						seen[r.ID] = true
						started = append(started, r.BusinessDate)
					}
				}
				if r.Status == store.RunPending || r.Status == store.RunRunning {
					active++
				}
				// A run that waits for its turn says so; one that runs
				// has no reason left.
				switch r.Status {
				case store.RunPending:
					require.Equal(t, msg.FlowRunWaitsBackfill, r.ReasonMsg.Code, "run of %s", r.BusinessDate)
					require.Equal(t, fmt.Sprintf("waits for its turn: backfill %d runs 3 at a time, and that many are running", r.BackfillID), r.Reason)
				case store.RunRunning:
					require.Empty(t, r.Reason)
				}
			}
			require.LessOrEqual(t, running, 3, "at most the backfill's parallelism runs at once")
			most = max(most, running)
			if active == 0 {
				break
			}
			// Each running run's running node succeeds.
			for _, r := range runs {
				if r.Status != store.RunRunning {
					continue
				}
				for key, st := range f.states(r.ID) {
					if st == store.RunRunning {
						f.settle(r.ID, key, store.RunSucceeded)
					}
				}
			}
		}
		want := make([]string, 30)
		for i := range want {
			want[i] = fmt.Sprintf("2026-01-%02d", i+1)
		}
		require.Equal(t, want, started, "started oldest date first, each once")
		require.Equal(t, 3, most, "three at a time")
		require.Equal(t, 30, count(t, st, `SELECT COUNT(*) FROM workflow_run WHERE workflow_id = ? AND status = 'succeeded'`, f.wf.ID))
		require.Equal(t, 60, count(t, st, `SELECT COUNT(*) FROM job_run WHERE trigger_kind = 'workflow' AND status = 'succeeded'`))

		// An overlapping backfill keeps what exists and creates the rest.
		plan, created = backfill("2026-01-29", "2026-02-02", 2)
		actions := map[string]int{}
		for _, d := range plan {
			actions[d.Action]++
		}
		require.Equal(t, map[string]int{workflowrun.BackfillExists: 2, workflowrun.BackfillCreate: 3}, actions)
		require.Equal(t, []bool{true, true, true}, created)
		require.Equal(t, 33, count(t, st, `SELECT COUNT(*) FROM workflow_run WHERE workflow_id = ?`, f.wf.ID), "each date once")
	})
}

// TestPlanBackfill: dates in order (newest first when asked), the dates
// with a run kept, only missing dates skipping succeeded ones, and every
// bad field named.
func TestPlanBackfill(t *testing.T) {
	t.Parallel()
	existing := []store.DateRun{
		{ID: 7, RunKey: store.WorkflowRunKeyDate("2026-03-02"), BusinessDate: "2026-03-02", Status: store.RunFailed},
		{ID: 9, RunKey: "2026-03-03T18:00:00.000Z", BusinessDate: "2026-03-03", Status: store.RunSucceeded},
	}
	plan, fields := workflowrun.PlanBackfill(workflowrun.BackfillRequest{From: "2026-03-01", To: "2026-03-04", Parallel: 1, NewestFirst: true, OnlyMissing: true}, existing)
	require.Empty(t, fields)
	require.Equal(t, []workflowrun.BackfillDate{
		{Date: "2026-03-04", Action: workflowrun.BackfillCreate},
		{Date: "2026-03-03", Action: workflowrun.BackfillSucceeded, RunID: 9},
		{Date: "2026-03-02", Action: workflowrun.BackfillExists, RunID: 7},
		{Date: "2026-03-01", Action: workflowrun.BackfillCreate},
	}, plan)
	plan, _ = workflowrun.PlanBackfill(workflowrun.BackfillRequest{From: "2026-03-03", To: "2026-03-03", Parallel: 1}, existing)
	require.Equal(t, []workflowrun.BackfillDate{{Date: "2026-03-03", Action: workflowrun.BackfillCreate}}, plan, "a cron run of the date is not its date key")

	for _, c := range []struct {
		req  workflowrun.BackfillRequest
		want map[string]string
	}{
		{workflowrun.BackfillRequest{From: "2026-02-30", To: "03/01/2026", Parallel: 0}, map[string]string{
			"from": "2026-02-30: a day as YYYY-MM-DD, e.g. 2026-03-02", "to": "03/01/2026: a day as YYYY-MM-DD, e.g. 2026-03-02", "parallel": "between 1 and 20"}},
		{workflowrun.BackfillRequest{From: "2026-03-02", To: "2026-03-01", Parallel: 1}, map[string]string{
			"to": "2026-03-01 is before 2026-03-02: from is the first business date of the range, to the last"}},
		{workflowrun.BackfillRequest{From: "2025-01-01", To: "2026-01-01", Parallel: 21}, map[string]string{"parallel": "between 1 and 20"}},
		{workflowrun.BackfillRequest{From: "2024-01-01", To: "2025-01-01", Parallel: 2}, map[string]string{
			"to": "367 dates, at most 366: split the range into several backfills"}},
	} {
		_, fields := workflowrun.PlanBackfill(c.req, nil)
		got := map[string]string{}
		for k, m := range fields {
			got[k] = m.String()
		}
		require.Equal(t, c.want, got, "%+v", c.req)
	}
}
