package chaos

import (
	"fmt"
	"sort"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// Work stealing (admin/scheduler: "unstarted slot moved to an idle
// executor") moves only slots their executor released unstarted (the
// release handshake). These helpers check, from the admin's and the
// executors' logs, that no moved slot had in fact started — a started slot
// moved would be work thrown away, and in External mode records made
// uncertain without any crash.

// stealReport sums up the moves of one run.
type stealReport struct {
	Moved        int           // attempts moved to an idle executor
	StartedFirst int           // of which the old executor had started before the move
	MaxLag       time.Duration // longest time between such a start and its move
	Again        int           // slots moved more than once by stealing
}

func (r stealReport) String() string {
	return fmt.Sprintf("%d slots moved as unstarted, %d of them had started (up to %s before the move), %d slots moved twice or more",
		r.Moved, r.StartedFirst, r.MaxLag.Round(time.Millisecond), r.Again)
}

func (c *cluster) steals(runID int64) stealReport {
	startedAt := map[int64]time.Time{}
	for _, e := range c.Execs() {
		for _, l := range logLines(e.Process, "slot started") {
			if l.Int("run_id") == runID {
				startedAt[l.Int("token")] = l.Time()
			}
		}
	}
	var r stealReport
	perSlot := map[int64]int{}
	for _, l := range logLines(c.Admin.Process, "unstarted slot moved to an idle executor") {
		if l.Int("run_id") != runID {
			continue
		}
		r.Moved++
		perSlot[l.Int("slot")]++
		if at, ok := startedAt[l.Int("old_token")]; ok && at.Before(l.Time()) {
			r.StartedFirst++
			r.MaxLag = max(r.MaxLag, l.Time().Sub(at))
		}
	}
	for _, n := range perSlot {
		if n > 1 {
			r.Again++
		}
	}
	return r
}

// reportSteals logs what stealing moved and fails if a moved slot had
// started.
func (c *cluster) reportSteals(what string, runID int64) stealReport {
	r := c.steals(runID)
	c.t.Logf("%s run %d: %s", what, runID, r)
	require.Zero(c.t, r.StartedFirst, "DEFECT: work stealing moved slots that had started: %s run %d: %s", what, runID, r)
	return r
}

// reportRetryBudget fails for every slot whose last attempt failed for good
// although the slot had failed no more than retryMax times: its retries
// would have been spent by attempts superseded as lost or moved.
func (c *cluster) reportRetryBudget(runID int64, atts []apitypes.Attempt) {
	bySlot := map[int][]apitypes.Attempt{}
	for _, a := range atts {
		bySlot[a.Slot] = append(bySlot[a.Slot], a)
	}
	var lines []string
	for slot, as := range bySlot {
		sort.Slice(as, func(i, j int) bool { return as[i].Token < as[j].Token })
		last := as[len(as)-1]
		if !last.Current || last.Status != "failed" {
			continue
		}
		failures, superseded := 0, 0
		for _, a := range as {
			switch a.Status {
			case "failed":
				failures++
			case "lost", "moved":
				superseded++
			}
		}
		if failures <= retryMax {
			lines = append(lines, fmt.Sprintf("slot %d failed for good on attempt %d after %d failure(s) (%d attempts superseded as lost/moved)",
				slot, last.Attempt, failures, superseded))
		}
	}
	sort.Strings(lines)
	require.Empty(c.t, lines, "DEFECT: retry budget (retry_max %d) spent by lost/moved attempts: run %d", retryMax, runID)
}
