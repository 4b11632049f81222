package workflowrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflow"
)

// ErrRerunRaced is returned by Rerun when the run changed between the
// read and the write (another rerun, or its end moved): read it again.
var ErrRerunRaced = errors.New("the workflow run changed meanwhile")

// Rerun reopens finished workflow run id for a rerun from the nodes from
// (admin/workflow's Graph.Rerun): they and everything downstream of them,
// and the nodes the failure policy stop skipped, run again as node runs of
// the next rerun (the engine creates them, each once); the other nodes
// keep their state. It returns the run reopened and the nodes that run
// again. A run not finished, an unknown node or a node that would be
// skipped at once are errors wrapping admin/workflow's ErrNotFinished,
// ErrUnknownNode or ErrRerunBlocked, with what to do; a second request for
// the same rerun finds the run running (ErrNotFinished) and changes
// nothing.
func Rerun(ctx context.Context, st *store.Store, id int64, from []string) (store.WorkflowRun, []string, error) {
	run, err := st.WorkflowRun(ctx, id)
	if err != nil {
		return run, nil, err
	}
	def, err := st.WorkflowDefinition(ctx, run.WorkflowID, run.WorkflowVersion)
	if err != nil {
		return run, nil, err
	}
	g, err := parse(def)
	if err != nil {
		return run, nil, err
	}
	var again []string
	err = st.Tx(ctx, func(tx *store.Tx) error {
		again = nil
		locked, err := tx.LockWorkflowRun(ctx, id)
		if err != nil {
			return err
		}
		all, err := tx.NodeRuns(ctx, id)
		if err != nil {
			return err
		}
		states := map[string]workflow.State{}
		for k, n := range store.LatestNodeRuns(all) {
			states[k] = workflow.State(n.Status)
		}
		plan, err := g.Rerun(states, from...)
		if err != nil {
			return err
		}
		if locked.Status == store.RunPending || locked.Status == store.RunRunning {
			// Every node ended, the run not yet: the engine ends it next.
			return fmt.Errorf("rerun: %w: the run is %s; wait for it to end", workflow.ErrNotFinished, locked.Status)
		}
		for _, k := range g.Order() {
			if plan.States[k] == workflow.Pending {
				again = append(again, k)
			}
		}
		ok, err := tx.RerunWorkflowRun(ctx, id, locked.Status, locked.Reruns, again)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("rerun of workflow run %d: %w", id, ErrRerunRaced)
		}
		return nil
	})
	if err != nil {
		return run, nil, err
	}
	run, err = st.WorkflowRun(ctx, id)
	return run, again, err
}
