package scheduler

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/internal/lru"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
)

// Pusher sends work to executors (dispatch.Client in production). It is
// dispatch.Pusher, defined there once for the scheduler and the XXL-JOB
// router alike.
type Pusher = dispatch.Pusher

// Observer receives scheduler events for metrics. Its methods are called
// from the leader loop and from its start transactions, possibly at the
// same time: they must be safe for concurrent use and return promptly.
type Observer interface {
	// RunStarted: the slots of a run were assigned and their push begun,
	// lag after the run's scheduled time (never negative).
	RunStarted(trigger string, lag time.Duration)
	// CapWaited: a run that had waited for room under a concurrency cap of
	// app started, waited after it was due.
	CapWaited(app string, waited time.Duration)
	// DeadlineMissed: a run missed a deadline of kind DeadlineStart or
	// DeadlineFinish (counted once per run and kind, when its alarm is
	// recorded).
	DeadlineMissed(kind string)
}

// Scheduler is the leader loop. Create it with New; call Lead for each term.
type Scheduler struct {
	cfg   Config
	store *store.Store
	runs  *runstate.Machine // finishes attempts, cancels and ends runs
	push  Pusher
	log   *slog.Logger
	wake  chan struct{}
	// fireWake wakes FireOwned (Wake).
	fireWake chan struct{}
	// capHeld is true while the last round held work back for a
	// concurrency cap: ending slots then wake the loop (SlotsEnded).
	capHeld atomic.Bool

	mu sync.Mutex
	// Parsed schedules by job id, bounded (Config.ScheduleCache): a job
	// evicted is parsed again when it is next due.
	scheds *lru.Cache[int64, cachedSchedule]
	// Jobs on a business calendar: the calendars as last read (by id,
	// with their version; as many as there are calendars) and the jobs'
	// schedules on them (by job id, bounded by Config.CalendarScheduleCache).
	cals      map[int64]cachedCalendar
	calScheds *lru.Cache[int64, cachedCalSchedule]
	stats     Stats
	// capBounds are the term's upper bounds of capped apps' and jobs'
	// placed slots (caps.go); nil at the start of a term.
	capBounds *capBounds
	// startBuckets are the term's start-rate buckets by app (startrate.go);
	// nil at the start of a term.
	startBuckets map[string]*startBucket
	// breakers are the circuit breakers open or probing as the last
	// breaker round left them, by job (breaker.go); the start path holds
	// their jobs' runs.
	breakers map[int64]*heldBreaker

	// Pushes run in the background so that an executor that does not answer
	// (frozen, partitioned) cannot stall the loop for the push timeout: lost
	// executors are still detected on time and other runs still dispatched.
	pushMu    sync.Mutex
	pushing   map[int64]*pushJob // push loops in flight, by executor
	releasing map[int64]bool     // drain release requests in flight, by executor
	pushSem   chan struct{}      // bounds pushes in flight to PushConcurrency
	pushWG    sync.WaitGroup
	stealing  bool // a work-stealing round is in flight

	// Adaptive pre-read (the goroutine that fires only: Lead's, or
	// FireOwned's when there are partitions).
	window   time.Duration // current pre-read window
	windowAt time.Time     // when window was computed
	rate     float64       // measured firings/s while draining a backlog (EWMA)
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
	return &Scheduler{cfg: cfg, store: st, runs: runstate.New(st), push: push, log: cfg.Logger, wake: make(chan struct{}, 1), fireWake: make(chan struct{}, 1),
		scheds: lru.New[int64, cachedSchedule](cfg.ScheduleCache), cals: map[int64]cachedCalendar{}, calScheds: lru.New[int64, cachedCalSchedule](cfg.CalendarScheduleCache),
		pushing: map[int64]*pushJob{}, releasing: map[int64]bool{}, pushSem: make(chan struct{}, cfg.PushConcurrency), window: cfg.PreRead, rate: 5000}, nil
}

// Stats returns a snapshot of the counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// CacheStats reports the leader's caches of parsed schedules: of the jobs'
// schedules and of the jobs' schedules on their calendars.
func (s *Scheduler) CacheStats() (schedules, calendarSchedules lru.Stats) {
	return s.scheds.Stats(), s.calScheds.Stats()
}

// Wake makes the loops tick now (after a job was created or triggered):
// the leader's and the fire loop of the owned partitions.
func (s *Scheduler) Wake() {
	s.wakeLeader()
	select {
	case s.fireWake <- struct{}{}:
	default:
	}
}

// wakeLeader makes the leader loop tick now.
func (s *Scheduler) wakeLeader() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// SlotsEnded tells the loop that slots ended (their results were
// accepted): when the last round held work back for a concurrency cap, it
// ticks now to place it in the room they freed, rather than at its next
// poll.
func (s *Scheduler) SlotsEnded() {
	if s.capHeld.Load() {
		s.Wake()
	}
}

func (s *Scheduler) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}
