package workflowrun_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// newInlineFixture stores def (every node inline) with the jobs of its
// inline nodes, as the API does.
func newInlineFixture(t *testing.T, st *store.Store, def workflow.Definition) *fixture {
	t.Helper()
	var inline []store.InlineJob
	nodes, _ := def.Wire()
	for _, n := range nodes {
		j, err := jobdef.InlineRow(n)
		require.NoError(t, err)
		inline = append(inline, store.InlineJob{Node: n.Key, Job: j})
	}
	return storeFixture(t, st, def, inline)
}

// succeedWithResults ends the job run of node key succeeded, each slot
// with a succeeded current attempt holding results[slot] (nil: none), as
// an executor's results would leave them.
func (f *fixture) succeedWithResults(runID int64, key string, results ...*string) {
	f.t.Helper()
	n := f.node(runID, key)
	for slot, r := range results {
		_, err := f.st.DB().Exec(`INSERT INTO slot_attempt (run_id, slot, attempt, status, current, result) VALUES (?, ?, 1, 'succeeded', 1, ?)`,
			n.JobRunID.Int64, slot, r)
		require.NoError(f.t, err)
	}
	f.settle(runID, key, store.RunSucceeded)
}

func ptr(s string) *string { return &s }

// A workflow of inline nodes runs to success through the jobs it owns, and
// each node's params carry its succeeded parents' results under upstream:
// the value of a one-slot parent, an object by slot of a parent of several
// slots; a parent without a result is absent.
func TestInlineNodesRunAndResultsFlowDownstream(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newInlineFixture(t, st, workflow.Definition{FailurePolicy: workflow.Stop,
			Nodes: []workflow.Node{
				{Key: "load_trades", Handler: "trades.load", Params: `{"source":"s3"}`},
				{Key: "load_fx", Handler: "fx.load", SlotCount: 2, RetryMax: 3, RetryBackoffMS: 250, TimeoutMS: 60000},
				{Key: "quiet", Handler: "noop"},
				{Key: "settle", Handler: "settle.eod", Params: `{"ledger":"main"}`, SlotCount: 3},
			},
			Edges: []workflow.Edge{{From: "load_trades", To: "settle"}, {From: "load_fx", To: "settle"}, {From: "quiet", To: "settle"}}})
		jobs, err := st.WorkflowJobs(ctx, f.wf.ID)
		require.NoError(t, err)
		require.Len(t, jobs, 4)
		listed, err := st.Jobs(ctx, 0, 100)
		require.NoError(t, err)
		require.Empty(t, listed, "the jobs of inline nodes are not listed with the ordinary ones")

		r := f.trigger("k1")
		f.pass()
		require.Equal(t, map[string]string{"load_trades": "running", "load_fx": "running", "quiet": "running"}, f.states(r.ID))
		lt, err := st.Run(ctx, f.node(r.ID, "load_trades").JobRunID.Int64)
		require.NoError(t, err)
		require.Equal(t, store.InlineJobName(f.wf.ID, "load_trades"), lt.JobName)
		require.Equal(t, "fin", lt.App)
		var handler string
		require.NoError(t, st.DB().QueryRow(`SELECT handler FROM job WHERE id = ?`, lt.JobID).Scan(&handler))
		require.Equal(t, "trades.load", handler)
		fx, err := st.Run(ctx, f.node(r.ID, "load_fx").JobRunID.Int64)
		require.NoError(t, err)
		require.Equal(t, 2, fx.SlotCount)
		fxJob, err := st.Job(ctx, fx.JobID)
		require.NoError(t, err)
		require.Equal(t, [3]int64{3, 250, 60000}, [3]int64{int64(fxJob.RetryMax), fxJob.RetryBackoffMS, fxJob.TimeoutMS},
			"the node's retries and timeout are its job's, which the scheduler applies to its slots")

		f.succeedWithResults(r.ID, "load_trades", ptr(`{"rows":42}`))
		f.succeedWithResults(r.ID, "load_fx", ptr(`"eur"`), ptr(`{"usd":1.08}`))
		f.succeedWithResults(r.ID, "quiet", nil)
		f.pass()
		require.Equal(t, "running", f.states(r.ID)["settle"])
		settle, err := st.Run(ctx, f.node(r.ID, "settle").JobRunID.Int64)
		require.NoError(t, err)
		require.Equal(t, 3, settle.SlotCount)
		var params, wf map[string]any
		require.NoError(t, json.Unmarshal([]byte(settle.Params), &params))
		require.Equal(t, map[string]any{"ledger": "main", "region": "eu"}, params, "the params are the user's only")
		require.NoError(t, json.Unmarshal([]byte(settle.Workflow.String), &wf))
		require.Equal(t, map[string]any{
			"business_date": "2026-03-02", "run_id": float64(r.ID), "node": "settle",
			"upstream": map[string]any{"load_trades": map[string]any{"rows": float64(42)}, "load_fx": map[string]any{"0": "eur", "1": map[string]any{"usd": 1.08}}},
		}, wf, "the workflow context holds the parents' results")

		results, err := st.RunResults(ctx, []int64{lt.ID, fx.ID, settle.ID})
		require.NoError(t, err)
		require.Len(t, results, 2, "settle has no result yet")
		require.JSONEq(t, `{"rows":42}`, string(results[lt.ID]))
		require.JSONEq(t, `{"0":"eur","1":{"usd":1.08}}`, string(results[fx.ID]))

		f.succeedWithResults(r.ID, "settle", nil, ptr(`1`), nil)
		f.pass()
		require.Equal(t, store.RunSucceeded, f.run(r.ID).Status)
		results, err = st.RunResults(ctx, []int64{settle.ID})
		require.NoError(t, err)
		require.JSONEq(t, `{"1":1}`, string(results[settle.ID]), "several slots: only those with a result")
	})
}

// A failed parent's result does not flow (the child is all_done), and an
// attempt that is no longer current does not count.
func TestOnlySucceededParentsPassResults(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newInlineFixture(t, st, workflow.Definition{FailurePolicy: workflow.Continue,
			Nodes: []workflow.Node{{Key: "a", Handler: "h"}, {Key: "b", Handler: "h"}, {Key: "c", Handler: "h", Start: workflow.AllDone}},
			Edges: []workflow.Edge{{From: "a", To: "c"}, {From: "b", To: "c"}}})
		r := f.trigger("k1")
		f.pass()
		a := f.node(r.ID, "a")
		_, err := st.DB().Exec(`INSERT INTO slot_attempt (run_id, slot, attempt, status, current, result) VALUES (?, 0, 1, 'failed', 0, NULL), (?, 0, 2, 'succeeded', 1, '"second"')`,
			a.JobRunID.Int64, a.JobRunID.Int64)
		require.NoError(t, err)
		f.settle(r.ID, "a", store.RunSucceeded)
		f.settle(r.ID, "b", store.RunFailed)
		f.pass()
		c, err := st.Run(ctx, f.node(r.ID, "c").JobRunID.Int64)
		require.NoError(t, err)
		var wf protocol.WorkflowContext
		require.NoError(t, json.Unmarshal([]byte(c.Workflow.String), &wf))
		require.Equal(t, map[string]json.RawMessage{"a": json.RawMessage(`"second"`)}, wf.Upstream)
	})
}
