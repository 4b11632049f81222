package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// TestExecutorJoiningMidRunTakesQueuedSlots: a run is placed on the only
// executor, which queues most of its slots behind its capacity; two
// executors join mid-run and take over queued slots at once (work
// stealing, with the release handshake). No slot starts twice, every
// record is processed once, and the joiners do part of the work.
func TestExecutorJoiningMidRunTakesQueuedSlots(t *testing.T) {
	const (
		slots   = 96
		records = 960 // 10 per slot, 20 ms each: 200 ms per slot
	)
	c := newCluster(t)
	first := c.startExecutor("steal", 2)
	c.WaitOnline(first)
	job := c.createJob("steal", "joiners", slots, fmt.Sprintf("records=%d;ms_per_record=20", records))
	run := c.trigger(job)
	start := time.Now()
	// Wait until the first executor holds the whole run (most of it queued).
	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		_, atts, err := c.Run(run.ID)
		if err != nil {
			return false, err
		}
		held := 0
		for _, a := range atts {
			if a.Current && harness.ExecutorOf(a) == first.ID {
				held++
			}
		}
		return held == slots, fmt.Errorf("%d of %d slots on %s", held, slots, first.Name)
	}, "the run was not placed on the first executor")

	joiners := []*harness.Executor{c.startExecutor("steal", 2), c.startExecutor("steal", 2)}
	c.WaitOnline(joiners...)
	joinedAfter := time.Since(start)
	r, atts := c.waitRunEnded(run.ID)
	took := time.Since(start)

	current := checkRunSucceeded(t, r, atts, slots, records)
	all := append([]*harness.Executor{first}, joiners...)
	checkStartedOnce(t, startsOf(run.ID, nil, all...), atts, current, nil)
	moved := 0
	for _, a := range atts {
		if !a.Current {
			require.Equal(t, "moved", a.Status, "no executor failed, yet slot %d has a superseded attempt: %s", a.Slot, a)
			moved++
		}
	}
	checkCoverage(t, ranges(t, run.ID, all...), current, slots, records)
	load := perExecutor(current)
	for _, j := range joiners {
		require.Positive(t, load[j.ID], "joiner %s took no slot: %v", j.Name, load)
	}
	t.Logf("joiners online %s after the trigger; run took %s (one executor alone: about %s); %d slots moved; slots per executor: %v",
		joinedAfter.Round(time.Millisecond), took.Round(time.Millisecond), (time.Duration(slots/2) * 200 * time.Millisecond), moved, load)
}
