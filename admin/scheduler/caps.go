package scheduler

import (
	"context"
	"math"
	"slices"

	"github.com/shardjob/shardjob/admin/msg"
)

// capRound is one round's view of the concurrency caps (max_running_slots)
// of apps and jobs: each cap with the slots of its runs placed on
// executors and not ended (assigned, queued or running), counted from the
// database when the round first needs it, then kept up to date by the
// round's own placements.
//
// Only the leader places slots, in transactions fenced by its epoch, and
// between the count and the placement slots can only end, so the count is
// never below the truth: a cap is never exceeded, across a failover too (a
// new leader counts afresh; the former one's placements are refused by the
// fence). Moving a slot off a lost executor or to an idle one ends one
// attempt as it places the next, and so needs no room.
type capRound struct {
	s      *Scheduler
	appMax map[string]int64
	// appUsed and jobUsed are the placed slots of capped apps and jobs.
	appUsed map[string]int64
	jobUsed map[int64]int64
}

// newCapRound reads the apps' caps and counts the placed slots of the
// capped apps (nothing more when no app has a cap).
func (s *Scheduler) newCapRound(ctx context.Context) (*capRound, error) {
	c := &capRound{s: s, appUsed: map[string]int64{}, jobUsed: map[int64]int64{}}
	var err error
	if c.appMax, err = s.store.AppCaps(ctx); err != nil || len(c.appMax) == 0 {
		return c, err
	}
	apps := make([]string, 0, len(c.appMax))
	for a := range c.appMax {
		apps = append(apps, a)
	}
	slices.Sort(apps)
	c.appUsed, err = s.store.PlacedSlotsOfApps(ctx, apps)
	return c, err
}

// capUse is what one cap allows now.
type capUse struct{ Max, Used int64 }

// roomFor is how many slots the caps allow: the least room of the caps
// given (Max 0: no cap), never below 0. which is the index of the cap that
// limits, -1 when none does (math.MaxInt64 room).
func roomFor(caps ...capUse) (room int64, which int) {
	room, which = math.MaxInt64, -1
	for i, c := range caps {
		if c.Max <= 0 {
			continue
		}
		if r := max(c.Max-c.Used, 0); r < room {
			room, which = r, i
		}
	}
	return room, which
}

// room returns how many more slots of job jobID (named job, cap jobMax, 0:
// none) of app the caps allow now, and when they allow none, why (for the
// run). The leader places the waiting slots of started runs first
// (placeUnplaced) with the same round, so a new run finds room only once
// they are all placed.
func (c *capRound) room(ctx context.Context, app string, jobID int64, job string, jobMax int64) (int64, msg.Msg, error) {
	appMax, appCapped := c.appMax[app]
	if !appCapped && jobMax <= 0 {
		return math.MaxInt64, msg.Msg{}, nil
	}
	if jobMax > 0 {
		if _, ok := c.jobUsed[jobID]; !ok {
			n, err := c.s.store.PlacedSlotsOfJob(ctx, jobID)
			if err != nil {
				return 0, msg.Msg{}, err
			}
			c.jobUsed[jobID] = n
		}
	}
	a := capUse{Max: appMax, Used: c.appUsed[app]}
	j := capUse{Max: jobMax, Used: c.jobUsed[jobID]}
	room, which := roomFor(a, j)
	switch {
	case room > 0:
		return room, msg.Msg{}, nil
	case which == 0:
		return 0, msg.New(msg.CauseAppCap, "app", app, "running", a.Used, "max", a.Max), nil
	default:
		return 0, msg.New(msg.CauseJobCap, "job", app+"/"+job, "running", j.Used, "max", j.Max), nil
	}
}

// take records that n slots of job jobID of app were placed.
func (c *capRound) take(app string, jobID int64, n int64) {
	if _, ok := c.appMax[app]; ok {
		c.appUsed[app] += n
	}
	if _, ok := c.jobUsed[jobID]; ok {
		c.jobUsed[jobID] += n
	}
}
