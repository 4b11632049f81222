package ops_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
)

// workflowSpec is a valid workflow of app and name: one inline node, by
// hand only.
func workflowSpec(app, name string) apitypes.WorkflowSpec {
	return apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{App: app, Name: name,
		Nodes: []apitypes.WorkflowNode{{Key: "a", Handler: "demo"}}}}
}

func TestWorkflowRules(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		w, err := svc.CreateWorkflow(ctx, operator, workflowSpec("payroll", "close"))
		require.NoError(t, err)
		require.NotZero(t, w.ID)

		// A workflow of an app the actor may not see does not exist for
		// them, whatever they ask of it.
		_, err = svc.Workflow(ctx, billingOnly, w.ID)
		refused(t, err, ops.ErrNotFound, "", "")
		_, err = svc.WorkflowLayout(ctx, billingOnly, w.ID)
		refused(t, err, ops.ErrNotFound, "", "")
		_, err = svc.WorkflowRuns(ctx, billingOnly, w.ID, 0, 10)
		refused(t, err, ops.ErrNotFound, "", "")
		_, _, err = svc.TriggerWorkflow(ctx, billingOnly, w.ID, apitypes.WorkflowTrigger{})
		refused(t, err, ops.ErrNotFound, "", "")
		up := workflowSpec("payroll", "close")
		up.Version = w.Version
		_, err = svc.UpdateWorkflow(ctx, billingOnly, w.ID, up)
		refused(t, err, ops.ErrNotFound, "", "")
		refused(t, svc.DeleteWorkflow(ctx, billingOnly, w.ID), ops.ErrNotFound, "", "")
		list, err := svc.Workflows(ctx, billingOnly, 0, 0)
		require.NoError(t, err)
		require.Empty(t, list)

		// Nor may they create one in that app.
		_, err = svc.CreateWorkflow(ctx, billingOnly, workflowSpec("payroll", "other"))
		refused(t, err, ops.ErrForbidden, "app", msg.NotYourApp)
		_, err = svc.ValidateWorkflow(ctx, billingOnly, workflowSpec("payroll", "other"))
		refused(t, err, ops.ErrForbidden, "app", msg.NotYourApp)

		// A node's job of an app the actor may not manage is named as
		// missing.
		j, err := svc.CreateJob(ctx, operator, spec("payroll", "pay"))
		require.NoError(t, err)
		ref := workflowSpec("billing", "uses-pay")
		ref.Nodes = []apitypes.WorkflowNode{{Key: "a", Job: &apitypes.WorkflowJobRef{ID: j.ID}}}
		_, err = svc.CreateWorkflow(ctx, billingOnly, ref)
		e := refusal(t, err, ops.ErrInvalid, "", "")
		require.Contains(t, e.Fields, "nodes[0].job")

		// An update keeps app and name and says which version it read.
		up = workflowSpec("payroll", "renamed")
		up.Version = w.Version
		_, err = svc.UpdateWorkflow(ctx, operator, w.ID, up)
		refused(t, err, ops.ErrInvalid, "name", msg.MustStay)
		up.Name, up.Version = "close", 0
		_, err = svc.UpdateWorkflow(ctx, operator, w.ID, up)
		refused(t, err, ops.ErrInvalid, "version", msg.JobVersionRequired)

		// What is wrong with the input is named by field.
		bad := workflowSpec("payroll", "bad")
		bad.Cron = "61 * * * *"
		_, err = svc.CreateWorkflow(ctx, operator, bad)
		e = refusal(t, err, ops.ErrInvalid, "", "")
		require.Contains(t, e.Fields, "cron")

		// A trigger's business date and params are checked.
		_, _, err = svc.TriggerWorkflow(ctx, operator, w.ID, apitypes.WorkflowTrigger{BusinessDate: "2026-02-30", Params: "[1]"})
		e = refusal(t, err, ops.ErrInvalid, "business_date", msg.WorkflowBusinessDate)
		require.Equal(t, msg.WorkflowParamsObject, e.Fields["params"].Code)
	})
}

func TestBackfillRules(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		w, err := svc.CreateWorkflow(ctx, operator, workflowSpec("payroll", "close"))
		require.NoError(t, err)
		j, err := svc.CreateJob(ctx, operator, spec("payroll", "pay"))
		require.NoError(t, err)

		// A range that runs backwards names to; params must be an object.
		_, err = svc.BackfillWorkflow(ctx, operator, w.ID, apitypes.WorkflowBackfill{From: "2026-11-10", To: "2026-11-01", DryRun: true})
		refused(t, err, ops.ErrInvalid, "to", msg.BackfillBackwards)
		_, err = svc.BackfillJob(ctx, operator, j.ID, apitypes.JobBackfill{From: "2026-11-10", To: "2026-11-01", DryRun: true})
		refused(t, err, ops.ErrInvalid, "to", msg.BackfillBackwards)
		_, err = svc.BackfillJob(ctx, operator, j.ID, apitypes.JobBackfill{From: "2026-11-01", To: "2026-11-02", Params: "[]", DryRun: true})
		refused(t, err, ops.ErrInvalid, "params", msg.WorkflowParamsObject)
		_, err = svc.BackfillJob(ctx, operator, j.ID, apitypes.JobBackfill{From: "2026-11-31", To: "2026-12-01", DryRun: true})
		refused(t, err, ops.ErrInvalid, "from", msg.BackfillDate)

		// Another app's workflow or job does not exist for the actor.
		_, err = svc.BackfillWorkflow(ctx, billingOnly, w.ID, apitypes.WorkflowBackfill{From: "2026-11-01", To: "2026-11-02", DryRun: true})
		refused(t, err, ops.ErrNotFound, "", "")
		_, err = svc.BackfillJob(ctx, billingOnly, j.ID, apitypes.JobBackfill{From: "2026-11-01", To: "2026-11-02", DryRun: true})
		refused(t, err, ops.ErrNotFound, "", "")
		_, err = svc.JobBackfills(ctx, billingOnly, j.ID, 0, 10)
		refused(t, err, ops.ErrNotFound, "", "")

		// A dry run plans the dates and creates nothing.
		plan, err := svc.BackfillJob(ctx, operator, j.ID, apitypes.JobBackfill{From: "2026-11-01", To: "2026-11-03", DryRun: true})
		require.NoError(t, err)
		require.Len(t, plan.Dates, 3)
		require.Zero(t, plan.BackfillID)
		list, err := svc.JobBackfills(ctx, operator, j.ID, 0, 10)
		require.NoError(t, err)
		require.Empty(t, list)
	})
}

func TestCalendarRules(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		admin := ops.Actor{User: store.User{Username: "ada", Role: store.RoleAdmin}}
		// Global calendars are for admins.
		_, err := svc.CreateCalendar(ctx, operator, apitypes.CalendarSpec{Name: "cn"})
		refused(t, err, ops.ErrForbidden, "app", msg.CalGlobalAdminOnly)
		global, err := svc.CreateCalendar(ctx, admin, apitypes.CalendarSpec{Name: "cn"})
		require.NoError(t, err)
		// An app's calendars are its users'.
		_, err = svc.CreateCalendar(ctx, billingOnly, apitypes.CalendarSpec{App: "payroll", Name: "pay"})
		refused(t, err, ops.ErrForbidden, "app", msg.NotYourApp)
		pay, err := svc.CreateCalendar(ctx, operator, apitypes.CalendarSpec{App: "payroll", Name: "pay"})
		require.NoError(t, err)
		_, err = svc.Calendar(ctx, billingOnly, pay.ID)
		refused(t, err, ops.ErrNotFound, "", "")
		_, err = svc.Calendar(ctx, billingOnly, global.ID)
		require.NoError(t, err)
		// Bad input names its field.
		_, err = svc.CreateCalendar(ctx, operator, apitypes.CalendarSpec{App: "payroll", Name: "bad", Week: "Funday"})
		refused(t, err, ops.ErrInvalid, "week", msg.CalWeekExample)
		// An update says which revision it read.
		_, err = svc.UpdateCalendar(ctx, operator, pay.ID, apitypes.CalendarSpec{App: "payroll", Name: "pay"})
		refused(t, err, ops.ErrInvalid, "revision", msg.CalRevisionRequired)
		// A calendar that a job uses stays.
		js := spec("payroll", "on-pay")
		js.CalendarID, js.CalendarRule = pay.ID, "skip_holidays"
		_, err = svc.CreateJob(ctx, operator, js)
		require.NoError(t, err)
		refused(t, svc.DeleteCalendar(ctx, operator, pay.ID), ops.ErrConflict, "", "")
		require.NoError(t, svc.DeleteCalendar(ctx, admin, global.ID))
	})
}
