package scheduler

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/placement"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// pendingPage is how many due pending runs the leader reads at once.
const pendingPage = 2000

// AssignPending starts the due pending runs: it places their slots on
// online executors of their app that have the handler, starts them in
// transactions of StartBatch runs (store.StartRuns: one epoch check, one
// multi-row insert of attempts), and pushes each executor its new
// attempts, many runs per request. Runs whose app has no such executor stay
// pending.
func (s *Scheduler) AssignPending(ctx context.Context, epoch int64) error {
	caps, err := s.newCapRound(ctx)
	if err != nil {
		return err
	}
	if _, err := s.assignPending(ctx, epoch, caps); err != nil {
		return err
	}
	return s.resolvePlaced(ctx)
}

// resolvePlaced resolves the waiting run_unplaceable alarms of runs that
// have been placed since (an executor with their handler came).
func (s *Scheduler) resolvePlaced(ctx context.Context) error {
	n, err := s.store.ResolveRunsPlaced(ctx)
	if n > 0 {
		s.log.Info("run_unplaceable alarms resolved: their runs are placed", "count", n)
	}
	return err
}

// assignPending pages through the due pending runs (keyset: a run that
// cannot start does not hide the ones behind it). more is true when it
// stopped at the TickBudget with due runs left. A run starts with as many
// slots placed as the concurrency caps of its app and job allow (caps.go);
// the others wait unplaced for PlaceUnplaced; with no room at all it stays
// pending, saying which cap it waits for.
func (s *Scheduler) assignPending(ctx context.Context, epoch int64, caps *capRound) (more bool, err error) {
	start := s.cfg.Clock.Now()
	deadline, now := start.Add(s.cfg.TickBudget), start.UnixMilli()
	workers := s.cfg.StartWorkers
	if s.store.Dialect() == "sqlite" || s.cfg.StartBatch == 1 {
		workers = 1 // one writer; the per-run path is one transaction after another
	}
	st := &starter{s: s, epoch: epoch, caps: caps, online: map[string][]store.Executor{}, slots: make(chan struct{}, workers)}
	defer func() {
		if werr := st.wait(); err == nil {
			err = werr
		}
	}()
	var cur store.PendingCursor
	for {
		page, err := s.store.PendingPage(ctx, now, cur, pendingPage)
		if err != nil || len(page) == 0 {
			return false, err
		}
		last := page[len(page)-1]
		cur = store.PendingCursor{ScheduledAt: last.ScheduledAt, ID: last.ID}
		if err := st.page(ctx, page); err != nil {
			return false, err
		}
		if len(page) < pendingPage {
			return false, nil
		}
		if s.cfg.Clock.Now().After(deadline) {
			return true, nil
		}
	}
}

// starter starts the runs of pages of pending runs, StartBatch at a time,
// with up to StartWorkers start transactions in flight: while one waits for
// the database, the next batch is placed and sent.
type starter struct {
	s      *Scheduler
	epoch  int64
	online map[string][]store.Executor // app → online executors, read once per round
	caps   *capRound

	capped map[string]*waitingRuns // the cap's text → pending runs of the page a cap holds back

	waiting map[string]*waitingRuns // the cause's text → pending runs of the page nobody can run yet
	held    map[string]*heldRuns    // the reason's text → pending runs of the page to hold (start_hold.go)
	turns   map[int64]*backfillTurn // job backfill id → its turn this round (start_backfill.go)
	// waitsMet caches, for the round, whether the awaited runs of a job's
	// waits succeeded (start_waits.go)
	waitsMet map[store.WaitTarget]bool

	batch   []store.RunStart
	meta    map[int64]store.PendingRun // run id → run, for the batch
	batched map[int64]bool             // job id → a run of it is in the batch (or in flight)

	slots chan struct{} // one per start transaction in flight
	wg    sync.WaitGroup
	mu    sync.Mutex
	err   error // the first error of a start transaction
}

func (st *starter) page(ctx context.Context, page []store.PendingRun) error {
	s := st.s
	nowMS := s.cfg.Clock.Now().UnixMilli()
	page, err := st.fairShare(ctx, byPriority(page, nowMS, s.cfg.PriorityAging), nowMS)
	if err != nil {
		return err
	}
	jobs := make([]int64, 0, len(page))
	seen := map[int64]bool{}
	for _, r := range page {
		if r.JobExists && !seen[r.JobID] {
			seen[r.JobID] = true
			jobs = append(jobs, r.JobID)
		}
	}
	stats, err := s.store.SlotStatsOfJobs(ctx, jobs)
	if err != nil {
		return err
	}
	var capped []int64
	for _, r := range page {
		if r.JobMaxRunningSlots > 0 {
			capped = append(capped, r.JobID)
		} else {
			st.caps.forgetJob(r.JobID)
		}
	}
	if err := st.caps.countJobs(ctx, capped); err != nil {
		return err
	}
	for _, r := range page {
		if !r.JobExists {
			if _, err := s.runs.EndPending(ctx, r.ID, store.RunCancelled, s.cfg.Clock.Now().UnixMilli(), msg.New(msg.RunJobDeleted)); err != nil {
				return err
			}
			continue
		}
		if r.Scheduled() && (!r.JobEnabled || r.JobPaused) {
			// Disabling or pausing skips such runs (store.SetJobEnabled);
			// this catches one created by a claim that raced with it.
			reason := msg.New(msg.RunSkippedDisabled)
			if r.JobPaused {
				reason = msg.New(msg.RunSkippedPaused)
			}
			if _, err := s.runs.EndPending(ctx, r.ID, store.RunSkipped, s.cfg.Clock.Now().UnixMilli(), reason); err != nil {
				return err
			}
			continue
		}
		held, probe := st.holdForBreaker(r)
		if held {
			continue
		}
		if held, err := st.hold(ctx, r); err != nil {
			return err
		} else if held {
			continue
		}
		if r.OverlapPolicy == string(schedule.OverlapQueue) || r.OverlapPolicy == string(schedule.OverlapReplace) {
			if st.batched[r.JobID] {
				// An earlier run of the job is in the batch or in flight:
				// start it first, so that the policy sees it running (as one
				// run at a time).
				if err := st.flush(ctx); err != nil {
					return err
				}
				if err := st.wait(); err != nil {
					return err
				}
			}
			wait, err := st.applyOverlap(ctx, r)
			if err != nil {
				return err
			}
			if wait {
				continue
			}
		}
		execs, ok := st.online[r.App]
		if !ok {
			if execs, err = s.store.OnlineExecutors(ctx, r.App, s.cfg.Timing.LostAfter.Milliseconds()); err != nil {
				return err
			}
			st.online[r.App] = execs
		}
		targets := targetsFor(execs, r.Handler)
		if len(targets) == 0 {
			// Stays pending until an executor with the handler is online,
			// saying why, up to UnplaceableTimeout.
			st.unplaceable(r, unplaceableCause(r, execs))
			continue
		}
		room, cause, err := st.caps.room(ctx, r.App, r.JobID, r.JobName, r.JobMaxRunningSlots, int64(r.SlotCount))
		if err != nil {
			return err
		}
		if room == 0 && !probe {
			st.capWait(r, cause)
			continue
		}
		if probe {
			room = 0 // its circuit breaker's probe: every slot unplaced, the breaker round picks one (breaker.go)
		}
		if ok, why := s.allowStart(r.App, st.caps.appRate[r.App], s.cfg.Clock.Now()); !ok {
			st.capWait(r, why)
			continue
		}
		owners, order, predicted := place(r.JobID, r.SlotCount, execs, targets, stats[r.JobID])
		// Attempts are created (and so pushed and queued on the executors)
		// in order: the most expensive slots first, as the placement assumes.
		// Beyond the caps' room they wait unplaced, in that order too.
		atts := make([]store.NewAttempt, 0, len(owners))
		for i, slot := range order {
			to := owners[slot]
			if int64(i) >= room {
				to = 0
			}
			atts = append(atts, store.NewAttempt{Slot: slot, Attempt: 1, ExecutorID: to})
		}
		st.caps.take(r.App, r.JobID, min(room, int64(len(atts))))
		if room < int64(len(atts)) {
			predicted = 0 // the placement assumed every slot at once
		}
		if st.meta == nil {
			st.meta = map[int64]store.PendingRun{}
		}
		if st.batched == nil {
			st.batched = map[int64]bool{}
		}
		st.batch = append(st.batch, store.RunStart{RunID: r.ID, Attempts: atts, PredictedMS: predicted.Milliseconds()})
		st.meta[r.ID] = r
		st.batched[r.JobID] = true
		if len(st.batch) >= s.cfg.StartBatch {
			if err := st.flush(ctx); err != nil {
				return err
			}
		}
	}
	if err := st.flush(ctx); err != nil {
		return err
	}
	if err := st.settleHolds(ctx); err != nil {
		return err
	}
	if err := st.settleCapped(ctx); err != nil {
		return err
	}
	return st.settleWaiting(ctx)
}

// capWait records that pending run r waits for room under a cap (cause),
// for settleCapped.
func (st *starter) capWait(r store.PendingRun, cause msg.Msg) {
	st.capped = addWaiting(st.capped, r, cause)
}

// settleCapped shows on the page's runs held back by a cap why they wait
// (written when it changes, not at every round). Unlike a run no executor
// can take, such a run waits as long as it takes: its app or job is busy,
// not broken.
func (st *starter) settleCapped(ctx context.Context) error {
	for _, w := range st.capped {
		reason := msg.New(msg.RunWaiting, "cause", w.cause)
		var mark []int64
		for _, r := range w.runs {
			if r.Error != reason.String() {
				mark = append(mark, r.ID)
			}
		}
		if len(mark) > 0 {
			if err := st.s.store.MarkWaiting(ctx, reason, mark); err != nil {
				return err
			}
		}
	}
	st.capped = nil
	return nil
}

// applyOverlap applies the queue and replace policies to a run about to
// start: queue waits while another run of the job is running (wait true);
// replace cancels the running ones first.
func (st *starter) applyOverlap(ctx context.Context, r store.PendingRun) (wait bool, err error) {
	s := st.s
	running, err := s.store.RunningRunIDs(ctx, r.JobID, 10)
	if err != nil {
		return false, err
	}
	if len(running) > 0 && r.OverlapPolicy == string(schedule.OverlapQueue) {
		return true, nil // queue: start after the running run ends, in order
	}
	for _, old := range running { // replace: cancel the running run, then start
		active, _, err := s.runs.Cancel(ctx, old, msg.New(msg.RunReplaced, "run", r.ID))
		if err != nil {
			return false, err
		}
		s.cancelTokens(ctx, active, "replaced by a newer run")
	}
	return false, nil
}

// flush hands the batched runs to a start transaction, which runs in the
// background once fewer than StartWorkers are in flight (wait waits for
// them). After an error it starts nothing more and returns that error.
func (st *starter) flush(ctx context.Context) error {
	if len(st.batch) == 0 {
		return nil
	}
	if err := st.firstErr(); err != nil {
		return err
	}
	batch, meta := st.batch, st.meta
	execs := map[string][]store.Executor{} // the apps of the batch: st.online may grow meanwhile
	for _, r := range meta {
		execs[r.App] = st.online[r.App]
	}
	st.batch, st.meta = nil, nil
	select {
	case st.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		defer func() { <-st.slots }()
		if err := st.start(ctx, batch, meta, execs); err != nil {
			st.mu.Lock()
			if st.err == nil {
				st.err = err
			}
			st.mu.Unlock()
		}
	}()
	return nil
}

// wait waits for the start transactions in flight and returns the first
// error of any of them.
func (st *starter) wait() error {
	st.wg.Wait()
	st.batched = nil
	return st.firstErr()
}

func (st *starter) firstErr() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.err
}

// start starts a batch of runs in one transaction and pushes their
// executors.
func (st *starter) start(ctx context.Context, batch []store.RunStart, meta map[int64]store.PendingRun, execs map[string][]store.Executor) error {
	s := st.s
	// The attempts' leases run from the database clock (store.StartRuns).
	started, err := s.store.StartRuns(ctx, st.epoch, s.cfg.Timing.LostAfter, batch)
	if err != nil {
		return err
	}
	isStarted := make(map[int64]bool, len(started))
	for _, id := range started {
		isStarted[id] = true
	}
	now := s.cfg.Clock.Now()
	targets := map[string]map[int64]bool{} // app → executors with new attempts
	for _, rs := range batch {
		if !isStarted[rs.RunID] {
			continue
		}
		r := meta[rs.RunID]
		if o := s.cfg.Observer; o != nil {
			waited := max(now.Sub(time.UnixMilli(r.StartsAt())), 0) // a jittered run is late from its start_after
			o.RunStarted(r.TriggerKind, waited)
			if waitedForCap(r) {
				o.CapWaited(r.App, waited)
			}
		}
		for _, a := range rs.Attempts {
			if a.ExecutorID != 0 { // 0: held back by a cap, placed later
				addTarget(targets, r.App, a.ExecutorID)
			}
		}
	}
	for app, ids := range targets {
		s.pushExecutors(ctx, st.epoch, execs[app], keys(ids))
	}
	return nil
}

// waitedForCap reports whether pending run r showed that it waits for room
// under a concurrency cap (settleCapped).
func waitedForCap(r store.PendingRun) bool {
	if r.ErrorMsg.Code != msg.RunWaiting {
		return false
	}
	cause, ok := r.ErrorMsg.Nested("cause")
	return ok && (cause.Code == msg.CauseAppCap || cause.Code == msg.CauseJobCap || cause.Code == msg.CausePlatformCap)
}

// unplaceableCause says why a run has no executor, for a person.
func unplaceableCause(r store.PendingRun, execs []store.Executor) msg.Msg {
	if len(execs) == 0 {
		return msg.New(msg.CauseNoExecutor, "app", r.App)
	}
	return msg.New(msg.CauseNoHandler, "app", r.App, "handler", r.Handler, "online", len(execs))
}

// waitingRuns are pending runs of a page that cannot start, for one cause.
type waitingRuns struct {
	cause msg.Msg
	runs  []store.PendingRun
}

// unplaceable records that r cannot start yet, for settleWaiting.
func (st *starter) unplaceable(r store.PendingRun, cause msg.Msg) {
	st.waiting = addWaiting(st.waiting, r, cause)
}

// addWaiting adds r to the runs of m waiting for cause (m made when nil).
func addWaiting(m map[string]*waitingRuns, r store.PendingRun, cause msg.Msg) map[string]*waitingRuns {
	if m == nil {
		m = map[string]*waitingRuns{}
	}
	w := m[cause.String()]
	if w == nil {
		w = &waitingRuns{cause: cause}
		m[cause.String()] = w
	}
	w.runs = append(w.runs, r)
	return m
}

// settleWaiting deals with the page's runs that no executor can run: those
// waiting longer than UnplaceableTimeout fail with the reason; the others
// show the reason (written once, not at every round). Either raises a
// run_unplaceable alarm, one per app, handler and hour (a herd of such runs
// is one alarm, not thousands).
func (st *starter) settleWaiting(ctx context.Context) error {
	s := st.s
	now := s.cfg.Clock.Now()
	for _, w := range st.waiting {
		runs, reason := w.runs, msg.New(msg.RunWaiting, "cause", w.cause)
		var mark, fail []int64
		for _, r := range runs {
			switch {
			case now.Sub(time.UnixMilli(r.StartsAt())) >= s.cfg.UnplaceableTimeout:
				fail = append(fail, r.ID)
			case r.Error != reason.String():
				mark = append(mark, r.ID)
			}
		}
		r := runs[0]
		if len(mark) > 0 {
			if err := s.store.MarkWaiting(ctx, reason, mark); err != nil {
				return err
			}
			s.raiseUnplaceable(ctx, r, "warning", now, msg.New(msg.AlarmRunsWaiting, "runs", len(mark), "app", r.App, "run", r.ID, "job", r.JobName,
				"reason", reason, "timeout", s.cfg.UnplaceableTimeout))
		}
		if len(fail) > 0 {
			why := msg.New(msg.RunUnplaceableFailed, "cause", w.cause, "timeout", s.cfg.UnplaceableTimeout)
			if err := s.store.FailPending(ctx, why, now.UnixMilli(), fail); err != nil {
				return err
			}
			s.log.Warn("runs failed: no executor could run them", "runs", len(fail), "app", r.App, "handler", r.Handler, "reason", reason.String())
			s.raiseUnplaceable(ctx, r, "critical", now, msg.New(msg.AlarmRunsUnplaceable, "runs", len(fail), "app", r.App, "run", r.ID, "job", r.JobName, "reason", why))
		}
	}
	st.waiting = nil
	return nil
}

// raiseUnplaceable raises the run_unplaceable alarm of r's app and handler
// for this hour and severity, unless it was raised already.
func (s *Scheduler) raiseUnplaceable(ctx context.Context, r store.PendingRun, severity string, now time.Time, m msg.Msg) {
	_, err := s.store.RaiseAlarm(ctx, store.Alarm{
		Kind: store.AlarmRunUnplaceable, Severity: severity, RaisedBy: s.cfg.ID, App: r.App,
		JobID: sql.NullInt64{Int64: r.JobID, Valid: true}, RunID: sql.NullInt64{Int64: r.ID, Valid: true},
		DedupKey: fmt.Sprintf("run_unplaceable:%s:%s:%s:%s", severity, r.App, r.Handler, now.UTC().Format("2006-01-02T15")),
		Msg:      m,
	})
	if err != nil {
		s.log.Warn("cannot record the run_unplaceable alarm", "err", err)
	}
}

// place decides the executor of each slot of a new run. Without measured
// slot costs it spreads slots in proportion to capacity (placement.Spread);
// once the job's slots have been measured it balances them by predicted
// runtime and executor speed, sticky to last run's owners
// (placement.Balance), and returns the predicted makespan.
func place(jobID int64, slots int, execs []store.Executor, targets []placement.Executor, stats []store.SlotStat) (owners []int64, order []int, predicted time.Duration) {
	order = make([]int, slots)
	for i := range order {
		order[i] = i
	}
	if len(stats) == 0 {
		return placement.Spread(slots, targets, jobID), order, 0
	}
	speed := make(map[int64]float64, len(execs))
	for _, e := range execs {
		speed[e.ID] = e.Speed
	}
	nodes := make([]placement.Node, len(targets))
	for i, t := range targets {
		nodes[i] = placement.Node{ID: t.ID, Capacity: t.Capacity, Speed: speed[t.ID]}
	}
	costs := make([]placement.SlotCost, slots)
	for i := range costs {
		costs[i].Slot = i
	}
	for _, st := range stats {
		if st.Slot < slots {
			costs[st.Slot].Cost = st.CostMS / 1000
			costs[st.Slot].LastOwner = st.LastExecutor.Int64
		}
	}
	plan := placement.Balance(costs, nodes, placement.DefaultMargin)
	if len(plan.Owner) != slots {
		return placement.Spread(slots, targets, jobID), order, 0
	}
	sort.SliceStable(order, func(a, b int) bool { return costs[order[a]].Cost > costs[order[b]].Cost })
	return plan.Owner, order, time.Duration(plan.Makespan * float64(time.Second))
}

// fairShare orders a page of due runs (by priority) so that, within each
// priority, apps take the platform's capacity by their weights
// (fairshare.go) — when it is short for the page; otherwise the page is
// left as it is.
func (st *starter) fairShare(ctx context.Context, page []store.PendingRun, nowMS int64) ([]store.PendingRun, error) {
	if st.s.cfg.MaxRunningSlots <= 0 {
		return page, nil
	}
	var apps []string
	var demand int64
	for _, r := range page {
		apps = append(apps, r.App)
		demand += int64(max(r.SlotCount, 1))
	}
	short, err := st.caps.share(ctx, apps, demand)
	if err != nil || !short {
		return page, err
	}
	c := st.caps
	return fairBySegments(page, func(r store.PendingRun) int { return int(effPriority(r, nowMS, st.s.cfg.PriorityAging)) },
		func(seg []store.PendingRun) []store.PendingRun {
			return fairOrder(seg, func(r store.PendingRun) string { return r.App }, func(r store.PendingRun) int64 { return int64(r.SlotCount) },
				c.appUsed, c.weight)
		}), nil
}

// effPriority is the priority run r starts with at nowMS: its own (its
// job's for a job that runs one at a time: queue, replace), aged by how long
// it has been due.
func effPriority(r store.PendingRun, nowMS int64, aging time.Duration) protocol.Priority {
	p := protocol.Priority(r.Priority)
	if r.OverlapPolicy == string(schedule.OverlapQueue) || r.OverlapPolicy == string(schedule.OverlapReplace) {
		p = protocol.Priority(r.JobPriority)
	}
	return p.Aged(time.Duration(nowMS-r.StartsAt())*time.Millisecond, aging)
}

// byPriority orders a page of due runs (in due order) the most urgent
// first: by priority aged by how long each has been due
// (protocol.Priority.Aged), then in due order. Where room is short — under
// a concurrency cap — the more urgent runs take it first; the runs of a job
// that starts one run at a time (queue, replace) keep their order, as they
// are ordered by the job's priority, which ages with the older run first.
func byPriority(page []store.PendingRun, nowMS int64, aging time.Duration) []store.PendingRun {
	eff := func(r store.PendingRun) protocol.Priority { return effPriority(r, nowMS, aging) }
	if len(page) < 2 {
		return page
	}
	same := true
	for _, r := range page[1:] {
		if eff(r) != eff(page[0]) {
			same = false
			break
		}
	}
	if same {
		return page // the common case: nothing to reorder
	}
	out := slices.Clone(page)
	slices.SortStableFunc(out, func(a, b store.PendingRun) int { return cmp.Compare(eff(b), eff(a)) })
	return out
}
