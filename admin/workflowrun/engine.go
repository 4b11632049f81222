package workflowrun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/internal/lru"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/workflow"
)

// Defaults of Config.
const (
	DefaultPollInterval = time.Second
	DefaultBatch        = 500
)

// Waker is woken after job runs were created (scheduler.Scheduler).
type Waker interface{ Wake() }

// Observer is told when a workflow run ended, with its status and its time
// from start to end (admin/metrics).
type Observer interface {
	WorkflowRunEnded(status string, d time.Duration)
}

// Config configures an Engine. Zero fields mean "the default".
type Config struct {
	// PollInterval is the longest sleep between two passes (the safety net
	// for job runs settled on another replica). Default 1s.
	PollInterval time.Duration
	// Batch bounds the workflow runs driven per pass. Default 500.
	Batch int
	// GraphCache bounds the cache of validated workflow graphs, one per
	// (workflow, version) driven: when full, the graph used longest ago is
	// evicted and read and validated again when next needed. Default
	// DefaultGraphCache.
	GraphCache int
	// Scheduler is woken after a pass created job runs; optional.
	Scheduler Waker
	// Observer is told of every workflow run that ends (metrics); optional.
	Observer Observer
	// Clock says when a cron firing is due (Fire). Default the system
	// clock.
	Clock clock.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.GraphCache <= 0 {
		c.GraphCache = DefaultGraphCache
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	return c
}

// DefaultGraphCache is the default of Config.GraphCache.
const DefaultGraphCache = 1000

// Stats counts what the engine did (tests, metrics).
type Stats struct {
	Passes      int64 // passes over the active runs
	Fired       int64 // workflow runs created by cron
	NodeRuns    int64 // node runs created running (with their job runs)
	JobRuns     int64 // job runs created
	Skipped     int64 // node runs created skipped
	NodesEnded  int64 // node runs ended from their job runs
	RunsEnded   int64 // workflow runs ended
	StaleAborts int64 // transactions refused by the epoch fence
}

// Engine drives workflow runs while its admin leads. It is safe for
// concurrent use.
type Engine struct {
	cfg  Config
	st   *store.Store
	wake chan struct{}

	mu     sync.Mutex
	graphs *lru.Cache[graphKey, graphOrErr] // immutable per (workflow, version)
	stats  Stats
}

type graphKey struct{ workflow, version int64 }

type graphOrErr struct {
	g   *workflow.Graph
	err error
}

// New returns an Engine over st.
func New(cfg Config, st *store.Store) (*Engine, error) {
	if st == nil {
		return nil, errors.New("workflowrun: store is required")
	}
	cfg = cfg.WithDefaults()
	return &Engine{cfg: cfg, st: st, wake: make(chan struct{}, 1), graphs: lru.New[graphKey, graphOrErr](cfg.GraphCache)}, nil
}

// GraphCacheStats reports the cache of validated workflow graphs.
func (e *Engine) GraphCacheStats() lru.Stats { return e.graphs.Stats() }

// Wake makes the loop pass now: a node's job run may have ended, or a
// workflow run was created.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// SlotResult wakes the loop: with it the engine is an observer of the slot
// results the admin accepts (executorsvc.ResultObserver).
func (e *Engine) SlotResult(store.SlotOutcome) { e.Wake() }

// Stats returns a snapshot of the counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

func (e *Engine) count(f func(*Stats)) {
	e.mu.Lock()
	f(&e.stats)
	e.mu.Unlock()
}

// Lead passes over the active workflow runs until ctx ends or a larger
// epoch than epoch is recorded.
func (e *Engine) Lead(ctx context.Context, epoch int64) {
	log := e.cfg.Logger.With("epoch", epoch)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		case <-t.C:
		}
		err := e.Pass(ctx, epoch)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, store.ErrStaleEpoch):
			if rec, rerr := e.st.Leader(ctx); rerr == nil && rec.Epoch > epoch {
				log.Warn("epoch fence refused a workflow write: another admin leads; the workflow engine stops", "recorded_epoch", rec.Epoch)
				return
			}
			// This term's epoch is not recorded yet (the scheduler records
			// it as the term starts): the next pass tries again.
		case err != nil:
			log.Error("workflow pass failed; next pass at the next poll", "err", err)
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(e.cfg.PollInterval)
	}
}

// Pass fires the due workflows (Fire), then drives every pending and
// running workflow run (at most Batch, oldest first), each in its own
// transaction fenced by epoch, and wakes
// the scheduler when job runs were created. A run that fails to move on
// is logged and the others are driven; the first such error is returned.
// A write refused by the epoch fence ends the pass at once.
func (e *Engine) Pass(ctx context.Context, epoch int64) error {
	e.count(func(s *Stats) { s.Passes++ })
	if _, err := e.Fire(ctx, epoch); err != nil {
		return err
	}
	var runs []store.WorkflowRun
	err := e.st.Tx(ctx, func(tx *store.Tx) error {
		var err error
		runs, err = tx.ActiveWorkflowRuns(ctx, e.cfg.Batch)
		return err
	})
	if err != nil {
		return err
	}
	created := false
	defer func() {
		if created && e.cfg.Scheduler != nil {
			e.cfg.Scheduler.Wake()
		}
	}()
	var first error
	for _, r := range runs {
		res, err := e.drive(ctx, epoch, r)
		created = created || res.JobRuns > 0
		switch {
		case errors.Is(err, store.ErrStaleEpoch) || ctx.Err() != nil:
			return err
		case err != nil:
			// One run that cannot be moved on (a database error on its
			// rows) does not hold up the others: it is tried again next
			// pass.
			e.cfg.Logger.Warn("workflow run not moved on; tried again next pass", "workflow_run_id", r.ID, "err", err)
			first = cmp.Or(first, err)
		}
	}
	return first
}

// Result is what one Drive did.
type Result struct {
	NodeRuns   int    // node runs created running
	JobRuns    int    // job runs created for them
	Skipped    int    // node runs created skipped
	NodesEnded int    // node runs ended from their job runs (or failed at once)
	Ended      string // the run's end status when it ended now, else ""
	// Duration is the ended run's time from its start to its end (0 when
	// it did not end now).
	Duration time.Duration
}

// Drive moves workflow run id on in one transaction fenced by epoch (see
// the package doc) and says what it did. A run that has ended already is
// left alone.
func (e *Engine) Drive(ctx context.Context, epoch, id int64) (Result, error) {
	r, err := e.st.WorkflowRun(ctx, id)
	if err != nil {
		return Result{}, err
	}
	res, err := e.drive(ctx, epoch, r)
	if err == nil && res.JobRuns > 0 && e.cfg.Scheduler != nil {
		e.cfg.Scheduler.Wake()
	}
	return res, err
}

func (e *Engine) drive(ctx context.Context, epoch int64, r store.WorkflowRun) (Result, error) {
	g, gerr := e.graph(ctx, r.WorkflowID, r.WorkflowVersion)
	if gerr != nil && !errors.Is(gerr, store.ErrNotFound) && !isInvalid(gerr) {
		return Result{}, gerr
	}
	var res Result
	err := e.st.Tx(ctx, func(tx *store.Tx) error {
		res = Result{}
		if err := tx.CheckEpoch(ctx, epoch); err != nil {
			return err
		}
		d := decider{e: e, tx: tx, epoch: epoch, g: g, res: &res}
		return d.apply(ctx, r.ID, gerr)
	})
	if errors.Is(err, store.ErrStaleEpoch) {
		e.count(func(s *Stats) { s.StaleAborts++ })
		return Result{}, err
	}
	if err != nil {
		return Result{}, fmt.Errorf("workflow run %d: %w", r.ID, err)
	}
	e.count(func(s *Stats) {
		s.NodeRuns += int64(res.NodeRuns)
		s.JobRuns += int64(res.JobRuns)
		s.Skipped += int64(res.Skipped)
		s.NodesEnded += int64(res.NodesEnded)
		if res.Ended != "" {
			s.RunsEnded++
		}
	})
	if res.Ended != "" && e.cfg.Observer != nil {
		e.cfg.Observer.WorkflowRunEnded(res.Ended, res.Duration)
	}
	return res, nil
}

// graph returns the validated graph of version version of workflow id,
// from the cache: a version's definition never changes. A definition that
// does not validate any more is an error of the run, not of the pass.
func (e *Engine) graph(ctx context.Context, id, version int64) (*workflow.Graph, error) {
	k := graphKey{id, version}
	c, ok := e.graphs.Get(k)
	if ok {
		return c.g, c.err
	}
	def, err := e.st.WorkflowDefinition(ctx, id, version)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err // not cached: a database error passes
	}
	var g *workflow.Graph
	if err == nil {
		g, err = parse(def)
	}
	e.graphs.Add(k, graphOrErr{g, err})
	return g, err
}

// invalidDefinition: a stored definition that does not parse or validate.
type invalidDefinition struct{ err error }

func (i invalidDefinition) Error() string { return i.err.Error() }

func isInvalid(err error) bool {
	var i invalidDefinition
	return errors.As(err, &i)
}

// parse validates a stored definition (JSON of workflow.Definition).
func parse(def string) (*workflow.Graph, error) {
	var d workflow.Definition
	if err := json.Unmarshal([]byte(def), &d); err != nil {
		return nil, invalidDefinition{fmt.Errorf("stored definition: %w", err)}
	}
	g, err := workflow.Validate(d)
	if err != nil {
		return nil, invalidDefinition{err}
	}
	return g, nil
}
