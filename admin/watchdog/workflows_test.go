package watchdog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/watchdog"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// scheduledWorkflow creates an enabled workflow of app "fin" firing every
// 10 minutes in UTC, created (and last changed) at since, with its first
// firing 10 minutes later.
func scheduledWorkflow(t *testing.T, st *store.Store, name string, since time.Time) store.Workflow {
	t.Helper()
	ctx := context.Background()
	id, err := st.CreateWorkflow(ctx, store.Workflow{App: "fin", Name: name, CronExpr: "*/10 * * * *", TimeZone: "UTC", Enabled: true,
		FailurePolicy: "stop", Definition: `{"app":"fin","name":"` + name + `","nodes":[{"key":"a","handler":"h"}]}`, NodeCount: 1, CreatedBy: "ops"})
	require.NoError(t, err)
	_, err = st.DB().Exec(`UPDATE workflow SET created_at = ?, updated_at = ?, next_fire_at = ? WHERE id = ?`,
		since.UnixMilli(), since.UnixMilli(), since.Add(10*time.Minute).UnixMilli(), id)
	require.NoError(t, err)
	wf, err := st.Workflow(ctx, id)
	require.NoError(t, err)
	return wf
}

// TestWorkflowGapAudit: the gap audit expects the firings the workflow
// engine makes. Fired by the real engine for 30 minutes, the window has no
// gap; a leader away for 20 minutes (nobody fires) leaves two firings
// without a run, one alarm for the window, raised once whichever replica
// audits; when a leader comes back, the catch-up firing and the skipped
// one it records close the gap of a later audit of the same window. A
// disabled workflow is not audited, and a change starts the window anew.
func TestWorkflowGapAudit(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ok, err := st.ClaimEpoch(ctx, 1, "leader")
		require.NoError(t, err)
		require.True(t, ok)
		t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // a firing of */10, before the workflow's first
		wf := scheduledWorkflow(t, st, "eod", t0)
		off := scheduledWorkflow(t, st, "off", t0)
		_, err = st.DB().Exec(`UPDATE workflow SET enabled = 0 WHERE id = ?`, off.ID)
		require.NoError(t, err)

		clk := clock.NewManual(t0)
		e, err := workflowrun.New(workflowrun.Config{Clock: clk}, st)
		require.NoError(t, err)
		for _, m := range []int{10, 20, 30} {
			clk.Set(t0.Add(time.Duration(m)*time.Minute + 200*time.Millisecond))
			n, err := e.Fire(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, 1, n, "the firing at +%dm", m)
		}
		w, err := watchdog.New(watchdog.Config{ID: "replica-1", Clock: clk}, st)
		require.NoError(t, err)
		gaps, err := w.AuditWorkflowGaps(ctx, t0, t0.Add(40*time.Minute))
		require.NoError(t, err)
		require.Zero(t, gaps, "the engine fired +10, +20 and +30m; t0 itself is the creation, not a firing")

		// Nobody fires +40m and +50m.
		gaps, err = w.AuditWorkflowGaps(ctx, t0.Add(40*time.Minute), t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, gaps)
		w2, err := watchdog.New(watchdog.Config{ID: "replica-2", Clock: clk}, st)
		require.NoError(t, err)
		gaps, err = w2.AuditWorkflowGaps(ctx, t0.Add(40*time.Minute), t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, gaps, "the other replica finds the gap too")
		alarms, err := st.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1, "one alarm per workflow and window")
		require.Equal(t, store.AlarmWorkflowMissed, alarms[0].Kind)
		require.Equal(t, "fin", alarms[0].App)
		require.Equal(t, "workflow fin/eod: 2 of 2 firings between 2026-03-02T00:40:00Z and 2026-03-02T01:00:00Z have neither a run nor a recorded skip", alarms[0].Message)
		require.Equal(t, "replica-1", alarms[0].RaisedBy)

		// A leader comes back at +55m: the latest missed firing runs as a
		// catch-up, the one before it is recorded as skipped: no gap.
		clk.Set(t0.Add(55 * time.Minute))
		n, err := e.Fire(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		gaps, err = w.AuditWorkflowGaps(ctx, t0.Add(40*time.Minute), t0.Add(time.Hour))
		require.NoError(t, err)
		require.Zero(t, gaps)

		// A change at +65m: the firing at +60m was before it and is not
		// expected in a window that starts after the change.
		_, err = st.DB().Exec(`UPDATE workflow SET updated_at = ? WHERE id = ?`, t0.Add(65*time.Minute).UnixMilli(), wf.ID)
		require.NoError(t, err)
		gaps, err = w.AuditWorkflowGaps(ctx, t0.Add(time.Hour), t0.Add(70*time.Minute))
		require.NoError(t, err)
		require.Zero(t, gaps)
		gaps, err = w.AuditWorkflowGaps(ctx, t0.Add(time.Hour), t0.Add(80*time.Minute))
		require.NoError(t, err)
		require.Equal(t, 1, gaps, "+70m is after the change and has no run")
	})
}

// TestOverdueWorkflowRaisesOneAlarm: an enabled workflow whose next firing
// is more than the grace late by the database clock raises one
// workflow_missed_fire alarm, whichever replica checks; a disabled one,
// or one due in the future, none.
func TestOverdueWorkflowRaisesOneAlarm(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		now, err := st.Now(ctx)
		require.NoError(t, err)
		wf := scheduledWorkflow(t, st, "eod", now.Add(-time.Minute)) // next firing in 9 minutes
		off := scheduledWorkflow(t, st, "off", now.Add(-time.Hour))
		_, err = st.DB().Exec(`UPDATE workflow SET enabled = 0 WHERE id = ?`, off.ID)
		require.NoError(t, err)
		w, err := watchdog.New(watchdog.Config{ID: "replica-1", Grace: 30 * time.Second}, st)
		require.NoError(t, err)
		n, err := w.CheckWorkflowsOverdue(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "due in the future; the late one is disabled")

		late := now.Add(-5 * time.Minute).Truncate(time.Second)
		_, err = st.DB().Exec(`UPDATE workflow SET next_fire_at = ? WHERE id = ?`, late.UnixMilli(), wf.ID)
		require.NoError(t, err)
		n, err = w.CheckWorkflowsOverdue(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		w2, err := watchdog.New(watchdog.Config{ID: "replica-2", Grace: 30 * time.Second}, st)
		require.NoError(t, err)
		n, err = w2.CheckWorkflowsOverdue(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "one alarm per workflow and firing")
		alarms, err := st.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1)
		require.Equal(t, store.AlarmWorkflowMissed, alarms[0].Kind)
		require.Equal(t, "workflow fin/eod should have fired at "+late.UTC().Format(time.RFC3339)+
			" and has not (grace 30s): is an admin leading? see /api/v1/cluster", alarms[0].Message)
	})
}
