package scheduler

import (
	"context"
	"math"
	"slices"
	"sync"

	"github.com/shardjob/shardjob/admin/internal/lru"
	"github.com/shardjob/shardjob/admin/msg"
)

// capRound is one round's view of the concurrency caps (max_running_slots)
// of apps and jobs: each cap with the slots of its runs placed on
// executors and not ended (assigned, queued or running), kept up to date by
// the round's own placements.
//
// Only the leader places slots, in transactions fenced by its epoch, and
// meanwhile slots can only end, so a count never falls below the truth: a
// cap is never exceeded, across a failover too (a new leader counts
// afresh; the former one's placements are refused by the fence). Moving a
// slot off a lost executor or to an idle one ends one attempt as it places
// the next, and so needs no room.
//
// The counts come from the term's bounds (capBounds): the last count read
// from the database plus every slot placed since. A bound that leaves room
// is used as it is; one that leaves none is counted again, so that the
// database is read when a cap is close, not at every round of a herd.
type capRound struct {
	s      *Scheduler
	appMax map[string]int64
	// appRate are the start rates of the apps that have one (startrate.go).
	appRate map[string]int64
	// appWeight are the weights of the apps that have one (fair share of
	// the platform's capacity, Config.MaxRunningSlots).
	appWeight map[string]int64
	// globalMax is the platform's capacity (0: none), globalUsed its
	// placed slots (an upper bound), globalRecounted whether the round
	// counted them from the database.
	globalMax, globalUsed int64
	globalRecounted       bool
	// appUsed and jobUsed are the placed slots of capped apps and jobs
	// (upper bounds).
	appUsed map[string]int64
	jobUsed map[int64]int64
	// recounted are the apps and jobs counted from the database this round.
	appRecounted map[string]bool
	jobRecounted map[int64]bool
	// held is set when the round held work back for a cap.
	held bool
	// takenApp, takenJob and takenAll are the slots this round placed, or
	// handed to a start transaction that may not have committed yet: a
	// count read from the database in the middle of the round adds them,
	// so that it never misses them (it may count some twice: too high,
	// never too low).
	takenApp map[string]int64
	takenJob map[int64]int64
	takenAll int64
}

// capBounds are a term's upper bounds of the placed slots of capped apps
// and jobs (capRound). A new term starts without any (Lead).
type capBounds struct {
	mu     sync.Mutex
	apps   map[string]int64
	jobs   *lru.Cache[int64, int64]
	global int64
	hasAll bool // global is known
}

// maxJobBounds bounds the capped jobs whose count a term remembers.
const maxJobBounds = 100_000

func newCapBounds() *capBounds {
	return &capBounds{apps: map[string]int64{}, jobs: lru.New[int64, int64](maxJobBounds)}
}

// newCapRound reads the apps' caps and takes the term's bounds of the
// capped apps, counting those it has none of (nothing more when no app has
// a cap).
func (s *Scheduler) newCapRound(ctx context.Context) (*capRound, error) {
	c := &capRound{s: s, appMax: map[string]int64{}, appRate: map[string]int64{}, appWeight: map[string]int64{}, appUsed: map[string]int64{},
		jobUsed: map[int64]int64{}, appRecounted: map[string]bool{}, jobRecounted: map[int64]bool{}, globalMax: s.cfg.MaxRunningSlots,
		takenApp: map[string]int64{}, takenJob: map[int64]int64{}}
	limits, err := s.store.AppCaps(ctx)
	if err != nil {
		return c, err
	}
	for app, l := range limits {
		if l.MaxRunningSlots > 0 {
			c.appMax[app] = l.MaxRunningSlots
		}
		if l.MaxStartsPerSecond > 0 {
			c.appRate[app] = l.MaxStartsPerSecond
		}
		c.appWeight[app] = max(l.Weight, 1)
	}
	s.forgetUncapped(c)
	if c.globalMax > 0 {
		b := s.bounds()
		b.mu.Lock()
		c.globalUsed, c.globalRecounted = b.global, false
		known := b.hasAll
		b.mu.Unlock()
		if !known {
			if err := c.countGlobal(ctx); err != nil {
				return c, err
			}
		}
	}
	if len(c.appMax) == 0 {
		return c, nil
	}
	b := s.bounds()
	var todo []string
	b.mu.Lock()
	for a := range c.appMax {
		if n, ok := b.apps[a]; ok {
			c.appUsed[a] = n
		} else {
			todo = append(todo, a)
		}
	}
	b.mu.Unlock()
	return c, c.countApps(ctx, todo)
}

// forgetUncapped drops the term's bounds of the apps without a cap in round
// c: an app's bound holds only while the leader tracks its placements, so
// one without a cap now (and no platform capacity to share) is counted
// afresh when it has one again.
func (s *Scheduler) forgetUncapped(c *capRound) {
	if c.globalMax > 0 {
		return
	}
	b := s.bounds()
	b.mu.Lock()
	defer b.mu.Unlock()
	for a := range b.apps {
		if _, ok := c.appMax[a]; !ok {
			delete(b.apps, a)
		}
	}
}

// bounds are the term's bounds.
func (s *Scheduler) bounds() *capBounds {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.capBounds == nil {
		s.capBounds = newCapBounds()
	}
	return s.capBounds
}

// countGlobal counts every placed slot from the database.
func (c *capRound) countGlobal(ctx context.Context) error {
	n, err := c.s.store.PlacedSlots(ctx)
	if err != nil {
		return err
	}
	n += c.takenAll
	b := c.s.bounds()
	b.mu.Lock()
	defer b.mu.Unlock()
	c.globalUsed, c.globalRecounted, b.global, b.hasAll = n, true, n, true
	return nil
}

// share prepares the round to share the platform's capacity among the
// apps of items (demand: the slots they ask for): when the capacity's
// bound leaves less room than that, it counts the placed slots again, of
// all apps and of these ones, so that the fair order (fairOrder) sees
// what runs now. It reports whether the capacity is short.
func (c *capRound) share(ctx context.Context, apps []string, demand int64) (bool, error) {
	if c.globalMax <= 0 || c.globalMax-c.globalUsed >= demand {
		return false, nil
	}
	if !c.globalRecounted {
		if err := c.countGlobal(ctx); err != nil {
			return false, err
		}
	}
	// The competing apps' counts, whether or not the platform's was
	// counted earlier in the round (by room, for another page).
	var todo []string
	for _, a := range apps {
		if !c.appRecounted[a] && !slices.Contains(todo, a) {
			todo = append(todo, a)
		}
	}
	if err := c.countApps(ctx, todo); err != nil {
		return false, err
	}
	return c.globalMax-c.globalUsed < demand, nil
}

// weight is app's weight in the fair share (1 unless set).
func (c *capRound) weight(app string) int64 {
	if w, ok := c.appWeight[app]; ok {
		return w
	}
	return 1
}

// countApps counts the placed slots of apps from the database.
func (c *capRound) countApps(ctx context.Context, apps []string) error {
	if len(apps) == 0 {
		return nil
	}
	slices.Sort(apps)
	n, err := c.s.store.PlacedSlotsOfApps(ctx, apps)
	if err != nil {
		return err
	}
	b := c.s.bounds()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range apps {
		used := n[a] + c.takenApp[a]
		c.appUsed[a], c.appRecounted[a], b.apps[a] = used, true, used
	}
	return nil
}

// countJobs takes the term's bounds of the capped jobs of ids that the
// round has not seen yet, and counts those it has none of in one query: a
// page of due runs of many capped jobs costs at most one query.
func (c *capRound) countJobs(ctx context.Context, ids []int64) error {
	b := c.s.bounds()
	var todo []int64
	b.mu.Lock()
	for _, id := range ids {
		if _, ok := c.jobUsed[id]; ok || slices.Contains(todo, id) {
			continue
		}
		if n, ok := b.jobs.Get(id); ok {
			c.jobUsed[id] = n
		} else {
			todo = append(todo, id)
		}
	}
	b.mu.Unlock()
	return c.recountJobs(ctx, todo)
}

// recountJobs counts the placed slots of jobs ids from the database.
func (c *capRound) recountJobs(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	n, err := c.s.store.PlacedSlotsOfJobs(ctx, ids)
	if err != nil {
		return err
	}
	b := c.s.bounds()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		used := n[id] + c.takenJob[id]
		c.jobUsed[id], c.jobRecounted[id] = used, true
		b.jobs.Add(id, used)
	}
	return nil
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
// run). A cap whose bound leaves less room than want is counted again from
// the database first. The leader places the waiting slots of started runs
// first (placeUnplaced) with the same round, so a new run finds room only
// once they are all placed.
func (c *capRound) room(ctx context.Context, app string, jobID int64, job string, jobMax int64, want int64) (int64, msg.Msg, error) {
	appMax, appCapped := c.appMax[app]
	if !appCapped && jobMax <= 0 && c.globalMax <= 0 {
		return math.MaxInt64, msg.Msg{}, nil
	}
	if c.globalMax > 0 && c.globalMax-c.globalUsed < want && !c.globalRecounted {
		if err := c.countGlobal(ctx); err != nil {
			return 0, msg.Msg{}, err
		}
	}
	if jobMax > 0 {
		if err := c.countJobs(ctx, []int64{jobID}); err != nil {
			return 0, msg.Msg{}, err
		}
		if jobMax-c.jobUsed[jobID] < want && !c.jobRecounted[jobID] {
			if err := c.recountJobs(ctx, []int64{jobID}); err != nil {
				return 0, msg.Msg{}, err
			}
		}
	}
	if appCapped && appMax-c.appUsed[app] < want && !c.appRecounted[app] {
		if err := c.countApps(ctx, []string{app}); err != nil {
			return 0, msg.Msg{}, err
		}
	}
	a := capUse{Max: appMax, Used: c.appUsed[app]}
	j := capUse{Max: jobMax, Used: c.jobUsed[jobID]}
	g := capUse{Max: c.globalMax, Used: c.globalUsed}
	room, which := roomFor(a, j, g)
	if room == 0 {
		c.held = true
	}
	switch {
	case room > 0:
		return room, msg.Msg{}, nil
	case which == 0:
		return 0, msg.New(msg.CauseAppCap, "app", app, "running", a.Used, "max", a.Max), nil
	case which == 1:
		return 0, msg.New(msg.CauseJobCap, "job", app+"/"+job, "running", j.Used, "max", j.Max), nil
	default:
		return 0, msg.New(msg.CausePlatformCap, "running", g.Used, "max", g.Max), nil
	}
}

// forgetJob drops the term's bound of job jobID, which has no cap now: its
// placements are not tracked, so a cap it gets again is counted afresh.
func (c *capRound) forgetJob(jobID int64) {
	b := c.s.bounds()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.jobs.Len() > 0 { // the common case, no capped job: nothing to look up
		b.jobs.Remove(jobID)
	}
}

// take records that n slots of job jobID of app were placed, in the round
// and in the term's bounds.
func (c *capRound) take(app string, jobID int64, n int64) {
	c.takenApp[app] += n
	c.takenJob[jobID] += n
	c.takenAll += n
	b := c.s.bounds()
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := c.appUsed[app]; ok {
		c.appUsed[app] += n
		b.apps[app] = c.appUsed[app]
	}
	if c.globalMax > 0 {
		c.globalUsed += n
		b.global = c.globalUsed
	}
	if _, ok := c.jobUsed[jobID]; ok {
		c.jobUsed[jobID] += n
		b.jobs.Add(jobID, c.jobUsed[jobID])
	}
}
