package executorsvc

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Typed errors of the Service. A refusal's message (Error) is meant for the
// executor; errors.Is tells its kind.
var (
	// ErrInvalid: the request breaks the protocol (a field missing or too
	// long, too many lines). The executor's mistake: admin/api answers 400.
	ErrInvalid = errors.New("invalid executor request")
	// ErrConflict: the request is well formed but the admin's records
	// contradict it (an instance id registered for another app, an address
	// that is a live XXL-JOB executor's, an unknown instance). admin/api
	// answers 409.
	ErrConflict = errors.New("executor request conflicts with the admin's records")
	// ErrUnknownExecutor: results or logs from an instance id that never
	// sent a heartbeat. It is an ErrConflict.
	ErrUnknownExecutor error = &refusal{kind: ErrConflict, msg: "unknown instance_id: heartbeat first"}
)

// refusal is an ErrInvalid or ErrConflict with the message the executor is
// told.
type refusal struct {
	kind error
	msg  string
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.kind }

func invalid(msg string) error  { return &refusal{kind: ErrInvalid, msg: msg} }
func conflict(msg string) error { return &refusal{kind: ErrConflict, msg: msg} }

// Waker nudges the scheduler (scheduler.Scheduler) when slots must be
// placed again.
type Waker interface{ Wake() }

// SlotsEnder is what a Waker may also do (scheduler.Scheduler does): hear
// that results were accepted, so that work waiting for room under a
// concurrency cap is placed at once.
type SlotsEnder interface{ SlotsEnded() }

// ResultObserver sees the slot results the admin accepted, for metrics.
// SlotResult must return promptly.
type ResultObserver interface {
	SlotResult(o store.SlotOutcome)
}

// Config of the Service.
type Config struct {
	// Store is the platform database. Required.
	Store *store.Store
	// Scheduler is woken when slots are lost and must be placed again;
	// optional.
	Scheduler Waker
	// Results sees every slot result accepted; optional.
	Results ResultObserver
	// RunLogs caps the handler logs stored per run.
	RunLogs store.RunLogLimits
	// Timing is told to executors (the heartbeat period and the silence
	// after which an executor is lost); zero fields take the defaults of
	// protocol.Timing.
	Timing protocol.Timing
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Service handles the executor protocol's requests, once authenticated and
// decoded. It is safe for concurrent use.
type Service struct {
	cfg  Config
	st   *store.Store
	runs *runstate.Machine // finishes attempts
	log  *slog.Logger

	quotaMu sync.Mutex
	quotas  map[string]logQuota // app → its run-log quota, as last read (logs.go)
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Timing = cfg.Timing.WithDefaults()
	return &Service{cfg: cfg, st: cfg.Store, runs: runstate.New(cfg.Store), log: cfg.Logger}
}

func (s *Service) wake() {
	if s.cfg.Scheduler != nil {
		s.cfg.Scheduler.Wake()
	}
}
