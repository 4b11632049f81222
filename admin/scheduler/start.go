package scheduler

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/placement"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// pendingPage is how many due pending runs the leader reads at once.
const pendingPage = 2000

// assignBudget bounds the time one tick spends starting runs: with a herd
// due, the loop comes straight back after its other duties (loss
// detection, retries) instead of starving them.
const assignBudget = time.Second

// AssignPending starts the due pending runs: it places their slots on
// online executors of their app that have the handler, starts them in
// transactions of StartBatch runs (store.StartRuns: one epoch check, one
// multi-row insert of attempts), and pushes each executor its new
// attempts, many runs per request. Runs whose app has no such executor stay
// pending.
func (s *Scheduler) AssignPending(ctx context.Context, epoch int64) error {
	_, err := s.assignPending(ctx, epoch)
	return err
}

// assignPending pages through the due pending runs (keyset: a run that
// cannot start does not hide the ones behind it). more is true when it
// stopped at assignBudget with due runs left.
func (s *Scheduler) assignPending(ctx context.Context, epoch int64) (more bool, err error) {
	deadline := time.Now().Add(assignBudget)
	now := s.cfg.Now().UnixMilli()
	st := &starter{s: s, epoch: epoch, online: map[string][]store.Executor{}}
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
		if time.Now().After(deadline) {
			return true, nil
		}
	}
}

// starter starts the runs of pages of pending runs, StartBatch at a time.
type starter struct {
	s      *Scheduler
	epoch  int64
	online map[string][]store.Executor // app → online executors, read once per round

	batch   []store.RunStart
	meta    map[int64]store.PendingRun // run id → run, for the batch
	batched map[int64]bool             // job id → a run of it is in the batch
}

func (st *starter) page(ctx context.Context, page []store.PendingRun) error {
	s := st.s
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
	for _, r := range page {
		if !r.JobExists {
			if _, err := s.store.TransitionRun(ctx, s.store.DB(), r.ID, store.RunPending, store.RunCancelled, s.cfg.Now().UnixMilli(), "job was deleted"); err != nil {
				return err
			}
			continue
		}
		if r.OverlapPolicy == string(schedule.OverlapQueue) || r.OverlapPolicy == string(schedule.OverlapReplace) {
			if st.batched[r.JobID] {
				// An earlier run of the job is in the batch: start it first,
				// so that the policy sees it running (as one run at a time).
				if err := st.flush(ctx); err != nil {
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
			if execs, err = s.store.OnlineExecutors(ctx, r.App, s.cfg.LostAfter.Milliseconds()); err != nil {
				return err
			}
			st.online[r.App] = execs
		}
		targets := targetsFor(execs, r.Handler)
		if len(targets) == 0 {
			continue // stays pending until an executor with the handler is online
		}
		owners, order, predicted := place(r.JobID, r.SlotCount, execs, targets, stats[r.JobID])
		// Attempts are created (and so pushed and queued on the executors)
		// in order: the most expensive slots first, as the placement assumes.
		atts := make([]store.NewAttempt, 0, len(owners))
		for _, slot := range order {
			atts = append(atts, store.NewAttempt{Slot: slot, Attempt: 1, ExecutorID: owners[slot]})
		}
		if st.meta == nil {
			st.meta, st.batched = map[int64]store.PendingRun{}, map[int64]bool{}
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
	return st.flush(ctx)
}

// applyOverlap applies the queue and replace policies to a run about to
// start: queue waits while another run of the job is running (wait true);
// replace cancels the running ones first.
func (st *starter) applyOverlap(ctx context.Context, r store.PendingRun) (wait bool, err error) {
	s := st.s
	running, err := s.store.ListRuns(ctx, store.RunFilter{JobID: r.JobID, Status: store.RunRunning, Limit: 10})
	if err != nil {
		return false, err
	}
	if len(running) > 0 && r.OverlapPolicy == string(schedule.OverlapQueue) {
		return true, nil // queue: start after the running run ends, in order
	}
	for _, old := range running { // replace: cancel the running run, then start
		active, _, err := s.store.CancelRun(ctx, old.ID, fmt.Sprintf("replaced by run %d (overlap policy replace)", r.ID))
		if err != nil {
			return false, err
		}
		s.cancelTokens(ctx, active, "replaced by a newer run")
	}
	return false, nil
}

// flush starts the batched runs in one transaction and pushes their
// executors.
func (st *starter) flush(ctx context.Context) error {
	if len(st.batch) == 0 {
		return nil
	}
	s := st.s
	lease := s.cfg.Now().Add(s.cfg.LostAfter).UnixMilli()
	started, err := s.store.StartRuns(ctx, st.epoch, lease, st.batch)
	if err != nil {
		return err
	}
	isStarted := make(map[int64]bool, len(started))
	for _, id := range started {
		isStarted[id] = true
	}
	now := s.cfg.Now()
	targets := map[string]map[int64]bool{} // app → executors with new attempts
	for _, rs := range st.batch {
		if !isStarted[rs.RunID] {
			continue
		}
		r := st.meta[rs.RunID]
		if o := s.cfg.Observer; o != nil {
			o.RunStarted(r.TriggerKind, max(now.Sub(time.UnixMilli(r.ScheduledAt)), 0))
		}
		if targets[r.App] == nil {
			targets[r.App] = map[int64]bool{}
		}
		for _, a := range rs.Attempts {
			targets[r.App][a.ExecutorID] = true
		}
	}
	for app, ids := range targets {
		s.pushExecutors(ctx, st.epoch, st.online[app], keys(ids))
	}
	st.batch, st.meta, st.batched = st.batch[:0], nil, nil
	return nil
}

func keys(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
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

// targetsFor returns the executors that can run handler.
func targetsFor(execs []store.Executor, handler string) []placement.Executor {
	out := make([]placement.Executor, 0, len(execs))
	for _, e := range execs {
		if hasHandler(e.Handlers, handler) {
			out = append(out, placement.Executor{ID: e.ID, Capacity: e.Capacity})
		}
	}
	return out
}

func hasHandler(list, h string) bool {
	if list == "" {
		return true // executor did not say: let it refuse unknown handlers
	}
	for _, x := range strings.Split(list, ",") {
		if x == h {
			return true
		}
	}
	return false
}
