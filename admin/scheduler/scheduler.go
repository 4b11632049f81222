package scheduler

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/placement"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Pusher sends work to executors (dispatch.Client in production). It is
// dispatch.Pusher, defined there once for the scheduler and the XXL-JOB
// router alike.
type Pusher = dispatch.Pusher

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
	// Default 5s. Disabling or pausing a job skips its runs created ahead
	// of time that have not started (recorded as skipped, with the reason).
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
	// ForgetLostAfter is how long a lost executor may stay silent (since its
	// last heartbeat, database clock) before the leader marks it gone: no
	// longer listed by default (GET /api/v1/executors?all=1 and the
	// console's "show gone" list it). Its row stays; a heartbeat or an
	// XXL-JOB registration brings it back online. Default 1 hour.
	ForgetLostAfter time.Duration
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
	// StartBatch is how many pending runs one start transaction takes (one
	// epoch check, multi-row inserts of their attempts). Default 500. 1 is
	// the per-run path (a transaction and a push per run), kept to compare
	// against in benchmarks.
	StartBatch int
	// StartWorkers is how many start transactions may be in flight at once
	// (the next batch is placed while one waits for the database). Default
	// 2. SQLite always uses 1.
	StartWorkers int
	// PushBatch bounds the slot attempts one push request carries (of any
	// number of runs). Default 2000.
	PushBatch int
	// UnplaceableTimeout is how long after its scheduled time a run may wait
	// for an online executor of its app with its handler; then it fails
	// with the reason. While it waits, the run shows why and a
	// run_unplaceable alarm is raised. Default 10 minutes.
	UnplaceableTimeout time.Duration
	// DispatchTimeout is how long an executor may leave an attempt placed on
	// it unacknowledged (pushes and heartbeat responses deliver it again
	// meanwhile): past it the attempt fails with the reason, and the job's
	// retry policy decides what follows — instead of being resent forever
	// to an executor that refuses it. Default 30s.
	DispatchTimeout time.Duration
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
	if c.ForgetLostAfter <= 0 {
		c.ForgetLostAfter = time.Hour
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
	if c.StartBatch <= 0 {
		c.StartBatch = 500
	}
	if c.StartWorkers <= 0 {
		c.StartWorkers = 2
	}
	if c.PushBatch <= 0 {
		c.PushBatch = 2000
	}
	if c.UnplaceableTimeout <= 0 {
		c.UnplaceableTimeout = 10 * time.Minute
	}
	if c.DispatchTimeout <= 0 {
		c.DispatchTimeout = 30 * time.Second
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
// from the leader loop and from its start transactions, possibly at the
// same time: they must be safe for concurrent use and return promptly.
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
	pushMu    sync.Mutex
	pushing   map[int64]*pushJob // push loops in flight, by executor
	releasing map[int64]bool     // drain release requests in flight, by executor
	pushSem   chan struct{}      // bounds pushes in flight to PushConcurrency
	pushWG    sync.WaitGroup
	stealing  bool // a work-stealing round is in flight

	// Adaptive pre-read (leader loop goroutine only).
	window   time.Duration // current pre-read window
	windowAt time.Time     // when window was computed
	rate     float64       // measured firings/s while draining a backlog (EWMA)
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
		scheds: map[int64]cachedSchedule{}, pushing: map[int64]*pushJob{}, releasing: map[int64]bool{}, pushSem: make(chan struct{}, cfg.PushConcurrency), window: cfg.PreRead, rate: 5000}, nil
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
		more, err := s.tick(ctx, epoch, &lastRecover)
		if err != nil {
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
		if more && err == nil {
			// Due runs are left (a herd): go straight on.
			if ctx.Err() != nil {
				return
			}
			continue
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

// tick does one round of the leader's duties. more is true when due runs
// are left to start: the loop goes straight on instead of waiting.
func (s *Scheduler) tick(ctx context.Context, epoch int64, lastRecover *time.Time) (more bool, err error) {
	if err := s.fireAll(ctx, epoch); err != nil {
		return false, err
	}
	if more, err = s.assignPending(ctx, epoch); err != nil {
		return false, err
	}
	if err := s.RetryFailed(ctx, epoch); err != nil {
		return false, err
	}
	if err := s.PlaceUnplaced(ctx, epoch); err != nil {
		return false, err
	}
	if !s.cfg.DisableWorkStealing {
		if err := s.StealWork(ctx, epoch); err != nil {
			return false, err
		}
	}
	if time.Since(*lastRecover) >= s.cfg.HeartbeatInterval/2 {
		*lastRecover = time.Now()
		// Drains change rarely: look for them at the pace of loss
		// detection, not on every tick of the loop.
		if err := s.DrainRequested(ctx); err != nil {
			return false, err
		}
		if err := s.RecoverLost(ctx, epoch); err != nil {
			return false, err
		}
		if err := s.FailUnacknowledged(ctx); err != nil {
			return false, err
		}
	}
	return more, nil
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

// FailUnacknowledged fails the attempts their executors have not
// acknowledged within DispatchTimeout (refused, or never taken although
// pushed and delivered in heartbeats), through the same path as a result
// reporting the failure: the job's retry policy then places another attempt
// or ends the run, and the attempt says why.
func (s *Scheduler) FailUnacknowledged(ctx context.Context) error {
	stuck, err := s.store.UnacknowledgedAttempts(ctx, s.cfg.DispatchTimeout.Milliseconds(), 1000)
	if err != nil || len(stuck) == 0 {
		return err
	}
	now := s.cfg.Now().UnixMilli()
	outcomes := make([]store.SlotOutcome, len(stuck))
	for i, u := range stuck {
		outcomes[i] = store.SlotOutcome{
			Token: u.Token, ExecutorID: u.ExecutorID, Status: store.AttemptFailed, FinishedAt: now,
			Error: fmt.Sprintf("executor %s did not acknowledge the assignment within %s (it refused it or never took it): not started there", u.InstanceID, s.cfg.DispatchTimeout),
		}
	}
	accepted, err := s.store.FinishAttempts(ctx, outcomes)
	if err != nil {
		return err
	}
	n := 0
	for _, ok := range accepted {
		if ok {
			n++
		}
	}
	if n > 0 {
		s.log.Warn("attempts never acknowledged by their executors failed", "attempts", n, "after", s.cfg.DispatchTimeout)
	}
	return nil
}

// RecoverLost marks silent executors lost, marks gone those lost for longer
// than ForgetLostAfter, and moves the unfinished slots of lost and gone
// executors to online executors of the same app with new, larger tokens.
func (s *Scheduler) RecoverLost(ctx context.Context, epoch int64) error {
	n, err := s.store.MarkLostExecutors(ctx, s.cfg.LostAfter.Milliseconds())
	if err != nil {
		return err
	}
	if n > 0 {
		s.log.Warn("executors lost (no heartbeat)", "count", n, "after", s.cfg.LostAfter)
	}
	if n, err = s.store.ForgetLostExecutors(ctx, s.cfg.ForgetLostAfter.Milliseconds()); err != nil {
		return err
	}
	if n > 0 {
		s.log.Info("lost executors forgotten: marked gone, no longer listed by default", "count", n, "silent_for", s.cfg.ForgetLostAfter)
	}
	lost, err := s.store.LostAttempts(ctx, 1000)
	if err != nil || len(lost) == 0 {
		return err
	}
	runs := map[int64]store.Run{}
	handlers := map[int64]string{}
	online := map[string][]store.Executor{}
	moved := map[string]map[int64]bool{} // app → executors that got slots
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
			addTarget(moved, r.App, to)
			s.count(func(st *Stats) { st.Reassigned++ })
			s.log.Info("slot moved off lost executor", "run_id", a.RunID, "slot", a.Slot, "old_token", a.ID, "new_token", tok, "executor_id", to)
		}
	}
	for app, ids := range moved {
		s.pushExecutors(ctx, epoch, online[app], keys(ids))
	}
	return nil
}

// addTarget records that executor id of app got new attempts to push.
func addTarget(m map[string]map[int64]bool, app string, id int64) {
	if m[app] == nil {
		m[app] = map[int64]bool{}
	}
	m[app][id] = true
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
	placed := map[string]map[int64]bool{} // app → executors that got attempts
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
			addTarget(placed, u.App, to)
		}
	}
	for app, ids := range placed {
		s.pushExecutors(ctx, epoch, online[app], keys(ids))
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
					if !hasHandler(thief.Handlers, a.Handler) {
						continue
					}
					i, ok := victims[victim.ID]
					if !ok {
						i = len(plan)
						victims[victim.ID] = i
						plan = append(plan, stealPlan{victim: *victim, execs: execs})
					}
					plan[i].moves = append(plan[i].moves, stealMove{attempt: a.Attempt, thief: thief.ID})
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
		s.pushMu.Lock()
		if s.releasing[e.ID] { // one drain request in flight per executor
			s.pushMu.Unlock()
			continue
		}
		s.releasing[e.ID] = true
		s.pushMu.Unlock()
		tokens := make([]int64, len(queued))
		for i, a := range queued {
			tokens[i] = a.ID
		}
		s.inBackground(func() {
			defer func() {
				s.pushMu.Lock()
				delete(s.releasing, e.ID)
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
	thieves := map[int64]bool{}
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
		thieves[m.thief] = true
		s.count(func(st *Stats) { st.Stolen++ })
		s.log.Info("unstarted slot moved to an idle executor", "run_id", m.attempt.RunID, "slot", m.attempt.Slot,
			"from", p.victim.ID, "to", m.thief, "old_token", m.attempt.ID, "new_token", tok)
	}
	s.pushExecutors(ctx, epoch, p.execs, keys(thieves))
}
