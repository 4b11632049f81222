package workflowrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// ErrEnded is returned by Cancel for a workflow run that has ended
// already (a second cancel finds it cancelled).
var ErrEnded = errors.New("the workflow run has ended")

// Cancel ends pending or running workflow run id as cancelled with reason,
// in one transaction that holds the run's lock (the engine's passes take
// it first, so a pass either ran before, and its node runs are cancelled
// here, or runs after and finds the run ended): every node run not ended
// (running, or waiting for other runs) becomes cancelled with the same
// reason, and nodes not started yet never start. It returns the run and
// the job runs of the cancelled node runs, still to be cancelled by the
// caller (they are ordinary job runs: admin/runstate cancels them and
// tells their executors). A run that has ended is ErrEnded.
func Cancel(ctx context.Context, st *store.Store, id int64, reason msg.Msg) (store.WorkflowRun, []int64, error) {
	var jobRuns []int64
	err := st.Tx(ctx, func(tx *store.Tx) error {
		jobRuns = nil
		run, err := tx.LockWorkflowRun(ctx, id)
		if err != nil {
			return err
		}
		if store.RunEnded(run.Status) {
			return fmt.Errorf("cancel of workflow run %d: %w: it is %s", id, ErrEnded, run.Status)
		}
		all, err := tx.NodeRuns(ctx, id)
		if err != nil {
			return err
		}
		for key, n := range store.LatestNodeRuns(all) {
			if store.RunEnded(n.Status) {
				continue
			}
			ok, err := tx.TransitionNodeRun(ctx, store.StatusTransition{ID: n.ID, From: n.Status, To: store.RunCancelled, Reason: reason})
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("node run %d (%s) was not %s any more", n.ID, key, n.Status)
			}
			if n.JobRunID.Valid {
				jobRuns = append(jobRuns, n.JobRunID.Int64)
			}
		}
		ok, err := tx.TransitionWorkflowRun(ctx, store.StatusTransition{ID: id, From: run.Status, To: store.RunCancelled, Reason: reason})
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("workflow run %d was not %s any more", id, run.Status)
		}
		return nil
	})
	if err != nil {
		return store.WorkflowRun{}, nil, err
	}
	run, err := st.WorkflowRun(ctx, id)
	return run, jobRuns, err
}
