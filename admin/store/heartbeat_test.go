package store_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// TestHeartbeatsAndResultsDoNotDeadlock: on MariaDB, executors' heartbeats
// (ack, start, stale check, lease renewal over all their attempts) run while
// results batches of the same attempts, in shuffled order over many runs,
// are applied. InnoDB may pick deadlock victims; none may surface as an
// error (an HTTP 500 to the executor), and every run settles.
func TestHeartbeatsAndResultsDoNotDeadlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Open(t, sqlfiles.MySQL)
	_, err := s.ClaimEpoch(ctx, 1, "me")
	require.NoError(t, err)
	exs := []int64{heartbeat(t, s, "ex-a", 1, 1024).ID, heartbeat(t, s, "ex-b", 2, 1024).ID}
	j := newJob("a", "herd", 0)
	j.SlotCount = 32
	jobID, err := s.CreateJob(ctx, j)
	require.NoError(t, err)
	on := make([]int64, j.SlotCount) // slots alternate between the executors
	for i := range on {
		on[i] = exs[i%2]
	}
	var runs []int64
	var outs []store.SlotOutcome
	tokensOf := map[int64][]int64{}
	for i := range 32 {
		run, atts := startRunAt(t, s, 1, jobID, int64(i+1), on...)
		runs = append(runs, run.ID)
		for _, a := range atts {
			ex := a.ExecutorID.Int64
			tokensOf[ex] = append(tokensOf[ex], a.Token)
			outs = append(outs, store.SlotOutcome{SlotResult: protocol.SlotResult{Token: a.Token, Status: store.AttemptSucceeded, StartedAt: 1, FinishedAt: 2}, ExecutorID: ex})
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(outs), func(a, b int) { outs[a], outs[b] = outs[b], outs[a] })

	errs := make(chan error, 64)
	done := make(chan struct{})
	var results, heartbeats sync.WaitGroup
	const senders, batch = 4, 16
	for g := range senders {
		results.Go(func() {
			for start := g * batch; start < len(outs); start += senders * batch {
				acc, err := runstate.New(s).FinishAttempts(ctx, outs[start:min(start+batch, len(outs))])
				if err != nil {
					errs <- err
					return
				}
				if slices.Contains(acc, false) {
					errs <- assertErr("a current result was rejected")
					return
				}
			}
		})
	}
	for _, ex := range exs {
		tokens := slices.Clone(tokensOf[ex])
		slices.Reverse(tokens) // the executor's own order
		// Every other attempt starts: the executor index (executor_id,
		// status, id) then orders its attempts unlike their ids.
		var started []int64
		for i := 0; i < len(tokens); i += 2 {
			started = append(started, tokens[i])
		}
		for range 3 {
			heartbeats.Go(func() {
				for range 300 { // bounded: the results finish long before
					select {
					case <-done:
						return
					default:
					}
					if err := s.AckAttempts(ctx, ex, tokens); err != nil {
						errs <- err
						return
					}
					if err := s.MarkStarted(ctx, ex, started); err != nil {
						errs <- err
						return
					}
					if _, err := s.StaleTokens(ctx, ex, tokens); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	results.Wait()
	close(done)
	heartbeats.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, id := range runs {
		r, err := s.Run(ctx, id)
		require.NoError(t, err)
		require.Equal(t, store.RunSucceeded, r.Status, "run %d", id)
		require.Equal(t, 32, r.SlotsSucceeded)
	}
}

type assertErr string

func (e assertErr) Error() string { return string(e) }
