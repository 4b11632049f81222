package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// steppingClock moves forward by step each time it is read, so that a
// budget of a few steps runs out after a known number of reads whatever the
// machine's speed.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// TestTickStartsBetweenBudgetsOfFiring: with more jobs due than one
// TickBudget fires, a round of the leader loop stops firing at the budget,
// starts the runs fired so far and says more is left; the following rounds
// fire and start the rest. Before the budget, the first round fired every
// due job before starting any (a million jobs: nothing started for
// minutes).
func TestTickStartsBetweenBudgetsOfFiring(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		const jobs = 200
		for i := range jobs {
			createJob(t, st, apitypes.JobSpec{JobDef: apitypes.JobDef{App: "app", Name: fmt.Sprintf("j%03d", i), Handler: "h", Cron: "* * * * *", SlotCount: 1}}, t0)
		}
		exec := store.ExecutorInfo{InstanceID: "a", App: "app", Address: "http://127.0.0.1:1", Capacity: 1000, Handlers: []string{"h"}}
		online(t, st, exec)
		c := &steppingClock{now: t0.Add(time.Minute + 100*time.Millisecond), step: time.Millisecond}
		p := &fakePusher{}
		// The executor's liveness is judged by the database's clock, not c:
		// on a loaded machine the rounds below take seconds, so it beats
		// before each round (as a live executor does) and may stay silent
		// for a minute; this test is about budgets, not loss.
		timing := protocol.Timing{LostAfter: time.Minute}
		s, err := scheduler.New(scheduler.Config{ID: "test", Clock: c, Timing: timing, BatchSize: 10, FireWorkers: 1, TickBudget: 3 * time.Millisecond}, st, p)
		require.NoError(t, err)
		claim(t, st, 1)

		count := func(status string) int {
			var n int
			require.NoError(t, st.DB().Get(&n, st.DB().Rebind(`SELECT COUNT(*) FROM job_run WHERE status = ? OR ? = ''`), status, status))
			return n
		}
		more, err := s.Tick(ctx, 1)
		require.NoError(t, err)
		s.WaitPushes()
		fired := count("")
		require.True(t, more, "jobs are left to fire: the loop must come straight back")
		require.Less(t, fired, jobs, "one round fires one budget, not every due job")
		require.GreaterOrEqual(t, fired, 20, "the first batch and at least one more")
		require.Equal(t, fired, count(store.RunRunning), "the runs fired in the round are started in the same round")

		rounds := 1
		for more {
			online(t, st, exec)
			more, err = s.Tick(ctx, 1)
			require.NoError(t, err)
			rounds++
			require.Less(t, rounds, jobs, "the rounds end")
		}
		s.WaitPushes()
		require.Equal(t, jobs, count(""), "every due job fired once")
		require.Equal(t, jobs, count(store.RunRunning), "and started")
		t.Logf("%d jobs fired and started in %d rounds", jobs, rounds)
	})
}
