package ops_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// TestActionsReachOnlyAppsTheActorMayActOn is the boundary between apps at
// run time (docs/security.md, "Apps"). An admin saves, in app billing, a
// workflow whose node runs a job of app market-data, a job with a child
// job in market-data and a job that waits for a market-data job. An
// operator of billing alone may then neither trigger nor backfill them,
// nor rerun, cancel or retry their runs: each refusal names the app and
// the reference. They still read the workflow run, without the other
// app's result. An operator of both apps may do it all, and each action is
// in market-data's audit log too.
func TestActionsReachOnlyAppsTheActorMayActOn(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, ctx context.Context, st *store.Store, svc *ops.Service) {
		admin := ops.Actor{User: store.User{Username: "ada", Role: store.RoleAdmin}}
		both := ops.Actor{User: store.User{Username: "bo", Role: store.RoleOperator, Apps: "billing,market-data"}}

		_, err := svc.CreateJob(ctx, admin, spec("market-data", "load-fx"))
		require.NoError(t, err)
		publish, err := svc.CreateJob(ctx, admin, spec("market-data", "publish"))
		require.NoError(t, err)
		settleSpec := spec("billing", "settle")
		settleSpec.ChildJobIDs = []int64{publish.ID}
		settle, err := svc.CreateJob(ctx, admin, settleSpec)
		require.NoError(t, err)
		reportSpec := spec("billing", "report")
		reportSpec.WaitFor = []apitypes.WorkflowWait{{Job: &apitypes.WorkflowNameRef{App: "market-data", Name: "load-fx"}}}
		report, err := svc.CreateJob(ctx, admin, reportSpec)
		require.NoError(t, err)
		own, err := svc.CreateJob(ctx, admin, spec("billing", "own"))
		require.NoError(t, err)
		eodSpec := workflowSpec("billing", "eod")
		eodSpec.Nodes = []apitypes.WorkflowNode{
			{Key: "load_fx", Job: &apitypes.WorkflowJobRef{App: "market-data", Name: "load-fx"}},
			{Key: "settle", Handler: "settle.eod"},
		}
		eodSpec.Edges = []apitypes.WorkflowEdge{{From: "load_fx", To: "settle"}}
		eod, err := svc.CreateWorkflow(ctx, admin, eodSpec)
		require.NoError(t, err)
		_, err = st.ClaimEpoch(ctx, 7, "test")
		require.NoError(t, err)

		reaches := func(err error, via string) {
			t.Helper()
			e := refusal(t, err, ops.ErrForbidden, "app", msg.ReachesApp)
			require.Equal(t, "market-data", e.Fields["app"].Args["app"])
			require.Equal(t, via, e.Fields["app"].Args["via"])
			require.Contains(t, e.Error(), "you may not act on app market-data")
		}
		const viaNode = "node load_fx runs job market-data/load-fx"
		_, _, err = svc.TriggerWorkflow(ctx, billingOnly, eod.ID, apitypes.WorkflowTrigger{})
		reaches(err, viaNode)
		_, err = svc.BackfillWorkflow(ctx, billingOnly, eod.ID, apitypes.WorkflowBackfill{From: "2026-11-02", To: "2026-11-03", DryRun: true})
		reaches(err, viaNode)
		viaChild := "child job market-data/publish (id " + itoa(publish.ID) + ") runs after it"
		_, _, err = svc.TriggerJob(ctx, billingOnly, settle.ID, apitypes.TriggerRequest{})
		reaches(err, viaChild)
		_, err = svc.BackfillJob(ctx, billingOnly, settle.ID, apitypes.JobBackfill{From: "2026-11-02", To: "2026-11-03", DryRun: true})
		reaches(err, viaChild)
		_, _, err = svc.TriggerJob(ctx, billingOnly, report.ID, apitypes.TriggerRequest{})
		reaches(err, "the job waits for market-data/load-fx")
		_, _, err = svc.TriggerJob(ctx, billingOnly, own.ID, apitypes.TriggerRequest{})
		require.NoError(t, err, "a job that reaches no other app is the billing operator's to run")

		// A run started by someone allowed on both apps is still not the
		// billing operator's to retry, rerun or cancel.
		settleRun, _, err := svc.TriggerJob(ctx, both, settle.ID, apitypes.TriggerRequest{})
		require.NoError(t, err)
		_, _, err = svc.RetryRun(ctx, billingOnly, settleRun.ID)
		reaches(err, viaChild)
		wr, _, err := svc.TriggerWorkflow(ctx, both, eod.ID, apitypes.WorkflowTrigger{BusinessDate: "2026-11-02"})
		require.NoError(t, err)
		_, err = svc.CancelWorkflowRun(ctx, billingOnly, wr.ID, "")
		reaches(err, viaNode)
		_, err = svc.RerunWorkflowRun(ctx, billingOnly, wr.ID, apitypes.WorkflowRerun{From: []string{"settle"}})
		reaches(err, viaNode)
		reaches(svc.ManagedWorkflowRun(ctx, billingOnly, wr.ID), viaNode)

		// The billing operator reads the workflow run, but not what the
		// market-data job returned; the operator of both apps reads it.
		eng, err := workflowrun.New(workflowrun.Config{}, st)
		require.NoError(t, err)
		_, err = eng.Drive(ctx, 7, wr.ID)
		require.NoError(t, err)
		detail, err := svc.WorkflowRun(ctx, both, wr.ID)
		require.NoError(t, err)
		require.Len(t, detail.Nodes, 1)
		fxRun := detail.Nodes[0].JobRunID
		_, err = st.DB().Exec(`INSERT INTO slot_attempt (run_id, slot, attempt, status, current, result) VALUES (?, 0, 1, 'succeeded', 1, '{"eurusd":1.08}')`, fxRun)
		require.NoError(t, err)
		detail, err = svc.WorkflowRun(ctx, both, wr.ID)
		require.NoError(t, err)
		require.JSONEq(t, `{"eurusd":1.08}`, string(detail.Nodes[0].Result))
		require.Empty(t, detail.Nodes[0].ResultHidden)
		detail, err = svc.WorkflowRun(ctx, billingOnly, wr.ID)
		require.NoError(t, err)
		require.Nil(t, detail.Nodes[0].Result)
		require.Equal(t, "the result of a run of app market-data, which you may not see", detail.Nodes[0].ResultHidden)
		require.Equal(t, fxRun, detail.Nodes[0].JobRunID, "the node's progress is the workflow's, and shown")

		// The operator of both apps acts, and market-data's audit log
		// says what billing's workflow and job did in it.
		_, err = svc.CancelWorkflowRun(ctx, both, wr.ID, "")
		require.NoError(t, err)
		_, err = svc.BackfillJob(ctx, both, settle.ID, apitypes.JobBackfill{From: "2026-11-02", To: "2026-11-03", DryRun: true})
		require.NoError(t, err)
		var inMarketData []struct {
			Action string `db:"action"`
			Object string `db:"object"`
			Detail string `db:"detail"`
		}
		require.NoError(t, st.DB().Select(&inMarketData, st.DB().Rebind(`SELECT action, object, detail FROM audit_log WHERE app = ? AND action <> ? ORDER BY id`),
			"market-data", "job.create"))
		var actions []string
		for _, a := range inMarketData {
			actions = append(actions, a.Action+" "+a.Object)
			require.Contains(t, a.Detail, `"reached_by"`)
		}
		require.Equal(t, []string{"job.trigger job/" + itoa(settle.ID), "workflow.trigger workflow/" + itoa(eod.ID),
			"workflow.cancel workflow/" + itoa(eod.ID), "job.backfill job/" + itoa(settle.ID)}, actions)
		require.Contains(t, inMarketData[1].Detail, viaNode)
	})
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
