package scheduler

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/placement"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Pusher sends work to executors (dispatch.Client in production).
type Pusher interface {
	Assign(ctx context.Context, baseURL string, req protocol.AssignRequest) (protocol.AssignResponse, error)
	Cancel(ctx context.Context, baseURL string, req protocol.CancelRequest) error
	Release(ctx context.Context, baseURL string, req protocol.ReleaseRequest) (protocol.ReleaseResponse, error)
}

// Config tunes the leader loop. Zero values take the documented defaults.
type Config struct {
	// ID names this admin replica in the leader record. Required.
	ID string
	// PollInterval is the longest the loop sleeps between ticks. Default 200ms.
	PollInterval time.Duration
	// BatchSize is how many due jobs one transaction claims. Default 1000.
	BatchSize int
	// PreRead creates the runs of firings due within this window ahead of
	// time, so that a herd of jobs due at the same second has its runs
	// before that second; the runs are dispatched at their scheduled time.
	// Default 5s. A job disabled or paused inside the window still runs once.
	PreRead time.Duration
	// MaxPreRead bounds the adaptive window: when more jobs are due within
	// MaxPreRead than the leader can fire within PreRead at the rate it has
	// measured (a thundering herd), it reads further ahead so that the
	// herd's runs exist before their second. Default 30s.
	MaxPreRead time.Duration
	// HeartbeatInterval is the executors' heartbeat period. Default 2s.
	HeartbeatInterval time.Duration
	// LostAfter is the heartbeat silence after which an executor is lost.
	// Default 3 × HeartbeatInterval.
	LostAfter time.Duration
	// FireWorkers is how many claim transactions run at once when there is
	// a backlog (a herd); SKIP LOCKED gives each a disjoint batch. Default 2.
	// SQLite always uses 1.
	FireWorkers int
	// RetryBackoffCap caps the delay before a failed slot is retried.
	// Delays are "full jitter": uniform in [0, min(cap, base × 2^(attempt-1))],
	// base being the job's retry_backoff_ms. Default 10 minutes.
	RetryBackoffCap time.Duration
	// DisableWorkStealing turns off work stealing: by default executors with
	// free capacity take over slots other executors of the app have queued
	// but not started, after the queuing executor released them (see
	// StealWork: a slot never runs twice because of it).
	DisableWorkStealing bool
	// PushConcurrency bounds parallel pushes. Default 16.
	PushConcurrency int
	// Observer is told when runs start, for metrics (admin/metrics).
	// Optional: nil observes nothing.
	Observer Observer
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock used to decide what is due. Default time.Now.
	Now func() time.Time
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.PollInterval <= 0 {
		c.PollInterval = 200 * time.Millisecond
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 1000
	}
	if c.PreRead <= 0 {
		c.PreRead = 5 * time.Second
	}
	if c.MaxPreRead < c.PreRead {
		c.MaxPreRead = max(30*time.Second, c.PreRead)
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 2 * time.Second
	}
	if c.LostAfter <= 0 {
		c.LostAfter = 3 * c.HeartbeatInterval
	}
	if c.FireWorkers <= 0 {
		c.FireWorkers = 2
	}
	if c.RetryBackoffCap <= 0 {
		c.RetryBackoffCap = 10 * time.Minute
	}
	if c.PushConcurrency <= 0 {
		c.PushConcurrency = 16
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Observer receives scheduler events for metrics. Its methods are called
// from the leader loop and must return promptly.
type Observer interface {
	// RunStarted: the slots of a run were assigned and their push begun,
	// lag after the run's scheduled time (never negative).
	RunStarted(trigger string, lag time.Duration)
}

// Scheduler is the leader loop. Create it with New; call Lead for each term.
type Scheduler struct {
	cfg   Config
	store *store.Store
	push  Pusher
	log   *slog.Logger
	wake  chan struct{}

	mu     sync.Mutex
	scheds map[int64]cachedSchedule // job id → parsed schedule
	stats  Stats

	// Pushes run in the background so that an executor that does not answer
	// (frozen, partitioned) cannot stall the loop for the push timeout: lost
	// executors are still detected on time and other runs still dispatched.
	pushMu   sync.Mutex
	pushing  map[pushKey]*pushJob // pushes in flight
	pushSem  chan struct{}        // bounds pushes in flight to PushConcurrency
	pushWG   sync.WaitGroup
	stealing bool // a work-stealing round is in flight

	// Adaptive pre-read (leader loop goroutine only).
	window   time.Duration // current pre-read window
	windowAt time.Time     // when window was computed
	rate     float64       // measured firings/s while draining a backlog (EWMA)
}

// pushKey identifies a background push: one run's slots to one executor.
type pushKey struct{ run, executor int64 }

// pushJob is a background push; again asks it to push once more when it is
// done (the run got new assignments on that executor meanwhile).
type pushJob struct {
	epoch int64
	execs []store.Executor
	again bool
}

type cachedSchedule struct {
	version int64
	s       *schedule.Schedule
}

// Stats counts what the leader did (for tests, metrics and the console).
type Stats struct {
	Fired            int64 // runs created by cron
	Skipped          int64 // firings recorded as skipped
	DuplicateFirings int64 // inserts dropped by the unique run key
	Reassigned       int64 // slots moved off lost executors
	StaleAborts      int64 // transactions refused by the epoch fence
	Retried          int64 // failed slots given another attempt
	Stolen           int64 // queued slots moved to an idle executor
}

// New returns a Scheduler.
func New(cfg Config, st *store.Store, push Pusher) (*Scheduler, error) {
	cfg = cfg.WithDefaults()
	if cfg.ID == "" {
		return nil, errors.New("scheduler: Config.ID is required (the admin replica id)")
	}
	if st == nil || push == nil {
		return nil, errors.New("scheduler: store and pusher are required")
	}
	return &Scheduler{cfg: cfg, store: st, push: push, log: cfg.Logger, wake: make(chan struct{}, 1),
		scheds: map[int64]cachedSchedule{}, pushing: map[pushKey]*pushJob{}, pushSem: make(chan struct{}, cfg.PushConcurrency), window: cfg.PreRead, rate: 5000}, nil
}

// Stats returns a snapshot of the counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Wake makes the loop tick now (after a job was created or triggered).
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Lead runs the leader loop for one term until ctx ends or the epoch is
// taken by another admin. It first records the epoch in the database.
func (s *Scheduler) Lead(ctx context.Context, epoch int64) {
	log := s.log.With("epoch", epoch)
	ok, err := s.store.ClaimEpoch(ctx, epoch, s.cfg.ID)
	if err != nil {
		log.Error("cannot record leader epoch; not leading this term", "err", err)
		return
	}
	if !ok {
		rec, _ := s.store.Leader(ctx)
		log.Warn("a larger or equal epoch is already recorded; not leading this term", "recorded_epoch", rec.Epoch, "holder", rec.Holder)
		return
	}
	log.Info("leading")
	defer log.Info("stopped leading")
	if _, err := s.store.RaiseAlarm(ctx, store.Alarm{
		Kind: store.AlarmLeaderChange, Severity: "info", RaisedBy: s.cfg.ID,
		DedupKey: fmt.Sprintf("leader_change:%d", epoch),
		Message:  fmt.Sprintf("admin replica %s leads the scheduler (epoch %d)", s.cfg.ID, epoch),
	}); err != nil {
		log.Warn("cannot record the leader_change alarm", "err", err)
	}
	defer s.WaitPushes() // ctx is done: pushes in flight end promptly
	lastRecover := time.Time{}
	for {
		if err := s.tick(ctx, epoch, &lastRecover); err != nil {
			if errors.Is(err, store.ErrStaleEpoch) {
				s.count(func(st *Stats) { st.StaleAborts++ })
				log.Warn("epoch fence refused a write: another admin leads; stepping down", "err", err)
				return
			}
			if ctx.Err() != nil {
				return
			}
			log.Error("scheduler tick failed", "err", err)
		}
		wait := s.nextWait(ctx)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// nextWait is how long the loop may sleep: until the next job enters the
// pre-read window or the next early-created run is due, at most PollInterval.
func (s *Scheduler) nextWait(ctx context.Context) time.Duration {
	wait := s.cfg.PollInterval
	now := s.cfg.Now()
	if next, err := s.store.NextDue(ctx); err == nil && next.Valid {
		wait = min(wait, time.UnixMilli(next.Int64).Add(-s.window).Sub(now))
	}
	if next, err := s.store.NextPendingAfter(ctx, now.UnixMilli()); err == nil && next.Valid {
		wait = min(wait, time.UnixMilli(next.Int64).Sub(now))
	}
	return max(wait, time.Millisecond)
}

func (s *Scheduler) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

func (s *Scheduler) tick(ctx context.Context, epoch int64, lastRecover *time.Time) error {
	if err := s.fireAll(ctx, epoch); err != nil {
		return err
	}
	if err := s.AssignPending(ctx, epoch); err != nil {
		return err
	}
	if err := s.RetryFailed(ctx, epoch); err != nil {
		return err
	}
	if err := s.PlaceUnplaced(ctx, epoch); err != nil {
		return err
	}
	if !s.cfg.DisableWorkStealing {
		if err := s.StealWork(ctx, epoch); err != nil {
			return err
		}
	}
	if time.Since(*lastRecover) >= s.cfg.HeartbeatInterval/2 {
		*lastRecover = time.Now()
		// Drains change rarely: look for them at the pace of loss
		// detection, not on every tick of the loop.
		if err := s.DrainRequested(ctx); err != nil {
			return err
		}
		if err := s.RecoverLost(ctx, epoch); err != nil {
			return err
		}
	}
	return nil
}

// preRead returns the pre-read window: PreRead, widened up to MaxPreRead
// when a herd is coming that would take longer than PreRead to fire at the
// measured rate. It is recomputed at most once a second.
func (s *Scheduler) preRead(ctx context.Context, now time.Time) time.Duration {
	if s.cfg.MaxPreRead <= s.cfg.PreRead || now.Sub(s.windowAt) < time.Second && now.After(s.windowAt) {
		return s.window
	}
	s.windowAt = now
	n, err := s.store.CountDue(ctx, now.Add(s.cfg.MaxPreRead).UnixMilli())
	if err != nil {
		return s.window
	}
	need := time.Duration(float64(n) / s.rate * 1.5 * float64(time.Second))
	w := min(max(need, s.cfg.PreRead), s.cfg.MaxPreRead)
	if w != s.window && (w > s.cfg.PreRead || s.window > s.cfg.PreRead) {
		s.log.Info("pre-read window adjusted for a herd of due jobs", "window", w.Round(time.Millisecond), "due_within_max", n, "rate_per_s", int(s.rate))
	}
	s.window = w
	return w
}

// fireAll fires batches until fewer than a full batch is due. When the
// first batch is full there is a backlog, and FireWorkers transactions
// drain it in parallel.
func (s *Scheduler) fireAll(ctx context.Context, epoch int64) error {
	start := time.Now()
	window := s.preRead(ctx, s.cfg.Now())
	n, err := s.fireDue(ctx, epoch, window)
	if err != nil || n < s.cfg.BatchSize {
		return err
	}
	fired := int64(n)
	var firedMu sync.Mutex
	defer func() {
		if d := time.Since(start).Seconds(); d > 0.2 {
			s.rate = 0.7*s.rate + 0.3*float64(fired)/d
		}
	}()
	workers := s.cfg.FireWorkers
	if s.store.Dialect() == "sqlite" {
		workers = 1
	}
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for {
				n, err := s.fireDue(ctx, epoch, window)
				firedMu.Lock()
				fired += int64(n)
				firedMu.Unlock()
				if err != nil || n < s.cfg.BatchSize {
					errs <- err
					return
				}
			}
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *Scheduler) scheduleOf(j store.Job) (*schedule.Schedule, error) {
	s.mu.Lock()
	c, ok := s.scheds[j.ID]
	s.mu.Unlock()
	if ok && c.version == j.Version {
		return c.s, nil
	}
	sc, err := jobdef.ScheduleOf(j)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.scheds[j.ID] = cachedSchedule{version: j.Version, s: sc}
	s.mu.Unlock()
	return sc, nil
}

// FireDue claims one batch of due jobs (due now or within PreRead) and
// creates their runs, in one transaction fenced by epoch. It returns how
// many jobs it claimed.
func (s *Scheduler) FireDue(ctx context.Context, epoch int64) (int, error) {
	return s.fireDue(ctx, epoch, s.cfg.PreRead)
}

func (s *Scheduler) fireDue(ctx context.Context, epoch int64, window time.Duration) (int, error) {
	now := s.cfg.Now()
	var claimed, fired, skipped, dup int64
	err := s.store.Tx(ctx, func(tx *sqlx.Tx) error {
		claimed, fired, skipped, dup = 0, 0, 0, 0
		if err := s.store.CheckEpoch(ctx, tx, epoch); err != nil {
			return err
		}
		jobs, err := s.store.ClaimDue(ctx, tx, now.Add(window).UnixMilli(), s.cfg.BatchSize)
		if err != nil || len(jobs) == 0 {
			return err
		}
		claimed = int64(len(jobs))
		var guarded []int64
		for _, j := range jobs {
			if j.OverlapPolicy != string(schedule.OverlapAllow) {
				guarded = append(guarded, j.ID)
			}
		}
		active, err := s.store.ActiveJobs(ctx, tx, guarded)
		if err != nil {
			return err
		}
		runs := make([]store.NewRun, 0, len(jobs))
		next := make(map[int64]sql.NullInt64, len(jobs))
		for _, j := range jobs {
			sc, err := s.scheduleOf(j)
			if err != nil {
				// A stored schedule that no longer parses (e.g. zone data
				// changed): stop firing it and say why, rather than loop.
				s.log.Error("job schedule is invalid; disabling its firing", "job_id", j.ID, "job", j.App+"/"+j.Name, "err", err)
				next[j.ID] = sql.NullInt64{}
				continue
			}
			// A firing inside the pre-read window is planned as if it were
			// due now: on time, fired ahead, dispatched at its time.
			due := time.UnixMilli(j.NextFireAt.Int64)
			d := schedule.Plan(sc, due, later(now, due), schedule.MisfireConfig{
				Policy:     schedule.MisfirePolicy(j.MisfirePolicy),
				Threshold:  time.Duration(j.MisfireMS) * time.Millisecond,
				MaxCatchUp: j.MaxCatchUp,
			})
			next[j.ID] = sql.NullInt64{}
			if !d.Next.IsZero() {
				next[j.ID] = sql.NullInt64{Int64: d.Next.UnixMilli(), Valid: true}
			}
			kind := store.TriggerCron
			if d.Misfired && j.MisfirePolicy == string(schedule.MisfireCatchUp) {
				kind = store.TriggerCatchUp
			}
			busy := active[j.ID]
			for _, at := range d.Fire {
				r := store.NewRunOf(j, at.UnixMilli(), kind, store.RunPending)
				switch schedule.DecideOverlap(schedule.OverlapPolicy(j.OverlapPolicy), busy) {
				case schedule.ActionSkip:
					r.Status, r.Error = store.RunSkipped, "overlap policy skip: the previous run is still active"
					skipped++
				default:
					// start, queue and replace all create a pending run; the
					// assigner applies queue and replace when it starts runs.
					fired++
				}
				busy = busy || r.Status == store.RunPending
				runs = append(runs, r)
			}
			for _, at := range d.Skipped {
				r := store.NewRunOf(j, at.UnixMilli(), kind, store.RunSkipped)
				r.Error = fmt.Sprintf("misfire policy %s: firing was late by more than %dms", j.MisfirePolicy, j.MisfireMS)
				runs = append(runs, r)
				skipped++
			}
			if extra := d.SkippedCount - len(d.Skipped); extra > 0 {
				s.log.Warn("misfire: more skipped firings than are recorded one by one", "job_id", j.ID, "unrecorded", extra)
			}
		}
		n, err := s.store.InsertRuns(ctx, tx, epoch, runs)
		if err != nil {
			return err
		}
		dup = int64(len(runs)) - n
		return s.store.SetNextFire(ctx, tx, next)
	})
	if err != nil {
		return 0, err
	}
	if dup > 0 {
		s.log.Warn("run key already existed: duplicate firings dropped by the unique key", "count", dup)
	}
	s.count(func(st *Stats) { st.Fired += fired; st.Skipped += skipped; st.DuplicateFirings += dup })
	return int(claimed), nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// AssignPending places the slots of pending runs on online executors and
// pushes them.
func (s *Scheduler) AssignPending(ctx context.Context, epoch int64) error {
	runs, err := s.store.PendingRuns(ctx, s.cfg.Now().UnixMilli(), 200)
	if err != nil {
		return err
	}
	online := map[string][]store.Executor{}
	for _, r := range runs {
		job, err := s.store.Job(ctx, r.JobID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				_, err = s.store.TransitionRun(ctx, s.store.DB(), r.ID, store.RunPending, store.RunCancelled, s.cfg.Now().UnixMilli(), "job was deleted")
			}
			if err != nil {
				return err
			}
			continue
		}
		if job.OverlapPolicy == string(schedule.OverlapQueue) || job.OverlapPolicy == string(schedule.OverlapReplace) {
			running, err := s.store.ListRuns(ctx, store.RunFilter{JobID: job.ID, Status: store.RunRunning, Limit: 10})
			if err != nil {
				return err
			}
			if len(running) > 0 && job.OverlapPolicy == string(schedule.OverlapQueue) {
				continue // queue: start after the running run ends, in order
			}
			for _, old := range running { // replace: cancel the running run, then start
				active, _, err := s.store.CancelRun(ctx, old.ID, fmt.Sprintf("replaced by run %d (overlap policy replace)", r.ID))
				if err != nil {
					return err
				}
				s.cancelTokens(ctx, active, "replaced by a newer run")
			}
		}
		execs, ok := online[r.App]
		if !ok {
			execs, err = s.store.OnlineExecutors(ctx, r.App, s.cfg.LostAfter.Milliseconds())
			if err != nil {
				return err
			}
			online[r.App] = execs
		}
		targets := targetsFor(execs, job.Handler)
		if len(targets) == 0 {
			continue // stays pending until an executor with the handler is online
		}
		owners, order, predicted, err := s.place(ctx, job, r.SlotCount, execs, targets)
		if err != nil {
			return err
		}
		// Attempts are created (and so pushed and queued on the executors)
		// in order: the most expensive slots first, as the placement assumes.
		atts := make([]store.NewAttempt, 0, len(owners))
		for _, slot := range order {
			atts = append(atts, store.NewAttempt{Slot: slot, Attempt: 1, ExecutorID: owners[slot]})
		}
		lease := s.cfg.Now().Add(s.cfg.LostAfter).UnixMilli()
		started, err := s.store.StartRun(ctx, epoch, r.ID, lease, atts)
		if err != nil {
			return err
		}
		if started {
			if o := s.cfg.Observer; o != nil {
				o.RunStarted(r.TriggerKind, max(s.cfg.Now().Sub(time.UnixMilli(r.ScheduledAt)), 0))
			}
			if predicted > 0 {
				if err := s.store.SetPredicted(ctx, r.ID, predicted.Milliseconds()); err != nil {
					s.log.Warn("record predicted makespan", "run_id", r.ID, "err", err)
				}
			}
			s.pushInBackground(ctx, epoch, r.ID, execs)
		}
	}
	return nil
}

// place decides the executor of each slot of a new run. Without measured
// slot costs it spreads slots in proportion to capacity (placement.Spread);
// once the job's slots have been measured it balances them by predicted
// runtime and executor speed, sticky to last run's owners
// (placement.Balance), and returns the predicted makespan.
func (s *Scheduler) place(ctx context.Context, job store.Job, slots int, execs []store.Executor, targets []placement.Executor) (owners []int64, order []int, predicted time.Duration, err error) {
	order = make([]int, slots)
	for i := range order {
		order[i] = i
	}
	stats, err := s.store.SlotStats(ctx, job.ID)
	if err != nil {
		return nil, nil, 0, err
	}
	if len(stats) == 0 {
		return placement.Spread(slots, targets, job.ID), order, 0, nil
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
		return placement.Spread(slots, targets, job.ID), order, 0, nil
	}
	sort.SliceStable(order, func(a, b int) bool { return costs[order[a]].Cost > costs[order[b]].Cost })
	return plan.Owner, order, time.Duration(plan.Makespan * float64(time.Second)), nil
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

// pushInBackground pushes a run's unacknowledged attempts, one request per
// executor, each in a goroutine of its own, so that an executor that does
// not answer (frozen, partitioned) delays neither the loop nor the pushes to
// other executors. One push per (run, executor) is in flight at a time;
// asking again while it runs makes it push once more when it is done (the
// run got new assignments there meanwhile). A push that fails moves those
// slots to the other executors of execs right away. ctx ends the pushes
// (the leader loop's context: a replica that stops leading stops pushing);
// WaitPushes waits for them.
func (s *Scheduler) pushInBackground(ctx context.Context, epoch, runID int64, execs []store.Executor) {
	slots, err := s.store.DispatchOfRun(ctx, runID)
	if err != nil {
		s.log.Error("load assignments to push", "run_id", runID, "err", err)
		return
	}
	byExec := map[int64][]store.DispatchSlot{}
	for _, d := range slots {
		byExec[d.ExecutorID.Int64] = append(byExec[d.ExecutorID.Int64], d)
	}
	for exID, ds := range byExec {
		key := pushKey{run: runID, executor: exID}
		s.pushMu.Lock()
		if job, ok := s.pushing[key]; ok {
			job.again, job.execs, job.epoch = true, execs, epoch
			s.pushMu.Unlock()
			continue
		}
		job := &pushJob{epoch: epoch, execs: execs}
		s.pushing[key] = job
		s.pushWG.Add(1)
		s.pushMu.Unlock()
		go s.pushLoop(ctx, key, job, ds)
	}
}

// pushLoop pushes ds, then again while asked to.
func (s *Scheduler) pushLoop(ctx context.Context, key pushKey, job *pushJob, ds []store.DispatchSlot) {
	defer s.pushWG.Done()
	for {
		s.pushMu.Lock()
		epoch, execs := job.epoch, job.execs
		job.again = false
		s.pushMu.Unlock()
		if len(ds) > 0 {
			s.pushTo(ctx, epoch, key, ds, execs)
		}
		s.pushMu.Lock()
		if !job.again || ctx.Err() != nil {
			delete(s.pushing, key)
			s.pushMu.Unlock()
			return
		}
		s.pushMu.Unlock()
		all, err := s.store.DispatchOfRun(ctx, key.run)
		if err != nil {
			s.log.Error("load assignments to push", "run_id", key.run, "err", err)
		}
		ds = ds[:0]
		for _, d := range all {
			if d.ExecutorID.Int64 == key.executor {
				ds = append(ds, d)
			}
		}
	}
}

// pushTo sends one executor its unacknowledged attempts of a run and records
// which tokens it accepted. If the push fails, the slots move to the other
// executors of execs with new tokens (the failed executor may be down; if
// it is alive it learns from its next heartbeat that the tokens are no
// longer its own), and are pushed there; with no other executor they wait
// for heartbeats.
func (s *Scheduler) pushTo(ctx context.Context, epoch int64, key pushKey, ds []store.DispatchSlot, execs []store.Executor) {
	addr := ""
	var others []store.Executor
	for _, e := range execs {
		if e.ID == key.executor {
			addr = e.Address
		} else {
			others = append(others, e)
		}
	}
	if addr == "" {
		e, err := s.store.ExecutorByID(ctx, key.executor)
		if err != nil {
			return // heartbeat responses deliver the slots
		}
		addr = e.Address
	}
	select {
	case s.pushSem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	resp, err := s.push.Assign(ctx, addr, protocol.AssignRequest{Assignments: BuildAssignments(ds)})
	<-s.pushSem
	if err == nil {
		if err := s.store.AckAttempts(ctx, key.executor, resp.Accepted); err != nil {
			s.log.Error("record acknowledged tokens", "executor_id", key.executor, "err", err)
		}
		return
	}
	s.log.Warn("push failed", "executor_id", key.executor, "address", addr, "run_id", key.run, "err", err)
	if ctx.Err() != nil {
		return
	}
	moved := 0
	for _, d := range ds {
		targets := targetsFor(others, d.Handler)
		if len(targets) == 0 {
			continue
		}
		to := placement.Spread(1, targets, d.RunID+int64(d.Slot))[0]
		tok, err := s.store.Reassign(ctx, epoch, store.Attempt{ID: d.Token, RunID: d.RunID, Slot: d.Slot, Attempt: d.Attempt, Failures: d.Failures}, to, s.cfg.Now().Add(s.cfg.LostAfter).UnixMilli())
		if err != nil {
			s.log.Error("move slot after a failed push", "run_id", key.run, "slot", d.Slot, "err", err)
			continue
		}
		if tok > 0 {
			moved++
			s.count(func(st *Stats) { st.Reassigned++ })
		}
	}
	if moved > 0 {
		s.log.Warn("push failed: slots moved to other executors", "executor_id", key.executor, "run_id", key.run, "moved", moved)
		s.pushInBackground(ctx, epoch, key.run, others)
	}
}

// inBackground runs f in a goroutine that WaitPushes waits for.
func (s *Scheduler) inBackground(f func()) {
	s.pushWG.Add(1)
	go func() {
		defer s.pushWG.Done()
		f()
	}()
}

// WaitPushes waits for the pushes, cancellations and work-stealing rounds
// started in the background (by AssignPending, RecoverLost, PlaceUnplaced,
// StealWork) to finish.
func (s *Scheduler) WaitPushes() { s.pushWG.Wait() }

// cancelTokens pushes cancellations in the background, one request per
// executor. A lost cancellation is not a problem: the executor learns at its
// next heartbeat that the tokens are no longer current.
func (s *Scheduler) cancelTokens(ctx context.Context, active []store.ActiveToken, reason string) {
	byAddr := map[string][]int64{}
	for _, a := range active {
		byAddr[a.Address] = append(byAddr[a.Address], a.Token)
	}
	for addr, tokens := range byAddr {
		s.inBackground(func() {
			if err := s.push.Cancel(ctx, addr, protocol.CancelRequest{Tokens: tokens, Reason: reason}); err != nil {
				s.log.Warn("cancel push failed; the executor learns it at its next heartbeat", "address", addr, "err", err)
			}
		})
	}
}

// BuildAssignments groups dispatch rows by run into wire assignments.
func BuildAssignments(ds []store.DispatchSlot) []protocol.RunAssignment {
	var out []protocol.RunAssignment
	index := map[int64]int{}
	params := map[int64]map[int]string{}
	for _, d := range ds {
		i, ok := index[d.RunID]
		if !ok {
			i = len(out)
			index[d.RunID] = i
			out = append(out, protocol.RunAssignment{
				RunID: d.RunID, JobID: d.JobID, JobName: d.JobName, Handler: d.Handler,
				ScheduledAt: d.ScheduledAt, Params: d.Params, Total: d.SlotCount, TimeoutMS: d.TimeoutMS,
				Records: recordsPolicy(d),
			})
			params[d.RunID], _ = jobdef.ParseSlotParams(d.SlotParams, d.SlotCount)
		}
		out[i].Slots = append(out[i].Slots, protocol.SlotAssignment{Slot: d.Slot, Token: d.Token, Attempt: d.Attempt, Param: params[d.RunID][d.Slot]})
	}
	return out
}

// recordsPolicy is the records policy of d's job for d's run, nil when the
// job leaves every choice to its handler.
func recordsPolicy(d store.DispatchSlot) *protocol.RecordsPolicy {
	if d.DedupScope == "" && d.UncertainPolicy == "" && d.RecordMaxAttempts == 0 {
		return nil
	}
	return &protocol.RecordsPolicy{
		Scope:       jobdef.ResolveDedupScope(d.DedupScope, d.TimeZone, d.ScheduledAt),
		Uncertain:   d.UncertainPolicy,
		MaxAttempts: d.RecordMaxAttempts,
	}
}

// RecoverLost marks silent executors lost and moves their unfinished slots
// to online executors of the same app with new, larger tokens.
func (s *Scheduler) RecoverLost(ctx context.Context, epoch int64) error {
	n, err := s.store.MarkLostExecutors(ctx, s.cfg.LostAfter.Milliseconds())
	if err != nil {
		return err
	}
	if n > 0 {
		s.log.Warn("executors lost (no heartbeat)", "count", n, "after", s.cfg.LostAfter)
	}
	lost, err := s.store.LostAttempts(ctx, 1000)
	if err != nil || len(lost) == 0 {
		return err
	}
	runs := map[int64]store.Run{}
	handlers := map[int64]string{}
	online := map[string][]store.Executor{}
	moved := map[int64]bool{}
	for _, a := range lost {
		r, ok := runs[a.RunID]
		if !ok {
			if r, err = s.store.Run(ctx, a.RunID); err != nil {
				return err
			}
			runs[a.RunID] = r
			job, err := s.store.Job(ctx, r.JobID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			handlers[a.RunID] = job.Handler
		}
		execs, ok := online[r.App]
		if !ok {
			if execs, err = s.store.OnlineExecutors(ctx, r.App, s.cfg.LostAfter.Milliseconds()); err != nil {
				return err
			}
			online[r.App] = execs
		}
		targets := targetsFor(execs, handlers[a.RunID])
		if len(targets) == 0 {
			continue // nobody to take it yet; try next tick
		}
		to := placement.Spread(1, targets, a.RunID+int64(a.Slot))[0]
		lease := s.cfg.Now().Add(s.cfg.LostAfter).UnixMilli()
		tok, err := s.store.Reassign(ctx, epoch, a, to, lease)
		if err != nil {
			return err
		}
		if tok > 0 {
			moved[a.RunID] = true
			s.count(func(st *Stats) { st.Reassigned++ })
			s.log.Info("slot moved off lost executor", "run_id", a.RunID, "slot", a.Slot, "old_token", a.ID, "new_token", tok, "executor_id", to)
		}
	}
	for runID := range moved {
		s.pushInBackground(ctx, epoch, runID, online[runs[runID].App])
	}
	return nil
}

// FireAll fires everything due now (as the leader loop does each tick),
// with FireWorkers transactions in parallel when there is a backlog.
func (s *Scheduler) FireAll(ctx context.Context, epoch int64) error { return s.fireAll(ctx, epoch) }

// RetryDelay is the full-jitter backoff after the `attempt`-th failed attempt
// of a slot: uniform in [0, min(cap, base·2^(attempt-1))].
// The "random" fraction is derived from the failed token, so every replica
// and every scan computes the same delay for the same attempt.
func RetryDelay(token int64, attempt int, base, cap time.Duration) time.Duration {
	if base <= 0 {
		return 0
	}
	ceiling := base
	for i := 1; i < attempt && ceiling < cap; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, cap)
	// splitmix64 of the token: a well-mixed, deterministic fraction in [0,1).
	z := uint64(token) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	frac := float64(z>>11) / float64(1<<53)
	return time.Duration(frac * float64(ceiling))
}

// RetryFailed creates the next attempt of failed slots whose job allows
// more attempts, once their backoff has passed. The new attempts are placed
// by PlaceUnplaced, preferably on another executor.
func (s *Scheduler) RetryFailed(ctx context.Context, epoch int64) error {
	cands, err := s.store.RetryCandidates(ctx, 1000)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	for _, c := range cands {
		delay := RetryDelay(c.ID, c.Failures+1, time.Duration(c.RetryBackoffMS)*time.Millisecond, s.cfg.RetryBackoffCap)
		if c.FinishedAt.Valid && time.UnixMilli(c.FinishedAt.Int64).Add(delay).After(now) {
			continue
		}
		tok, err := s.store.Retry(ctx, epoch, c)
		if err != nil {
			return err
		}
		if tok > 0 {
			s.count(func(st *Stats) { st.Retried++ })
			s.log.Info("retrying failed slot", "run_id", c.RunID, "slot", c.Slot, "attempt", c.Attempt+1, "old_token", c.ID, "new_token", tok, "after", delay.Round(time.Millisecond))
		}
	}
	return nil
}

// PlaceUnplaced puts attempts waiting for an executor (retries, manual
// retries from the API) on online executors of their app that have the
// handler — another executor than the previous attempt's when there is one
// — and pushes them.
func (s *Scheduler) PlaceUnplaced(ctx context.Context, epoch int64) error {
	waiting, err := s.store.UnplacedAttempts(ctx, 1000)
	if err != nil || len(waiting) == 0 {
		return err
	}
	online := map[string][]store.Executor{}
	placed := map[int64]bool{}
	for _, u := range waiting {
		execs, ok := online[u.App]
		if !ok {
			if execs, err = s.store.OnlineExecutors(ctx, u.App, s.cfg.LostAfter.Milliseconds()); err != nil {
				return err
			}
			online[u.App] = execs
		}
		targets := targetsFor(execs, u.Handler)
		if len(targets) > 1 && u.PreviousExecutor.Valid {
			others := targets[:0:0]
			for _, t := range targets {
				if t.ID != u.PreviousExecutor.Int64 {
					others = append(others, t)
				}
			}
			targets = others
		}
		if len(targets) == 0 {
			continue // waits for an executor with the handler
		}
		to := placement.Spread(1, targets, u.RunID+int64(u.Slot)+int64(u.Attempt))[0]
		ok, err = s.store.PlaceAttempt(ctx, u.ID, to, s.cfg.Now().Add(s.cfg.LostAfter).UnixMilli())
		if err != nil {
			return err
		}
		if ok {
			placed[u.RunID] = true
		}
	}
	for runID := range placed {
		var app string
		for _, u := range waiting {
			if u.RunID == runID {
				app = u.App
			}
		}
		s.pushInBackground(ctx, epoch, runID, online[app])
	}
	return nil
}

// StealWork gives idle capacity the slots other executors of the same app
// have accepted but not started (queued behind their capacity): an executor
// that joins mid-run, or finishes early, takes over unstarted slots at once.
// From the executor with the most queued slots it takes at most half of
// them per round (no ping-pong), newest first.
//
// Nothing moves without the victim's consent: the leader asks it to release
// the chosen tokens, the executor gives back only those it has not started
// (atomically: a token is either started there or released), and only the
// released tokens get new attempts on the thief. A slot therefore never
// runs twice because of stealing. The round runs in the background, one at
// a time; a release the leader could not follow up (it stopped leading) is
// finished by the victim's next heartbeat (see store.ReleaseAttempts).
func (s *Scheduler) StealWork(ctx context.Context, epoch int64) error {
	s.pushMu.Lock()
	busy := s.stealing
	s.pushMu.Unlock()
	if busy {
		return nil
	}
	loads, err := s.store.Loads(ctx)
	if err != nil {
		return err
	}
	queuedAnywhere := false
	for _, l := range loads {
		if l.Queued > 0 {
			queuedAnywhere = true
			break
		}
	}
	if !queuedAnywhere {
		return nil
	}
	all, err := s.store.Executors(ctx)
	if err != nil {
		return err
	}
	apps := map[string]bool{}
	for _, e := range all {
		if loads[e.ID].Queued > 0 {
			apps[e.App] = true
		}
	}
	handlers := map[int64]string{} // run id → handler
	var plan []stealPlan
	for app := range apps {
		execs, err := s.store.OnlineExecutors(ctx, app, s.cfg.LostAfter.Milliseconds())
		if err != nil {
			return err
		}
		queued := map[int64]int{}
		for _, e := range execs {
			queued[e.ID] = loads[e.ID].Queued
		}
		taken := map[int64]bool{} // tokens already planned
		victims := map[int64]int{}
		for _, thief := range execs {
			free := thief.Capacity - loads[thief.ID].Active
			for free > 0 {
				var victim *store.Executor
				for i := range execs {
					v := &execs[i]
					if v.ID != thief.ID && queued[v.ID] > 0 && (victim == nil || queued[v.ID] > queued[victim.ID]) {
						victim = v
					}
				}
				if victim == nil {
					break
				}
				take := min(free, (queued[victim.ID]+1)/2)
				atts, err := s.store.QueuedOn(ctx, victim.ID, take+len(taken))
				if err != nil {
					return err
				}
				planned := 0
				for _, a := range atts {
					if planned == take || taken[a.ID] {
						continue
					}
					h, ok := handlers[a.RunID]
					if !ok {
						r, err := s.store.Run(ctx, a.RunID)
						if err != nil {
							return err
						}
						if j, err := s.store.Job(ctx, r.JobID); err == nil {
							h = j.Handler
						}
						handlers[a.RunID] = h
					}
					if !hasHandler(thief.Handlers, h) {
						continue
					}
					i, ok := victims[victim.ID]
					if !ok {
						i = len(plan)
						victims[victim.ID] = i
						plan = append(plan, stealPlan{victim: *victim, execs: execs})
					}
					plan[i].moves = append(plan[i].moves, stealMove{attempt: a, thief: thief.ID})
					taken[a.ID] = true
					planned++
				}
				queued[victim.ID] -= planned
				free -= planned
				if planned == 0 {
					queued[victim.ID] = 0 // nothing this thief can take from it
				}
			}
		}
	}
	if len(plan) == 0 {
		return nil
	}
	s.pushMu.Lock()
	s.stealing = true
	s.pushMu.Unlock()
	s.inBackground(func() {
		defer func() {
			s.pushMu.Lock()
			s.stealing = false
			s.pushMu.Unlock()
		}()
		var wg sync.WaitGroup
		for _, p := range plan {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.stealFrom(ctx, epoch, p)
			}()
		}
		wg.Wait()
	})
	return nil
}

// DrainRequested gives back the queued slots of executors an operator asked
// to drain: the leader asks each to release its queued tokens (in the
// background, one request at a time per executor) and replaces the released
// ones by unplaced attempts, which PlaceUnplaced puts on other executors.
// Running slots finish where they are; drained executors get no new slots
// (store.OnlineExecutors leaves them out).
func (s *Scheduler) DrainRequested(ctx context.Context) error {
	draining, err := s.store.DrainingExecutors(ctx)
	if err != nil || len(draining) == 0 {
		return err
	}
	for _, e := range draining {
		queued, err := s.store.QueuedOn(ctx, e.ID, 1000)
		if err != nil {
			return err
		}
		if len(queued) == 0 {
			continue
		}
		key := pushKey{run: -1, executor: e.ID} // one drain request in flight per executor
		s.pushMu.Lock()
		if _, busy := s.pushing[key]; busy {
			s.pushMu.Unlock()
			continue
		}
		s.pushing[key] = &pushJob{}
		s.pushMu.Unlock()
		tokens := make([]int64, len(queued))
		for i, a := range queued {
			tokens[i] = a.ID
		}
		s.inBackground(func() {
			defer func() {
				s.pushMu.Lock()
				delete(s.pushing, key)
				s.pushMu.Unlock()
			}()
			resp, err := s.push.Release(ctx, e.Address, protocol.ReleaseRequest{Tokens: tokens, Reason: "an operator drains this executor"})
			if err != nil {
				s.log.Warn("drain: release request failed; retrying next tick", "executor_id", e.ID, "err", err)
				return
			}
			n, err := s.store.ReleaseAttempts(ctx, e.ID, resp.Released)
			if err != nil {
				s.log.Error("drain: move released slots", "executor_id", e.ID, "err", err)
				return
			}
			if n > 0 {
				s.log.Info("drain: queued slots given back to be placed elsewhere", "executor_id", e.ID, "slots", n)
				s.Wake()
			}
		})
	}
	return nil
}

// stealPlan is what one round takes from one victim.
type stealPlan struct {
	victim store.Executor
	execs  []store.Executor // online executors of the app (for the pushes)
	moves  []stealMove
}

type stealMove struct {
	attempt store.Attempt
	thief   int64
}

// stealFrom asks the victim to release the planned tokens and moves those it
// released to their thieves.
func (s *Scheduler) stealFrom(ctx context.Context, epoch int64, p stealPlan) {
	tokens := make([]int64, len(p.moves))
	for i, m := range p.moves {
		tokens[i] = m.attempt.ID
	}
	resp, err := s.push.Release(ctx, p.victim.Address, protocol.ReleaseRequest{Tokens: tokens, Reason: "an idle executor of the app takes it"})
	if err != nil {
		s.log.Warn("work stealing: release request failed; nothing moved", "executor_id", p.victim.ID, "address", p.victim.Address, "err", err)
		return
	}
	released := make(map[int64]bool, len(resp.Released))
	for _, t := range resp.Released {
		released[t] = true
	}
	runs := map[int64]bool{}
	for _, m := range p.moves {
		if !released[m.attempt.ID] {
			continue // started meanwhile: it runs where it is
		}
		tok, err := s.store.Steal(ctx, epoch, m.attempt, m.thief, s.cfg.Now().Add(s.cfg.LostAfter).UnixMilli())
		if err != nil {
			// The victim reports the token as released at its next
			// heartbeat, which moves it (store.ReleaseAttempts).
			s.log.Warn("work stealing: move released slot", "run_id", m.attempt.RunID, "slot", m.attempt.Slot, "err", err)
			continue
		}
		if tok == 0 {
			continue
		}
		runs[m.attempt.RunID] = true
		s.count(func(st *Stats) { st.Stolen++ })
		s.log.Info("unstarted slot moved to an idle executor", "run_id", m.attempt.RunID, "slot", m.attempt.Slot,
			"from", p.victim.ID, "to", m.thief, "old_token", m.attempt.ID, "new_token", tok)
	}
	for runID := range runs {
		s.pushInBackground(ctx, epoch, runID, p.execs)
	}
}
