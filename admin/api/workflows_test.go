package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflow"
)

// createJobRow stores a job directly (the workflow tests need jobs, not
// their API) and returns its id.
func (e *env) createJobRow(app, name string) int64 {
	e.t.Helper()
	id, err := e.st.CreateJob(context.Background(), store.Job{App: app, Name: name, Handler: "noop", CronExpr: "0 3 * * *", TimeZone: "UTC",
		MisfirePolicy: "run_once", OverlapPolicy: "allow", SlotCount: 1, Params: "{}", Enabled: true})
	require.NoError(e.t, err)
	return id
}

// settlementSpec is the end-of-day settlement of docs/workflows.md: two
// loads (one in another app), a settlement waiting for both, a report (a
// job by id) and a clean-up that runs however the settlement ended.
func settlementSpec(reportID int64) apitypes.WorkflowSpec {
	return apitypes.WorkflowSpec{WorkflowDef: apitypes.WorkflowDef{
		App: "billing", Name: "eod-settlement", Description: "end-of-day settlement on business days",
		Cron: "0 18 * * MON-FRI", TimeZone: "Europe/London", FailurePolicy: "continue",
		Nodes: []apitypes.WorkflowNode{
			{Key: "load_trades", Job: &apitypes.WorkflowJobRef{Name: "load-trades"}},
			{Key: "load_fx_rates", Job: &apitypes.WorkflowJobRef{App: "market-data", Name: "load-fx"}},
			{Key: "settle", Handler: "settle.eod", Params: `{"ledger":"main"}`, SlotCount: 8},
			{Key: "report", Job: &apitypes.WorkflowJobRef{ID: reportID}},
			{Key: "cleanup", Handler: "tmp.cleanup", Start: "all_done"},
		},
		Edges: []apitypes.WorkflowEdge{
			{From: "load_trades", To: "settle"}, {From: "load_fx_rates", To: "settle"},
			{From: "settle", To: "report"}, {From: "settle", To: "cleanup"},
		},
	}}
}

// TestWorkflowsAPI: an operator saves the settlement workflow; viewers of
// the app read it, users of other apps do not see it; an update needs the
// version read and bumps it; the runs are listed; a delete waits for the
// active run; every change is audited.
func TestWorkflowsAPI(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		report := e.settlementUsers()
		ops, eve, other := e.token("ops"), e.token("eve"), e.token("other")

		spec := settlementSpec(report)
		var wf apitypes.Workflow
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows", ops, spec, &wf))
		require.Positive(t, wf.ID)
		require.Equal(t, int64(1), wf.Version)
		require.Equal(t, 5, wf.NodeCount)
		require.Equal(t, "ops", wf.CreatedBy)
		require.Equal(t, "ops", wf.UpdatedBy)
		require.True(t, *wf.Enabled)
		require.Equal(t, "continue", wf.FailurePolicy)
		require.NotNil(t, wf.NextFireAt, "a cron workflow has its next firing")
		require.Equal(t, 18, wf.NextFireAt.In(mustZone(t, "Europe/London")).Hour())
		require.Len(t, wf.Nodes, 5)
		require.Equal(t, "all_success", wf.Nodes[0].Start, "defaults filled in")
		require.Equal(t, 8, wf.Nodes[2].SlotCount)
		require.Equal(t, 1, wf.Nodes[4].SlotCount)
		require.Equal(t, spec.Edges, wf.Edges)
		id := itoa(wf.ID)
		require.Equal(t, http.StatusConflict, e.call("POST", "/api/v1/workflows", ops, spec, nil), "the name is taken in the app")

		// Read: the list without nodes, one workflow with them; users of
		// another app do not see it, not even by id.
		var list struct{ Workflows []apitypes.Workflow }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/workflows", eve, nil, &list))
		require.Len(t, list.Workflows, 1)
		require.Empty(t, list.Workflows[0].Nodes)
		require.Equal(t, 5, list.Workflows[0].NodeCount)
		var got apitypes.Workflow
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/workflows/"+id, eve, nil, &got))
		require.Equal(t, wf, got)
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/workflows", other, nil, &list))
		require.Empty(t, list.Workflows)
		for _, m := range []string{"GET", "DELETE"} {
			require.Equal(t, http.StatusNotFound, e.call(m, "/api/v1/workflows/"+id, other, nil, nil), m)
		}
		require.Equal(t, http.StatusNotFound, e.call("PUT", "/api/v1/workflows/"+id, other, spec, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/workflows/"+id+"/runs", other, nil, nil))

		// Viewers read only.
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/workflows", eve, spec, nil))
		require.Equal(t, http.StatusForbidden, e.call("PUT", "/api/v1/workflows/"+id, eve, spec, nil))
		require.Equal(t, http.StatusForbidden, e.call("DELETE", "/api/v1/workflows/"+id, eve, nil, nil))

		// Update: the version read is required and bumped; a stale one is
		// refused; app and name stay.
		upd := settlementSpec(report)
		upd.Cron, upd.Enabled = "", ptr(false)
		var out errorAnswer
		require.Equal(t, http.StatusBadRequest, e.call("PUT", "/api/v1/workflows/"+id, ops, upd, &out))
		require.Contains(t, out.Fields["version"], "currently 1")
		upd.Version = 1
		upd.Nodes = append(upd.Nodes, apitypes.WorkflowNode{Key: "notify", Handler: "notify.mail", Start: "all_done"})
		upd.Edges = append(upd.Edges, apitypes.WorkflowEdge{From: "report", To: "notify"})
		var updated apitypes.Workflow
		require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/workflows/"+id, ops, upd, &updated))
		require.Equal(t, int64(2), updated.Version)
		require.Equal(t, 6, updated.NodeCount)
		require.False(t, *updated.Enabled)
		require.Nil(t, updated.NextFireAt, "no cron: no firing")
		require.Equal(t, wf.CreatedAt, updated.CreatedAt)
		require.Equal(t, http.StatusConflict, e.call("PUT", "/api/v1/workflows/"+id, ops, upd, nil), "version 1 is stale")
		rename := upd
		rename.Version, rename.Name = 2, "renamed"
		require.Equal(t, http.StatusBadRequest, e.call("PUT", "/api/v1/workflows/"+id, ops, rename, &out))
		require.Contains(t, out.Fields["name"], "must stay eod-settlement")
		def, err := e.st.WorkflowDefinition(context.Background(), wf.ID, 1)
		require.NoError(t, err)
		require.NotContains(t, def, "notify", "version 1 keeps its graph")

		// Runs: newest first; a delete waits for the active one.
		ctx := context.Background()
		run, _, err := e.st.CreateWorkflowRun(ctx, 1, store.NewWorkflowRun{WorkflowID: wf.ID, App: "billing", RunKey: store.WorkflowRunKeyDate("2026-03-02"),
			WorkflowVersion: 2, ScheduledAt: 1772474400000, BusinessDate: "2026-03-02", TriggerKind: store.TriggerBackfill, Status: store.RunPending, Params: "{}"})
		require.NoError(t, err)
		var runs struct{ Runs []apitypes.WorkflowRun }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/workflows/"+id+"/runs", eve, nil, &runs))
		require.Len(t, runs.Runs, 1)
		require.Equal(t, "2026-03-02", runs.Runs[0].BusinessDate)
		require.Equal(t, "date:2026-03-02", runs.Runs[0].RunKey)
		require.Equal(t, "backfill", runs.Runs[0].Trigger)
		require.Equal(t, int64(2), runs.Runs[0].WorkflowVersion)
		require.Equal(t, http.StatusConflict, e.call("DELETE", "/api/v1/workflows/"+id, ops, nil, &out))
		require.Contains(t, out.Error, "pending or running")
		_, err = e.st.TransitionWorkflowRun(ctx, store.StatusTransition{ID: run.ID, From: store.RunPending, To: store.RunCancelled})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, e.call("DELETE", "/api/v1/workflows/"+id, ops, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/workflows/"+id, ops, nil, nil))
		require.Equal(t, []string{"workflow.create", "workflow.update", "workflow.delete"}, e.auditActions("workflow/"+id))
	})
}

func ptr[T any](v T) *T { return &v }

// settlementUsers makes the users of the settlement tests — ops (operator
// of billing and market-data), eve (viewer of billing), other (operator of
// search) — and the jobs of the settlement workflow, and returns the
// report job's id.
func (e *env) settlementUsers() int64 {
	e.t.Helper()
	e.user("ops", auth.RoleOperator)
	e.user("eve", auth.RoleViewer)
	e.user("other", auth.RoleOperator)
	e.limitTo("ops", "billing", "market-data")
	e.limitTo("eve", "billing")
	e.limitTo("other", "search")
	e.createJobRow("billing", "load-trades")
	e.createJobRow("market-data", "load-fx")
	return e.createJobRow("billing", "eod-report")
}

// billingOperator makes ops, operator of billing only, and the jobs of
// the settlement workflow (market-data/load-fx, which ops may not manage,
// too), and returns ops's token and the report job's id.
func (e *env) billingOperator() (ops string, report int64) {
	e.t.Helper()
	e.user("ops", auth.RoleOperator)
	e.limitTo("ops", "billing")
	e.createJobRow("billing", "load-trades")
	e.createJobRow("market-data", "load-fx")
	return e.token("ops"), e.createJobRow("billing", "eod-report")
}

// settlementWorkflow is settlementUsers and the settlement workflow saved
// by ops.
func (e *env) settlementWorkflow() apitypes.Workflow {
	e.t.Helper()
	report := e.settlementUsers()
	var wf apitypes.Workflow
	require.Equal(e.t, http.StatusCreated, e.call("POST", "/api/v1/workflows", e.token("ops"), settlementSpec(report), &wf))
	return wf
}

// TestWorkflowsRefuseBadInput: every mistake is a 400 naming the field —
// the cycle named in order, unknown jobs, jobs of apps the user may not
// manage, the node limit — or a 403 for an app not the user's; nothing is
// stored.
func TestWorkflowsRefuseBadInput(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		ops, report := e.billingOperator()
		search := e.createJobRow("search", "reindex")

		edit := func(f func(s *apitypes.WorkflowSpec)) apitypes.WorkflowSpec {
			s := settlementSpec(report)
			s.Nodes[1].Job = &apitypes.WorkflowJobRef{Name: "load-trades"} // ops may not manage market-data
			f(&s)
			return s
		}
		var huge apitypes.WorkflowSpec
		huge.App, huge.Name = "billing", "huge"
		for i := range workflow.MaxNodes + 1 {
			huge.Nodes = append(huge.Nodes, apitypes.WorkflowNode{Key: fmt.Sprint(i), Handler: "h"})
		}
		cases := []struct {
			name  string
			spec  apitypes.WorkflowSpec
			field string
			says  string
		}{
			{"a cycle", edit(func(s *apitypes.WorkflowSpec) {
				s.Nodes = append(s.Nodes, apitypes.WorkflowNode{Key: "reconcile", Handler: "recon"})
				s.Edges = append(s.Edges, apitypes.WorkflowEdge{From: "report", To: "reconcile"}, apitypes.WorkflowEdge{From: "reconcile", To: "settle"})
			}), "edges", "a cycle: settle → report → reconcile → settle"},
			{"an unknown job by name", edit(func(s *apitypes.WorkflowSpec) { s.Nodes[0].Job.Name = "nope" }), "nodes[0].job", "no job billing/nope"},
			{"an unknown job by id", edit(func(s *apitypes.WorkflowSpec) { s.Nodes[3].Job.ID = 987654 }), "nodes[3].job", "no job id 987654"},
			{"another app's job by name", edit(func(s *apitypes.WorkflowSpec) {
				s.Nodes[1].Job = &apitypes.WorkflowJobRef{App: "market-data", Name: "load-fx"}
			}), "nodes[1].job", "no job market-data/load-fx in the apps you may manage"},
			{"another app's job by id", edit(func(s *apitypes.WorkflowSpec) { s.Nodes[1].Job = &apitypes.WorkflowJobRef{ID: search} }), "nodes[1].job", "no job id"},
			{"more nodes than the limit", huge, "nodes", "2001 nodes: at most 2000"},
			{"an unknown edge end", edit(func(s *apitypes.WorkflowSpec) { s.Edges[0].To = "nowhere" }), "edges[0].to", `"nowhere" is not the key of a node`},
			{"a node with a job and a handler", edit(func(s *apitypes.WorkflowSpec) { s.Nodes[0].Handler = "h" }), "nodes[0].handler", "not both"},
			{"a bad start rule", edit(func(s *apitypes.WorkflowSpec) { s.Nodes[4].Start = "whenever" }), "nodes[4].start", "not a start rule"},
			{"a bad failure policy", edit(func(s *apitypes.WorkflowSpec) { s.FailurePolicy = "retry" }), "failure_policy", "stop (default) or continue"},
			{"no nodes", edit(func(s *apitypes.WorkflowSpec) { s.Nodes, s.Edges = nil, nil }), "nodes", "at least one node"},
			{"a bad name", edit(func(s *apitypes.WorkflowSpec) { s.Name = "a b" }), "name", "letters"},
			{"a bad cron", edit(func(s *apitypes.WorkflowSpec) { s.Cron = "0 25 * * *" }), "cron", ""},
			{"a bad zone", edit(func(s *apitypes.WorkflowSpec) { s.TimeZone = "Mars/Olympus" }), "time_zone", "Mars/Olympus"},
			{"an unknown calendar", edit(func(s *apitypes.WorkflowSpec) { s.Calendar = "cn-2026" }), "calendar", `no business calendar "cn-2026"`},
		}
		for _, c := range cases {
			var out errorAnswer
			require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/workflows", ops, c.spec, &out), c.name)
			require.Contains(t, out.Fields, c.field, "%s: %+v", c.name, out)
			require.Contains(t, out.Fields[c.field], c.says, c.name)
			require.Contains(t, out.Error, "invalid workflow: ", c.name)
			require.Contains(t, out.Error, c.says, "%s: the message says it too", c.name)
		}

		// Issue 30: a bad zone does not hide a bad cron, and says the zone
		// once.
		var both errorAnswer
		require.Equal(t, http.StatusBadRequest, e.call("POST", "/api/v1/workflows", ops,
			edit(func(s *apitypes.WorkflowSpec) { s.TimeZone, s.Cron = "Mars/Olympus", "0 25 * * *" }), &both))
		require.Contains(t, both.Fields["cron"], "hour", "%+v", both)
		require.True(t, strings.HasPrefix(both.Fields["time_zone"], `"Mars/Olympus": `), both.Fields["time_zone"])

		// An app that is not the user's: 403, before the references.
		var out errorAnswer
		s := edit(func(s *apitypes.WorkflowSpec) { s.App = "market-data" })
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/workflows", ops, s, &out))
		require.Contains(t, out.Fields["app"], "not one of your apps")

		var list struct{ Workflows []apitypes.Workflow }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/workflows", ops, nil, &list))
		require.Empty(t, list.Workflows, "nothing stored")

		// The same definition, valid: stored. A calendar of the app counts.
		_, err := e.st.CreateCalendar(context.Background(), store.Calendar{App: "billing", Name: "uk-2026", Week: "MON,TUE,WED,THU,FRI", Version: "v"})
		require.NoError(t, err)
		ok := edit(func(s *apitypes.WorkflowSpec) { s.Calendar = "uk-2026" })
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/workflows", ops, ok, nil))
	})
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}
