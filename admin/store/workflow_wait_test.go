package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
)

func TestWaitSucceededByBusinessDate(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ok, err := s.ClaimEpoch(ctx, 1, "test")
		require.NoError(t, err)
		require.True(t, ok)
		job := newJob("billing", "load-trades", 0)
		job.TimeZone = "Asia/Shanghai" // UTC+8: its day starts at 16:00 UTC the day before
		jobID, err := s.CreateJob(ctx, job)
		require.NoError(t, err)
		other, err := s.CreateJob(ctx, newJob("billing", "load-fx", 0))
		require.NoError(t, err)

		succeeded := func(w store.WaitTarget) bool {
			t.Helper()
			var got bool
			require.NoError(t, s.Tx(ctx, func(tx *store.Tx) error {
				var err error
				got, err = tx.WaitSucceeded(ctx, w)
				return err
			}))
			return got
		}
		jobOn := func(date string) store.WaitTarget {
			return store.WaitTarget{App: "billing", Name: "load-trades", Date: date}
		}
		insert := func(jobID int64, at time.Time, kind string) int64 {
			t.Helper()
			run, created, err := s.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: at.UnixMilli(), TriggerKind: kind, Status: store.RunPending, SlotCount: 1})
			require.NoError(t, err)
			require.True(t, created)
			return run.ID
		}
		setStatus := func(table string, id int64, status string) {
			t.Helper()
			_, err := s.DB().Exec(`UPDATE `+table+` SET status = ? WHERE id = ?`, status, id)
			require.NoError(t, err)
		}

		// 2026-11-30 16:30 UTC is 2026-12-01 00:30 in Shanghai.
		run := insert(jobID, time.Date(2026, 11, 30, 16, 30, 0, 0, time.UTC), store.TriggerCron)
		require.False(t, succeeded(jobOn("2026-12-01")), "pending is not succeeded")
		setStatus("job_run", run, store.RunFailed)
		require.False(t, succeeded(jobOn("2026-12-01")), "failed is not succeeded")
		setStatus("job_run", run, store.RunSucceeded)
		require.True(t, succeeded(jobOn("2026-12-01")), "the scheduled day in the job's zone")
		require.False(t, succeeded(jobOn("2026-11-30")), "the UTC day is not the business date")
		require.False(t, succeeded(jobOn("2026-12-02")))
		require.False(t, succeeded(store.WaitTarget{App: "billing", Name: "load-fx", Date: "2026-12-01"}), "another job")
		require.False(t, succeeded(store.WaitTarget{App: "market", Name: "load-trades", Date: "2026-12-01"}), "another app")
		require.False(t, succeeded(store.WaitTarget{App: "billing", Name: "nope", Date: "2026-12-01"}), "no such job")

		// A run created by a workflow node counts for the workflow run's
		// business date, whenever it was scheduled.
		wfID, err := s.CreateWorkflow(ctx, newWorkflow("market", "fx-close"))
		require.NoError(t, err)
		wr, _, err := s.CreateWorkflowRun(ctx, 1, store.NewWorkflowRun{WorkflowID: wfID, App: "market", RunKey: "date:2026-12-05",
			WorkflowVersion: 1, BusinessDate: "2026-12-05", TriggerKind: store.TriggerManual, Status: store.RunPending})
		require.NoError(t, err)
		fxRun := insert(other, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), store.TriggerWorkflow)
		_, _, err = s.CreateNodeRun(ctx, 1, store.NewNodeRun{WorkflowRunID: wr.ID, NodeKey: "fx", Status: store.RunRunning, JobRunID: fxRun})
		require.NoError(t, err)
		fx := func(date string) store.WaitTarget {
			return store.WaitTarget{App: "billing", Name: "load-fx", Date: date}
		}
		require.False(t, succeeded(fx("2026-12-05")))
		setStatus("job_run", fxRun, store.RunSucceeded)
		require.True(t, succeeded(fx("2026-12-05")), "the workflow run's business date")
		require.False(t, succeeded(fx("2026-12-01")), "not the day it was scheduled")

		// A workflow: one of its runs of that business date succeeded.
		wf := func(app, date string) store.WaitTarget {
			return store.WaitTarget{App: app, Name: "fx-close", Workflow: true, Date: date}
		}
		require.False(t, succeeded(wf("market", "2026-12-05")), "pending")
		setStatus("workflow_run", wr.ID, store.RunPartiallyFailed)
		require.False(t, succeeded(wf("market", "2026-12-05")), "partially failed is not succeeded")
		setStatus("workflow_run", wr.ID, store.RunSucceeded)
		require.True(t, succeeded(wf("market", "2026-12-05")))
		require.False(t, succeeded(wf("market", "2026-12-04")))
		require.False(t, succeeded(wf("billing", "2026-12-05")), "the same name in another app")

		err = s.Tx(ctx, func(tx *store.Tx) error {
			_, err := tx.WaitSucceeded(ctx, jobOn("01/12/2026"))
			return err
		})
		require.ErrorContains(t, err, "business date")
	})
}
