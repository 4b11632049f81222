package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
)

// TestDeletingAJobWithARunningRunIsRefusedAndItsRunsKeepItsName: a job
// with a running run is not deleted (409, field code job.delete_running,
// nothing changed: its pending run still pends); once the running run is
// cancelled, the delete cancels the pending run (run.job_deleted) and its
// runs still name the job's app and name, marked job_deleted, in the run
// list and on the run.
func TestDeletingAJobWithARunningRunIsRefusedAndItsRunsKeepItsName(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		e.user("ops", auth.RoleOperator)
		tok := e.token("ops")
		var j apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", tok, with("name", "doomed"), &j))
		var pending struct{ Run apitypes.Run }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(j.ID)+"/trigger", tok, nil, &pending))

		// A second run, placed (running).
		_, err := e.st.ClaimEpoch(ctx, 1, "test")
		require.NoError(t, err)
		running, _, err := e.st.InsertRun(ctx, 1, store.NewRun{JobID: j.ID, ScheduledAt: 1, TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: 1})
		require.NoError(t, err)
		require.Equal(t, "doomed", running.JobName)
		ok, err := e.st.StartRun(ctx, 1, running.ID, time.Hour, []store.NewAttempt{{Slot: 0, Attempt: 1}})
		require.NoError(t, err)
		require.True(t, ok)

		var refused apitypes.ErrorView
		require.Equal(t, http.StatusConflict, e.call("DELETE", "/api/v1/jobs/"+itoa(j.ID), tok, nil, &refused))
		require.Equal(t, "job billing/doomed has 1 running run(s): cancel them or let them finish, then delete the job", refused.Error)
		require.Equal(t, "job.delete_running", refused.FieldCodes["id"].Code)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs/"+itoa(j.ID), tok, nil, nil), "the job is still there")
		var r struct{ Run apitypes.Run }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+itoa(pending.Run.ID), tok, nil, &r))
		require.Equal(t, store.RunPending, r.Run.Status, "the refused delete cancelled nothing")

		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/runs/"+itoa(running.ID)+"/cancel", tok, map[string]string{"reason": "to delete its job"}, nil))
		require.Equal(t, http.StatusOK, e.call("DELETE", "/api/v1/jobs/"+itoa(j.ID), tok, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/jobs/"+itoa(j.ID), tok, nil, nil))

		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+itoa(pending.Run.ID), tok, nil, &r))
		require.Equal(t, store.RunCancelled, r.Run.Status, "the pending run ended with its job")
		require.Equal(t, "run.job_deleted", r.Run.ErrorCode)
		require.Equal(t, "doomed", r.Run.JobName)
		require.Equal(t, "billing", r.Run.App)
		require.True(t, r.Run.JobDeleted)
		var list struct{ Runs []apitypes.Run }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs?job_id="+itoa(j.ID), tok, nil, &list))
		require.Len(t, list.Runs, 2, "the history is still listed")
		for _, run := range list.Runs {
			require.Equal(t, "billing/doomed", run.App+"/"+run.JobName, "run %d", run.ID)
			require.True(t, run.JobDeleted, "run %d", run.ID)
		}
	})
}

// TestRunListIsOrderedByScheduledTime: runs created out of the order of
// their scheduled times (backfilled instants) are listed latest scheduled
// first, and keyset pages (before = next_before) continue in that order
// without a gap or a repeat.
func TestRunListIsOrderedByScheduledTime(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		tok := e.token("ops")
		var j apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", tok, with("name", "ordered"), &j))
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		// Created in this order (ids ascending); scheduled at base + h hours.
		hours := []int{5, 1, 9, 3, 7}
		for _, h := range hours {
			require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs/"+itoa(j.ID)+"/trigger", tok,
				map[string]any{"scheduled_at": base.Add(time.Duration(h) * time.Hour)}, nil))
		}
		var got []int
		before := ""
		for range 3 {
			var page struct {
				Runs       []apitypes.Run
				NextBefore int64 `json:"next_before"`
			}
			require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs?limit=2&job_id="+itoa(j.ID)+before, tok, nil, &page))
			for _, r := range page.Runs {
				got = append(got, int(r.ScheduledAt.Sub(base)/time.Hour))
			}
			if page.NextBefore == 0 {
				break
			}
			before = "&before=" + itoa(page.NextBefore)
		}
		require.Equal(t, []int{9, 7, 5, 3, 1}, got, "latest scheduled first, across pages")
		var all struct{ Runs []apitypes.Run }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs?limit=3", tok, nil, &all))
		require.Len(t, all.Runs, 3)
		require.Equal(t, base.Add(9*time.Hour), all.Runs[0].ScheduledAt.UTC(), "unfiltered: the same order")
	})
}
