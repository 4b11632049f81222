package workflowrun_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// TestRerunFromAFailedNode: in a diamond under the failure policy stop, b
// fails, so d is skipped and the run fails. A rerun from b runs b and d
// again (new node runs of rerun 1, new job runs) and leaves a and c as they
// were; the run then succeeds. A second request for the same rerun finds
// the run running and changes nothing; a rerun of a running run, from an
// unknown node, or from d alone (its parent b stays failed) is refused.
func TestRerunFromAFailedNode(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, diamond(workflow.Stop))
		r := f.trigger("2026-03-02T18:00:00.000Z")
		f.pass()
		_, _, err := workflowrun.Rerun(ctx, st, r.ID, []string{"a"})
		require.ErrorIs(t, err, workflow.ErrNotFinished, "a running run is not re-run")
		f.settle(r.ID, "a", store.RunSucceeded)
		f.pass()
		f.settle(r.ID, "c", store.RunSucceeded)
		f.settle(r.ID, "b", store.RunFailed)
		f.pass()
		require.Equal(t, store.RunFailed, f.run(r.ID).Status)
		require.Equal(t, map[string]string{"a": "succeeded", "b": "failed", "c": "succeeded", "d": "skipped"}, f.states(r.ID))

		_, _, err = workflowrun.Rerun(ctx, st, r.ID, []string{"nope"})
		require.ErrorIs(t, err, workflow.ErrUnknownNode)
		_, _, err = workflowrun.Rerun(ctx, st, r.ID, []string{"d"})
		require.ErrorIs(t, err, workflow.ErrRerunBlocked, "d alone: b stays failed")

		run, again, err := workflowrun.Rerun(ctx, st, r.ID, []string{"b"})
		require.NoError(t, err)
		require.Equal(t, []string{"b", "d"}, again)
		require.Equal(t, store.RunRunning, run.Status)
		require.Equal(t, 1, run.Reruns)
		_, _, err = workflowrun.Rerun(ctx, st, r.ID, []string{"b"})
		require.ErrorIs(t, err, workflow.ErrNotFinished, "the second click")

		f.pass()
		require.Equal(t, map[string]string{"a": "succeeded", "b": "running", "c": "succeeded", "d": "skipped"}, f.states(r.ID))
		require.Equal(t, 1, f.node(r.ID, "b").Rerun)
		f.pass() // nothing twice
		f.settle(r.ID, "b", store.RunSucceeded)
		f.pass()
		require.Equal(t, "running", f.states(r.ID)["d"])
		require.Equal(t, 1, f.node(r.ID, "d").Rerun)
		f.settle(r.ID, "d", store.RunSucceeded)
		f.pass()
		require.Equal(t, store.RunSucceeded, f.run(r.ID).Status)
		require.Equal(t, map[string]int{"a": 1, "b": 2, "c": 1, "d": 2}, nodeRunCounts(t, st, r.ID), "a and c ran once; d's first node run is its skip")
		require.Equal(t, 5, count(t, st, `SELECT COUNT(*) FROM job_run WHERE trigger_kind = 'workflow'`), "a, b, c, then b and d")
	})
}

func nodeRunCounts(t *testing.T, st *store.Store, runID int64) map[string]int {
	t.Helper()
	all, err := st.NodeRuns(ctx, runID)
	require.NoError(t, err)
	out := map[string]int{}
	for _, n := range all {
		out[n.NodeKey]++
	}
	return out
}
