package scheduler

import (
	"log/slog"
	"time"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Config tunes the leader loop. Zero values take the documented defaults.
type Config struct {
	// ID names this admin replica in the leader record. Required.
	ID string
	// PollInterval is the longest the loop sleeps between ticks. Default 200ms.
	PollInterval time.Duration
	// HintTimeout bounds the reads that only tune the fire loop — the
	// wake-up (the next due job, the next pause end) and the pre-read
	// count — which lock nothing and read a snapshot. On InnoDB such a read
	// must check every index entry of an uncommitted (or later committed)
	// transaction against its snapshot; during a bulk load of a million
	// jobs one took minutes and kept its partitions from firing. A read
	// abandoned at HintTimeout is answered by the defaults (sleep
	// PollInterval, the pre-read window unchanged); the claim, a locking
	// read of the latest versions, is not affected. Default 2s.
	HintTimeout time.Duration
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
	// Timing is the executors' heartbeat period and the silence after
	// which an executor is lost (protocol.Timing: defaults 2s and 3 ×
	// Heartbeat).
	Timing protocol.Timing
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
	// TickBudget bounds the time one round of the leader loop spends
	// firing due jobs and, separately, starting due runs. With more due
	// than one round can do (a herd, a million jobs), the loop goes
	// straight on with the next round, and the runs fired so far start
	// between two budgets of firing instead of after all of them; the
	// other duties (loss detection, retries) run once a round. Default 1s.
	TickBudget time.Duration
	// PushBatch bounds the slot attempts one push request carries (of any
	// number of runs). Default 2000.
	PushBatch int
	// UnplaceableTimeout is how long after its scheduled time a run may wait
	// for an online executor of its app with its handler; then it fails
	// with the reason. While it waits, the run shows why and a
	// run_unplaceable alarm is raised. Default 10 minutes.
	UnplaceableTimeout time.Duration
	// PriorityAging is how long a due run waits before it counts one
	// priority higher when the leader orders a page of due runs
	// (protocol.Priority.Aged). Default protocol.DefaultPriorityAging (5m);
	// negative: no aging.
	PriorityAging time.Duration
	// MaxRunningSlots is the platform's shared capacity: the most slots of
	// all apps placed on executors at once (0: none). When apps compete
	// for it, the leader gives room by their weights (fairshare.go).
	MaxRunningSlots int64
	// HoldRecheck is how often the leader checks again a pending run it
	// holds: a run of a job that waits for other runs of its business date
	// (their success is re-read then), or a backfill's run waiting for its
	// turn. Default 5s.
	HoldRecheck time.Duration
	// DispatchTimeout is how long an executor may leave an attempt placed on
	// it unacknowledged (pushes and heartbeat responses deliver it again
	// meanwhile): past it the attempt fails with the reason, and the job's
	// retry policy decides what follows — instead of being resent forever
	// to an executor that refuses it. Default 30s.
	DispatchTimeout time.Duration
	// ScheduleCache bounds the leader's cache of parsed schedules, one per
	// job (about 0.5 KiB each): when full, the schedule used longest ago is
	// evicted and parsed again (microseconds) when its job is next due.
	// Default DefaultScheduleCache.
	ScheduleCache int
	// CalendarScheduleCache bounds the cache of the schedules of jobs on a
	// business calendar, likewise. Default DefaultCalendarScheduleCache.
	CalendarScheduleCache int
	// Observer is told when runs start, for metrics (admin/metrics).
	// Optional: nil observes nothing.
	Observer Observer
	// Partitions, when set, gives the scheduling partitions this replica
	// owns (ownership.Keeper; docs/architecture.md, "Partitions"): every
	// replica fires the due jobs of its own partitions (FireOwned), each
	// transaction fenced by those partitions' epochs, and Lead no longer
	// fires. Nil: Lead fires every job, fenced by the leader epoch (a
	// scheduler without a coordinator: tests, tools).
	Partitions Owner
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock is the one clock of the leader's duties: what is due, backoff,
	// timeouts and the pace of recovery. Leases are set from the database
	// clock instead (docs/architecture.md, "Clocks"). Default clock.System.
	Clock clock.Clock
}

// Default sizes of the leader's caches (Config.ScheduleCache,
// Config.CalendarScheduleCache).
const (
	DefaultScheduleCache         = 100_000
	DefaultCalendarScheduleCache = 10_000
)

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	if c.PollInterval <= 0 {
		c.PollInterval = 200 * time.Millisecond
	}
	if c.HintTimeout <= 0 {
		c.HintTimeout = 2 * time.Second
	}
	if c.PriorityAging == 0 {
		c.PriorityAging = protocol.DefaultPriorityAging
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
	c.Timing = c.Timing.WithDefaults()
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
	if c.TickBudget <= 0 {
		c.TickBudget = time.Second
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
	if c.HoldRecheck <= 0 {
		c.HoldRecheck = 5 * time.Second
	}
	if c.DispatchTimeout <= 0 {
		c.DispatchTimeout = 30 * time.Second
	}
	if c.ScheduleCache <= 0 {
		c.ScheduleCache = DefaultScheduleCache
	}
	if c.CalendarScheduleCache <= 0 {
		c.CalendarScheduleCache = DefaultCalendarScheduleCache
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	return c
}
