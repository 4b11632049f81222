package ops_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
)

// TestAppQuotas: an admin sets an app's quotas; an operator of the app may
// describe it but not change them; each quota refuses by field what goes
// beyond it (jobs, slots of a job or of a workflow's inline node, a
// backfill's parallel runs), naming the app and the quota; 0 removes one.
func TestAppQuotas(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		admin := ops.Actor{User: store.User{Username: "ada", Role: store.RoleAdmin}}
		n := func(v int64) *int64 { return &v }
		first, err := svc.CreateJob(ctx, billingOnly, spec("billing", "a"))
		require.NoError(t, err)
		_, err = svc.CreateJob(ctx, billingOnly, spec("billing", "b"))
		require.NoError(t, err)
		app, err := svc.App(ctx, billingOnly, "billing")
		require.NoError(t, err)
		require.Nil(t, app.MaxJobs, "no quota until an admin sets one")

		_, err = svc.UpdateApp(ctx, billingOnly, "billing", apitypes.AppSpec{Version: app.Version, MaxJobs: n(10)})
		refused(t, err, ops.ErrForbidden, "max_jobs", msg.AppQuotaAdmins)
		_, err = svc.UpdateApp(ctx, admin, "billing", apitypes.AppSpec{Version: app.Version, MaxSlotsPerRun: n(2000)})
		refused(t, err, ops.ErrInvalid, "max_slots_per_run", msg.AppQuotaRange)
		app, err = svc.UpdateApp(ctx, admin, "billing", apitypes.AppSpec{Version: app.Version, MaxJobs: n(2), MaxSlotsPerRun: n(8), MaxBackfillParallel: n(2)})
		require.NoError(t, err)
		require.Equal(t, int64(2), *app.MaxJobs)
		require.Equal(t, int64(8), *app.MaxSlotsPerRun)
		require.Equal(t, int64(2), *app.MaxBackfillParallel)
		_, err = svc.UpdateApp(ctx, billingOnly, "billing", apitypes.AppSpec{Version: app.Version, Description: ptr("invoices")})
		require.NoError(t, err, "an operator still describes the app")

		_, err = svc.CreateJob(ctx, billingOnly, spec("billing", "c"))
		e := refusal(t, err, ops.ErrConflict, "app", msg.AppQuotaJobs)
		require.Equal(t, "app billing has 2 jobs, its quota (max_jobs 2): delete one or ask an admin to raise the quota", e.Error())
		_, err = svc.CloneJob(ctx, billingOnly, first.ID, apitypes.CloneRequest{Name: "a-copy"})
		refused(t, err, ops.ErrConflict, "app", msg.AppQuotaJobs)

		wide := first.JobSpec
		wide.SlotCount = 16
		_, err = svc.UpdateJob(ctx, billingOnly, first.ID, wide)
		e = refusal(t, err, ops.ErrInvalid, "slots", msg.AppQuotaSlots)
		require.Contains(t, e.Error(), "at most 8 slots per run in app billing")
		wide.SlotCount = 8
		_, err = svc.UpdateJob(ctx, billingOnly, first.ID, wide)
		require.NoError(t, err, "at the quota")

		wf := workflowSpec("billing", "close")
		wf.Nodes = []apitypes.WorkflowNode{{Key: "a", Handler: "demo", SlotCount: 9}}
		_, err = svc.CreateWorkflow(ctx, billingOnly, wf)
		refused(t, err, ops.ErrInvalid, "nodes[0].slots", msg.AppQuotaSlots)

		_, err = svc.BackfillJob(ctx, billingOnly, first.ID, apitypes.JobBackfill{From: "2026-11-01", To: "2026-11-05", Parallel: 3, DryRun: true})
		refused(t, err, ops.ErrInvalid, "parallel", msg.AppQuotaBackfil)
		_, err = svc.BackfillJob(ctx, billingOnly, first.ID, apitypes.JobBackfill{From: "2026-11-01", To: "2026-11-05", Parallel: 2, DryRun: true})
		require.NoError(t, err)

		// 0 removes a quota; other apps never had one.
		app, err = svc.App(ctx, admin, "billing")
		require.NoError(t, err)
		_, err = svc.UpdateApp(ctx, admin, "billing", apitypes.AppSpec{Version: app.Version, MaxJobs: n(0)})
		require.NoError(t, err)
		_, err = svc.CreateJob(ctx, billingOnly, spec("billing", "c"))
		require.NoError(t, err)
		big := spec("payroll", "big")
		big.SlotCount = 1024
		_, err = svc.CreateJob(ctx, operator, big)
		require.NoError(t, err)
	})
}

// TestConcurrencyCapsAreSaved: an admin caps an app's running slots and
// its start rate (an operator of the app may not; beyond 1,000,000 is
// refused by field; 0 removes them), an operator caps a job's; all come
// back as saved.
func TestConcurrencyCapsAreSaved(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		admin := ops.Actor{User: store.User{Username: "ada", Role: store.RoleAdmin}}
		n := func(v int64) *int64 { return &v }
		capped := spec("billing", "settle")
		capped.MaxRunningSlots = 16
		job, err := svc.CreateJob(ctx, billingOnly, capped)
		require.NoError(t, err)
		require.Equal(t, 16, job.MaxRunningSlots)
		row, err := st.Job(ctx, job.ID)
		require.NoError(t, err)
		require.Equal(t, int64(16), row.MaxRunningSlots.Int64)
		capped.MaxRunningSlots = 1_000_001
		capped.Name = "too-wide"
		_, err = svc.CreateJob(ctx, billingOnly, capped)
		refused(t, err, ops.ErrInvalid, "max_running_slots", msg.ValueBetween)

		app, err := svc.App(ctx, billingOnly, "billing")
		require.NoError(t, err)
		require.Nil(t, app.MaxRunningSlots)
		_, err = svc.UpdateApp(ctx, billingOnly, "billing", apitypes.AppSpec{Version: app.Version, MaxRunningSlots: n(64)})
		refused(t, err, ops.ErrForbidden, "max_running_slots", msg.AppQuotaAdmins)
		_, err = svc.UpdateApp(ctx, admin, "billing", apitypes.AppSpec{Version: app.Version, MaxRunningSlots: n(1_000_001)})
		refused(t, err, ops.ErrInvalid, "max_running_slots", msg.AppQuotaRange)
		_, err = svc.UpdateApp(ctx, billingOnly, "billing", apitypes.AppSpec{Version: app.Version, MaxStartsPerSecond: n(5)})
		refused(t, err, ops.ErrForbidden, "max_starts_per_second", msg.AppQuotaAdmins)
		app, err = svc.UpdateApp(ctx, admin, "billing", apitypes.AppSpec{Version: app.Version, MaxRunningSlots: n(64), MaxStartsPerSecond: n(50)})
		require.NoError(t, err)
		require.Equal(t, int64(64), *app.MaxRunningSlots)
		require.Equal(t, int64(50), *app.MaxStartsPerSecond)
		caps, err := st.AppCaps(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]store.AppLimit{"billing": {MaxRunningSlots: 64, MaxStartsPerSecond: 50, Weight: 1}}, caps)
		_, err = svc.UpdateApp(ctx, admin, "billing", apitypes.AppSpec{Version: app.Version, Weight: n(0)})
		refused(t, err, ops.ErrInvalid, "weight", msg.ValueBetween)
		_, err = svc.UpdateApp(ctx, billingOnly, "billing", apitypes.AppSpec{Version: app.Version, Weight: n(3)})
		refused(t, err, ops.ErrForbidden, "weight", msg.AppQuotaAdmins)
		app, err = svc.UpdateApp(ctx, admin, "billing", apitypes.AppSpec{Version: app.Version, Weight: n(3)})
		require.NoError(t, err)
		require.Equal(t, int64(3), app.Weight)
		app, err = svc.UpdateApp(ctx, admin, "billing", apitypes.AppSpec{Version: app.Version, MaxRunningSlots: n(0), MaxStartsPerSecond: n(0), Weight: n(1)})
		require.NoError(t, err)
		require.Equal(t, int64(1), app.Weight)
		require.Nil(t, app.MaxRunningSlots)
		require.Nil(t, app.MaxStartsPerSecond)
		caps, err = st.AppCaps(ctx)
		require.NoError(t, err)
		require.Empty(t, caps)
	})
}

func ptr(s string) *string { return &s }

// TestRunPriorities: a job's priority is saved and shown; a trigger or a
// job backfill may lower it for its runs (kept on the run), not raise it
// (400 naming priority); a workflow backfill has none.
func TestRunPriorities(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		high := spec("billing", "settle")
		high.Priority = "high"
		job, err := svc.CreateJob(ctx, billingOnly, high)
		require.NoError(t, err)
		require.Equal(t, "high", job.Priority)
		plain, err := svc.CreateJob(ctx, billingOnly, spec("billing", "plain"))
		require.NoError(t, err)
		require.Equal(t, "normal", plain.Priority, "normal by default")
		bad := spec("billing", "bad")
		bad.Priority = "urgent"
		_, err = svc.CreateJob(ctx, billingOnly, bad)
		refused(t, err, ops.ErrInvalid, "priority", msg.JobPriorityUnknown)

		_, _, err = svc.TriggerJob(ctx, billingOnly, job.ID, apitypes.TriggerRequest{Priority: "critical"})
		refused(t, err, ops.ErrInvalid, "priority", msg.RunPriorityAboveJob)
		_, _, err = svc.TriggerJob(ctx, billingOnly, job.ID, apitypes.TriggerRequest{Priority: "soon"})
		refused(t, err, ops.ErrInvalid, "priority", msg.JobPriorityUnknown)
		lowered, _, err := svc.TriggerJob(ctx, billingOnly, job.ID, apitypes.TriggerRequest{Priority: "low"})
		require.NoError(t, err)
		same, _, err := svc.TriggerJob(ctx, billingOnly, job.ID, apitypes.TriggerRequest{Priority: "high", ScheduledAt: ptrTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))})
		require.NoError(t, err)
		prio := func(runID int64) sql.NullInt64 {
			var p sql.NullInt64
			require.NoError(t, st.DB().Get(&p, `SELECT priority FROM job_run WHERE id = ?`, runID))
			return p
		}
		require.Equal(t, sql.NullInt64{Int64: 0, Valid: true}, prio(lowered.ID), "lowered to low")
		require.False(t, prio(same.ID).Valid, "the job's own priority is not copied")

		_, err = svc.BackfillJob(ctx, billingOnly, job.ID, apitypes.JobBackfill{From: "2026-11-01", To: "2026-11-02", Priority: "critical", DryRun: true})
		refused(t, err, ops.ErrInvalid, "priority", msg.RunPriorityAboveJob)
		bf, err := svc.BackfillJob(ctx, billingOnly, job.ID, apitypes.JobBackfill{From: "2026-11-03", To: "2026-11-04", Priority: "normal"})
		require.NoError(t, err)
		for _, d := range bf.Dates {
			require.Equal(t, sql.NullInt64{Int64: 1, Valid: true}, prio(d.RunID), "backfill runs lowered to normal")
		}
		wf, err := svc.CreateWorkflow(ctx, billingOnly, workflowSpec("billing", "close"))
		require.NoError(t, err)
		_, err = svc.BackfillWorkflow(ctx, billingOnly, wf.ID, apitypes.WorkflowBackfill{From: "2026-11-01", To: "2026-11-02", Priority: "low", DryRun: true})
		refused(t, err, ops.ErrInvalid, "priority", msg.BackfillNoPriority)
	})
}

func ptrTime(t time.Time) *time.Time { return &t }
