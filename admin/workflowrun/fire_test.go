package workflowrun_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// TestCronFiresOncePerInstant: a workflow at 07:00 Shanghai time (23:00
// UTC the day before) fires once per instant, keyed by it, with the
// Shanghai day as business date; a second firing of the same instant (a
// successor leader) creates nothing; a leader away for three days fires
// the latest missed firing once and records the two others as skipped.
func TestCronFiresOncePerInstant(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, diamond(workflow.Stop))
		due := time.Date(2026, 3, 2, 23, 0, 0, 0, time.UTC) // 2026-03-03 07:00 in Shanghai
		_, err := st.DB().Exec(`UPDATE workflow SET cron_expr = '0 7 * * *', time_zone = 'Asia/Shanghai', next_fire_at = ? WHERE id = ?`, due.UnixMilli(), f.wf.ID)
		require.NoError(t, err)
		clk := clock.NewManual(due.Add(-time.Second))
		e, err := workflowrun.New(workflowrun.Config{Clock: clk}, st)
		require.NoError(t, err)

		n, err := e.Fire(ctx, 1)
		require.NoError(t, err)
		require.Zero(t, n, "not due yet")

		clk.Set(due.Add(300 * time.Millisecond))
		n, err = e.Fire(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		runs, err := st.WorkflowRuns(ctx, f.wf.ID, 0, 10)
		require.NoError(t, err)
		require.Len(t, runs, 1)
		r := runs[0]
		require.Equal(t, "2026-03-02T23:00:00.000Z", r.RunKey)
		require.Equal(t, "2026-03-03", r.BusinessDate, "the scheduled day in the workflow's zone")
		require.Equal(t, store.TriggerCron, r.TriggerKind)
		require.Equal(t, due.UnixMilli(), r.ScheduledAt)
		wf, err := st.Workflow(ctx, f.wf.ID)
		require.NoError(t, err)
		require.Equal(t, due.Add(24*time.Hour).UnixMilli(), wf.NextFireAt.Int64)

		// The pass drives what it fired: the root starts.
		require.NoError(t, e.Pass(ctx, 1))
		require.Equal(t, map[string]string{"a": "running"}, f.states(r.ID))

		// A successor fires the same instant again (its predecessor's
		// next_fire_at was not committed, say): one run.
		ok, err := st.ClaimEpoch(ctx, 2, "successor")
		require.NoError(t, err)
		require.True(t, ok)
		_, err = st.DB().Exec(`UPDATE workflow SET next_fire_at = ? WHERE id = ?`, due.UnixMilli(), f.wf.ID)
		require.NoError(t, err)
		_, err = e.Fire(ctx, 1)
		require.ErrorIs(t, err, store.ErrStaleEpoch, "the deposed leader fires nothing")
		n, err = e.Fire(ctx, 2)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM workflow_run`))

		// Three days away: the latest missed firing runs once (catch-up
		// kind), the two before it are recorded as skipped.
		clk.Set(due.Add(3*24*time.Hour + time.Hour))
		n, err = e.Fire(ctx, 2)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, 1, count(t, st, `SELECT COUNT(*) FROM workflow_run WHERE status = 'pending' AND trigger_kind = 'catch_up'`))
		require.Equal(t, 2, count(t, st, `SELECT COUNT(*) FROM workflow_run WHERE status = 'skipped'`))
		skipped, err := st.WorkflowRuns(ctx, f.wf.ID, 0, 10)
		require.NoError(t, err)
		for _, s := range skipped {
			if s.Status == store.RunSkipped {
				require.Equal(t, msg.RunSkippedMisfire, s.ReasonMsg.Code)
				require.True(t, s.FinishedAt.Valid)
			}
		}
		wf, err = st.Workflow(ctx, f.wf.ID)
		require.NoError(t, err)
		require.Equal(t, due.Add(4*24*time.Hour).UnixMilli(), wf.NextFireAt.Int64)

		// Disabled: nothing fires.
		_, err = st.DB().Exec(`UPDATE workflow SET enabled = 0, next_fire_at = ? WHERE id = ?`, due.Add(4*24*time.Hour).UnixMilli(), f.wf.ID)
		require.NoError(t, err)
		clk.Set(due.Add(5 * 24 * time.Hour))
		n, err = e.Fire(ctx, 2)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}
