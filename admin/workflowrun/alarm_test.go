package workflowrun_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/admin/workflow"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

type ended struct {
	mu  sync.Mutex
	got []string
}

func (o *ended) WorkflowRunEnded(status string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d < 0 {
		status += " (negative duration)"
	}
	o.got = append(o.got, status)
}

// TestEndedRunsAreObservedAndFailuresAlarmed: a run whose node fails ends
// failed, tells the observer (metrics) once and raises one
// workflow_run_failed alarm naming the workflow, the run, the business date
// and the failed node; a succeeded run is observed and raises nothing.
func TestEndedRunsAreObservedAndFailuresAlarmed(t *testing.T) {
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st, workflow.Definition{Nodes: []workflow.Node{{Key: "load"}}})
		obs := &ended{}
		var err error
		f.e, err = workflowrun.New(workflowrun.Config{Observer: obs}, st)
		require.NoError(t, err)

		bad := f.trigger("bad")
		f.pass()
		f.settle(bad.ID, "load", store.RunFailed)
		f.pass()
		f.pass() // ended: nothing more
		require.Equal(t, store.RunFailed, f.run(bad.ID).Status)
		good := f.trigger("good")
		f.pass()
		f.settle(good.ID, "load", store.RunSucceeded)
		f.pass()
		require.Equal(t, []string{store.RunFailed, store.RunSucceeded}, obs.got)

		alarms, err := st.Alarms(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, alarms, 1)
		a := alarms[0]
		require.Equal(t, store.AlarmWorkflowRunFailed, a.Kind)
		require.Equal(t, "fin", a.App)
		require.Equal(t, msg.AlarmWorkflowRunFailed, a.Msg.Code)
		require.Contains(t, a.Message, "workflow fin/eod run ")
		require.Contains(t, a.Message, "(business date 2026-03-02) ended failed")
		require.Contains(t, a.Message, "load")
	})
}
