package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

// Three executors share a 1024-slot run: it succeeds, every slot runs once
// on one of them, the records are covered exactly once, and all three get
// work.
func TestSlotsSpreadOverExecutorsAndRunOnce(t *testing.T) {
	const (
		slots   = 1024
		records = 4096 // 4 per slot, 1ms each
	)
	c := newCluster(t)
	execs := []*harness.Executor{c.startExecutor("spread", 8), c.startExecutor("spread", 8), c.startExecutor("spread", 8)}
	c.WaitOnline(execs...)

	job := c.createJob("spread", "all-slots", slots, fmt.Sprintf("records=%d;ms_per_record=1", records))
	run := c.trigger(job)
	start := time.Now()
	r, atts := c.waitRunEnded(run.ID)
	t.Logf("run of %d slots over %d executors ended %s in %s", slots, len(execs), r.Status, time.Since(start).Round(time.Millisecond))

	current := checkRunSucceeded(t, r, atts, slots, records)
	checkStartedOnce(t, startsOf(run.ID, nil, execs...), atts, current, nil)
	for _, a := range atts {
		if !a.Current {
			// Only an attempt that never started may be superseded here
			// (work stealing); checkStartedOnce proved it did not start.
			require.Equal(t, "moved", a.Status, "no executor failed, yet slot %d has a superseded attempt: %s", a.Slot, a)
		}
	}
	checkCoverage(t, ranges(t, run.ID, execs...), current, slots, records)

	load := perExecutor(current)
	for _, e := range execs {
		require.Positive(t, load[e.ID], "executor %s (id %d) got no slot: %v", e.Name, e.ID, load)
	}
	t.Logf("slots per executor: %v", load)
}

// heldStarted waits until executor e runs slots of the run: it holds
// current attempts, has started every one of them, and the admin knows
// (status running, from the executor's heartbeat). It returns them.
func (c *cluster) heldStarted(e *harness.Executor, runID int64, slots int) []apitypes.Attempt {
	c.t.Helper()
	var held []apitypes.Attempt
	testenv.WaitFor(c.t, runDeadline, func() (bool, error) {
		_, atts, err := c.Run(runID)
		if err != nil || len(atts) < slots {
			return false, err
		}
		st := started(e.Process, runID)
		held = held[:0]
		for _, a := range atts {
			if a.Current && harness.ExecutorOf(a) == e.ID {
				if _, ok := st[a.Token]; !ok || a.Status != "running" {
					return false, fmt.Errorf("token %d (slot %d) placed on %s: started %v, status %s", a.Token, a.Slot, e.Name, ok, a.Status)
				}
				held = append(held, a)
			}
		}
		return len(held) > 0, nil
	}, fmt.Sprintf("%s did not start slots of run %d", e.Name, runID))
	return held
}

func latest(ts map[int]time.Time) time.Time {
	var last time.Time
	for _, at := range ts {
		if at.After(last) {
			last = at
		}
	}
	return last
}

// checkSuperseded asserts that the attempts held by a lost executor were
// superseded as lost (their results, if any, not applied) by attempts with
// larger tokens.
func checkSuperseded(t *testing.T, held []apitypes.Attempt, atts []apitypes.Attempt, current map[int]apitypes.Attempt, lost *harness.Executor) {
	t.Helper()
	byToken := map[int64]apitypes.Attempt{}
	for _, a := range atts {
		byToken[a.Token] = a
	}
	checkLost(t, held, atts, lost)
	for _, h := range held {
		a := byToken[h.Token]
		require.Zero(t, a.Processed, "token %d: the records of a superseded attempt must not count", h.Token)
		require.Greater(t, current[h.Slot].Token, h.Token, "slot %d: the new attempt has a larger token", h.Slot)
	}
}

// slotSet returns the slots of atts.
func slotSet(atts []apitypes.Attempt) map[int]bool {
	m := map[int]bool{}
	for _, a := range atts {
		m[a.Slot] = true
	}
	return m
}

// tokenSet returns the tokens of atts.
func tokenSet(atts []apitypes.Attempt) map[int64]bool {
	m := map[int64]bool{}
	for _, a := range atts {
		m[a.Token] = true
	}
	return m
}

// checkLost asserts that the attempts held (started) by the failed
// executor were superseded because it was lost, not moved elsewhere while
// they ran.
func checkLost(t *testing.T, held []apitypes.Attempt, atts []apitypes.Attempt, failed *harness.Executor) {
	t.Helper()
	status := map[int64]string{}
	for _, a := range atts {
		status[a.Token] = a.Status
	}
	for _, h := range held {
		require.Equal(t, "lost", status[h.Token],
			"token %d (slot %d) had started on %s before it failed: it must be superseded as lost (a started slot is never moved to an idle executor)",
			h.Token, h.Slot, failed.Name)
	}
}

// An executor killed with SIGKILL in the middle of a run: the admin declares
// it lost after 3 heartbeat intervals and its slots finish elsewhere under
// new tokens; the run succeeds.
func TestKilledExecutorsSlotsFinishElsewhere(t *testing.T) {
	const (
		slots   = 12
		records = slots * 30 // 30 records of 100ms: 3s per slot
	)
	c := newCluster(t)
	// Capacity 8 and 4 slots each: a survivor starts the slots it inherits
	// at once, so the measured time is the recovery, not a queue.
	execs := []*harness.Executor{c.startExecutor("kill", 8), c.startExecutor("kill", 8), c.startExecutor("kill", 8)}
	c.WaitOnline(execs...)

	job := c.createJob("kill", "victim", slots, fmt.Sprintf("records=%d;ms_per_record=100", records))
	run := c.trigger(job)
	victim := execs[1]
	survivors := []*harness.Executor{execs[0], execs[2]}

	held := c.heldStarted(victim, run.ID, slots)
	killedAt := time.Now()
	require.NoError(t, victim.Kill())
	t.Logf("killed %s (id %d) running %d slots", victim.Name, victim.ID, len(held))

	// Recovery time: from the kill to the start of the last of its slots
	// on a survivor. Measured before the run ends, so that it is reported
	// whatever happens next.
	recovery := latest(c.waitRestarted(run.ID, held, victim, survivors)).Sub(killedAt)
	// It is a recovery only if they moved because the executor was lost.
	_, atts, err := c.Run(run.ID)
	require.NoError(t, err)
	checkLost(t, held, atts, victim)
	lostAt := "never"
	for _, l := range logLines(c.Admin.Process, "executors lost") {
		if l.Time().After(killedAt) {
			lostAt = l.Time().Sub(killedAt).Round(time.Millisecond).String()
			break
		}
	}
	target := lostAfter + time.Second
	t.Logf("recovery: SIGKILL → executor declared lost %s → last of its %d slots restarted %s; target %s",
		lostAt, len(held), recovery.Round(time.Millisecond), target)
	fmt.Printf("SUMMARY kill-recovery: %d slots restarted elsewhere, the last %s after SIGKILL (declared lost after %s; target %s = 3 heartbeats + 1s)\n",
		len(held), recovery.Round(time.Millisecond), lostAt, target)
	require.Positive(t, recovery, "a moved slot cannot start before the kill")
	// Speed is measured, not asserted (a loaded CI machine is not a
	// benchmark): the figure is printed above and kept in docs/performance.md.
	if recovery > target {
		t.Logf("note: recovery %s exceeded the target %s on this (loaded) machine", recovery.Round(time.Millisecond), target)
	}

	r, atts := c.waitRunEnded(run.ID)
	current := checkRunSucceeded(t, r, atts, slots, records)
	checkSuperseded(t, held, atts, current, victim)
	// The slots it held started once more, elsewhere.
	checkStartedOnce(t, startsOf(run.ID, nil, survivors...), atts, current, slotSet(held))
	checkCoverage(t, ranges(t, run.ID, survivors...), current, slots, records)
	list, err := c.Executors()
	require.NoError(t, err)
	require.Equal(t, "lost", list[victim.Name].State)
}

// waitRestarted waits until every slot in held runs on one of survivors
// (its current attempt is placed there and started there) and returns when
// each of them started there, by the survivors' "slot started" lines.
func (c *cluster) waitRestarted(runID int64, held []apitypes.Attempt, failed *harness.Executor, survivors []*harness.Executor) map[int]time.Time {
	c.t.Helper()
	var at map[int]time.Time
	testenv.WaitFor(c.t, runDeadline, func() (bool, error) {
		_, atts, err := c.Run(runID)
		if err != nil {
			return false, err
		}
		startedAt := map[int64]time.Time{}
		for _, e := range survivors {
			for tok, l := range started(e.Process, runID) {
				startedAt[tok] = l.Time()
			}
		}
		at = map[int]time.Time{}
		for _, a := range atts {
			if t, ok := startedAt[a.Token]; ok && a.Current && harness.ExecutorOf(a) != failed.ID {
				at[a.Slot] = t
			}
		}
		for _, h := range held {
			if _, ok := at[h.Slot]; !ok {
				return false, fmt.Errorf("slot %d does not run on a survivor yet", h.Slot)
			}
		}
		return true, nil
	}, fmt.Sprintf("the slots of %s did not restart elsewhere", failed.Name))
	out := make(map[int]time.Time, len(held))
	for _, h := range held {
		out[h.Slot] = at[h.Slot]
	}
	return out
}

// An executor paused (SIGSTOP) for longer than 3 heartbeat intervals loses
// its slots; when it resumes (SIGCONT) its heartbeat learns that its tokens
// are stale, its handlers see their contexts cancelled, the admin rejects
// its late results, and each slot still has exactly one succeeded attempt.
func TestPausedExecutorIsFencedWhenItResumes(t *testing.T) {
	const (
		slots   = 12
		records = slots * 50 // 50 records of 100ms: 5s per slot
	)
	c := newCluster(t)
	execs := []*harness.Executor{c.startExecutor("pause", 8), c.startExecutor("pause", 8), c.startExecutor("pause", 8)}
	c.WaitOnline(execs...)

	job := c.createJob("pause", "sleeper", slots, fmt.Sprintf("records=%d;ms_per_record=100", records))
	run := c.trigger(job)
	victim := execs[0]
	survivors := execs[1:]

	held := c.heldStarted(victim, run.ID, slots)
	require.NoError(t, victim.Freeze()) // thawed before the cleanup stops it
	pausedAt := time.Now()

	// Wait until the admin declared it lost and every slot it held runs
	// on a survivor.
	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		list, err := c.Executors()
		if err != nil {
			return false, err
		}
		if st := list[victim.Name].State; st != "lost" {
			return false, fmt.Errorf("%s is %s", victim.Name, st)
		}
		// Its silence began at its last heartbeat, before the pause: keep
		// it paused for 3 heartbeat intervals at least all the same.
		return time.Since(pausedAt) > lostAfter, nil
	}, "the paused executor was not declared lost")
	recovery := latest(c.waitRestarted(run.ID, held, victim, survivors)).Sub(pausedAt)
	t.Logf("recovery: SIGSTOP → last of its %d slots restarted on a survivor %s", len(held), recovery.Round(time.Millisecond))
	paused := time.Since(pausedAt)
	require.NoError(t, victim.Thaw())
	t.Logf("paused %s (id %d, %d slots) for %s", victim.Name, victim.ID, len(held), paused.Round(time.Millisecond))
	require.Greater(t, paused, lostAfter, "paused for longer than 3 heartbeat intervals")

	// Its first heartbeat after the pause reports the stale tokens as
	// running: the admin answers with them in the cancel list, the
	// handlers stop, and their results are rejected as stale.
	testenv.WaitFor(t, runDeadline, func() (bool, error) {
		cancelled, rejected := tokensIn(logLines(victim.Process, "slot context cancelled")), tokensIn(logLines(victim.Process, "stale token: result ignored by admin"))
		for _, h := range held {
			if !cancelled[h.Token] || !rejected[h.Token] {
				return false, fmt.Errorf("token %d: context cancelled %v, result rejected %v", h.Token, cancelled[h.Token], rejected[h.Token])
			}
		}
		return true, nil
	}, "the resumed executor's slots were not cancelled and their results not rejected")
	source := map[int64]string{}
	for _, l := range logLines(victim.Process, "cancelling slot") {
		tok, _ := strconv.ParseInt(l["token"], 10, 64)
		source[tok] = l["source"]
	}
	for _, h := range held {
		require.Equal(t, "heartbeat", source[h.Token], "token %d is cancelled by the heartbeat response's cancel list", h.Token)
	}
	rejectedByAdmin := false
	for _, l := range logLines(c.Admin.Process, "stale results rejected") {
		rejectedByAdmin = rejectedByAdmin || l["instance"] == victim.Name
	}
	require.True(t, rejectedByAdmin, "the admin logs the rejected results of %s", victim.Name)

	r, atts := c.waitRunEnded(run.ID)
	current := checkRunSucceeded(t, r, atts, slots, records)
	checkSuperseded(t, held, atts, current, victim)
	// The slots it held started once more (elsewhere, or on the resumed
	// executor under a new token).
	checkStartedOnce(t, startsOf(run.ID, tokenSet(held), execs...), atts, current, slotSet(held))
	checkCoverage(t, ranges(t, run.ID, execs...), current, slots, records)
	fmt.Printf("SUMMARY pause: %d slots moved off an executor paused for %s (restarted elsewhere %s after SIGSTOP); after SIGCONT all %d cancelled by heartbeat and their results rejected\n",
		len(held), paused.Round(time.Millisecond), recovery.Round(time.Millisecond), len(held))
}

// tokensIn returns the token attributes of lines.
func tokensIn(lines []harness.LogLine) map[int64]bool {
	m := map[int64]bool{}
	for _, l := range lines {
		if tok, err := strconv.ParseInt(l["token"], 10, 64); err == nil {
			m[tok] = true
		}
	}
	return m
}

// An executor killed with SIGKILL in the middle of a run and restarted at
// once under the same instance id (a supervisor restarting a crashed
// process, a pod with a stable name) heartbeats without a pause, so nobody
// declares it lost; the slots its previous process held must not look
// running forever. The new process's first heartbeat carries a new
// incarnation: the admin supersedes those slots as lost and places them
// again, and the run succeeds with every slot run once more (issue 16).
func TestRestartedExecutorsSlotsAreNotStranded(t *testing.T) {
	const (
		slots   = 4
		records = slots * 20 // 20 records of 100ms: 2s per slot
	)
	c := newCluster(t)
	ex := c.startExecutor("restart", 8)
	c.WaitOnline(ex)
	job := c.createJob("restart", "stranded", slots, fmt.Sprintf("records=%d;ms_per_record=100", records))
	run := c.trigger(job)
	held := c.heldStarted(ex, run.ID, slots)
	require.NoError(t, ex.Kill())
	restartedAt := time.Now()
	again := c.restartExecutor(ex, 8)
	t.Logf("killed %s holding %d started slots and started it again", ex.Name, len(held))

	r, atts := c.waitRunEnded(run.ID)
	settled := time.Since(restartedAt)
	current := checkRunSucceeded(t, r, atts, slots, records)
	checkSuperseded(t, held, atts, current, ex)
	// The slots of the killed process ran once more, on the new process.
	checkStartedOnce(t, startsOf(run.ID, nil, again), atts, current, slotSet(held))
	list, err := c.Executors()
	require.NoError(t, err)
	require.Equal(t, "online", list[ex.Name].State, "it never stopped heartbeating: never declared lost")
	require.NotEmpty(t, logLines(c.Admin.Process, "executor restarted under the same instance id"), "the admin says what it did")
	t.Logf("restart: the run settled %s after the new process started (its slots take 2s each)", settled.Round(time.Millisecond))
}
