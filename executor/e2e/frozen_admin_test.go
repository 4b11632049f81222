package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// TestFrozenAdminDoesNotLoseItsExecutors (issue 16, item 6): an executor
// whose admin freezes (SIGSTOP: connections stay open, nothing answers)
// while it runs slots must reach another admin before the loss threshold,
// so that the leader does not declare it lost and run its slots twice. The
// executor talks to a replica first; the leader (the other admin) runs loss
// detection. Before hedged heartbeats the executor waited out its 10 s HTTP
// timeout on the frozen replica and the leader declared it lost after 3 s.
func TestFrozenAdminDoesNotLoseItsExecutors(t *testing.T) {
	const (
		slots   = 4
		records = slots * 40 // 40 records of 100ms: 4s per slot
	)
	c := newCluster(t)
	replica := c.startReplica("replica")
	replicaURL := replica.URL
	c.Exec.Admins = replicaURL + "," + c.API.Base // the replica is asked first
	ex := c.startExecutor("frozen", slots)
	c.WaitOnline(ex)
	_, err := ex.WaitForLine(harness.Ctx(t, startDeadline), "admin="+replicaURL)
	require.NoError(t, err, "the executor registers through the replica")

	job := c.createJob("frozen", "sleeper", slots, fmt.Sprintf("records=%d;ms_per_record=100", records))
	run := c.trigger(job)
	held := c.heldStarted(ex, run.ID, slots)

	require.NoError(t, replica.Freeze()) // thawed before the cleanup stops it
	stoppedAt := time.Now()

	// Heartbeats keep arriving (through the leader) for longer than the
	// loss threshold, and the leader never sees the executor lost.
	lostSeen := ""
	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		list, err := c.Executors()
		if err != nil {
			return false, err
		}
		v := list[ex.Name]
		if v.State != "online" && lostSeen == "" {
			lostSeen = fmt.Sprintf("%s at %s after SIGSTOP", v.State, time.Since(stoppedAt).Round(time.Millisecond))
		}
		return v.LastHeartbeat.After(stoppedAt.Add(lostAfter + heartbeat)), fmt.Errorf("last heartbeat %s", v.LastHeartbeat)
	}, "the executor's heartbeats did not reach the other admin")
	require.Empty(t, lostSeen, "the executor was declared lost while its admin was frozen")
	_, err = ex.WaitForLine(harness.Ctx(t, startDeadline), "switched admin")
	require.NoError(t, err)

	r, atts := c.waitRunEnded(run.ID)
	current := checkRunSucceeded(t, r, atts, slots, records)
	require.Len(t, atts, slots, "no slot got a second attempt: %v", atts)
	for _, h := range held {
		require.Equal(t, h.Token, current[h.Slot].Token, "slot %d kept its token", h.Slot)
	}
	require.NoError(t, replica.Thaw())
	fmt.Printf("SUMMARY frozen admin: executor kept online through a %s SIGSTOP of its admin; %d slots finished once, on their first token\n",
		time.Since(stoppedAt).Round(time.Millisecond), slots)
}
