// This file: the Executor type, New, Handle, and its lifecycle (Start, Stop
// and the drain), with the executor's change notification.

package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// Tunables that are not worth a Config field.
const (
	// finishedRetention is how long a token is remembered after its result
	// was acknowledged, so that a late redelivery of its assignment (push or
	// heartbeat response crossing the result) does not run it again. While
	// the result is not acknowledged the token is remembered regardless.
	finishedRetention = 10 * time.Minute
	// minAdminInterval bounds the heartbeat interval an admin may ask for.
	minAdminInterval = 100 * time.Millisecond
	// maxErrorLen bounds the error text of a result.
	maxErrorLen = 4096
	// maxRequestBytes bounds the body of a push from the admin.
	maxRequestBytes = 16 << 20
)

type lifeState int

const (
	stateNew      lifeState = iota // built by New, Handle allowed
	stateRunning                   // Start returned
	stateDraining                  // Stop in progress
	stateStopped                   // Stop returned (or Stop before Start)
)

func (s lifeState) String() string {
	return [...]string{"new", "running", "draining", "stopped"}[s]
}

// Executor runs the handlers of one app for the shardjob admin. Build it with
// New, register handlers with Handle, then Start and, at shutdown, Stop. An
// Executor runs once: it cannot be started again after Stop.
type Executor struct {
	cfg      Config
	log      *slog.Logger
	client   *adminClient
	ownHTTP  bool // the HTTP client was built by New: close its idle connections on Stop
	verifier *protocol.Verifier

	// backoff of result delivery; fields so that tests can shorten them.
	backoffBase, backoffMax time.Duration
	flushInterval           time.Duration

	hbKick    chan struct{} // ask the heartbeat loop for a heartbeat now
	resWake   chan struct{} // a result was queued
	resRetry  chan struct{} // an admin answered a heartbeat: retry results now
	drainBeat chan struct{} // closed once a heartbeat with Draining=true was attempted

	lifeMu   sync.Mutex // serialises Start and Stop
	stopDone chan struct{}
	stopErr  error

	srv        *http.Server
	loopCancel context.CancelFunc
	loops      sync.WaitGroup // heartbeat loop, result loop
	serverDone chan struct{}  // closed when the HTTP server's goroutine returns
	handlersWG sync.WaitGroup // running handlers

	mu            sync.Mutex
	state         lifeState
	addr          string
	baseCtx       context.Context // parent of handler contexts: Start's values, never cancelled
	handlers      map[string]Handler
	slots         map[int64]*slot     // accepted and unfinished, by token
	queue         []*slot             // accepted, waiting for capacity, in arrival order
	running       int                 // handlers running
	finished      map[int64]time.Time // finished tokens → when their result was acknowledged (zero: not yet)
	released      map[int64]bool      // tokens given back unstarted, until the admin confirms they moved
	pending       []protocol.SlotResult
	journal       *journal      // nil unless Config.ResultsDir is set
	logs          *logShipper   // nil when Config.DisableLogShipping is set (logship.go)
	idle          chan struct{} // while draining: closed when running reaches 0
	drainBeatSent bool
	executorID    int64
	lastBeat      time.Time     // when an admin last answered a heartbeat (readyz)
	adminInterval time.Duration // heartbeat interval the admin asked for (0: none)
	lostAfter     time.Duration // heartbeat silence after which the admins declare this executor lost (0: not told)
	metrics       *execMetrics  // nil without Config.MetricsRegisterer
	stats         Stats
	refusedLogged bool
	changed       chan struct{} // closed and replaced on every change of state (tests wait on it)
	incarnation   string        // random, new for each Executor: tells the admin about a restart
	acceptSeq     int64         // assignment batches accepted so far (protocol.HeartbeatRequest.AcceptSeq)
}

// New returns an Executor for cfg (after cfg.WithDefaults) or the errors of
// cfg.Validate. It does not touch the network: Start does.
func New(cfg Config) (*Executor, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	hc, own := cfg.HTTPClient, false
	if hc == nil {
		hc = &http.Client{Timeout: DefaultHTTPTimeout, Transport: http.DefaultTransport.(*http.Transport).Clone()}
		own = true
	}
	log := cfg.Logger.With("app", cfg.App, "instance", cfg.InstanceID)
	e := &Executor{
		cfg:           cfg,
		log:           log,
		client:        newAdminClient(hc, cfg.Secret, cfg.Admins, log),
		ownHTTP:       own,
		verifier:      protocol.NewVerifier(cfg.Secret, 0, nil),
		backoffBase:   100 * time.Millisecond,
		backoffMax:    10 * time.Second,
		flushInterval: ResultFlushInterval,
		hbKick:        make(chan struct{}, 1),
		resWake:       make(chan struct{}, 1),
		resRetry:      make(chan struct{}, 1),
		drainBeat:     make(chan struct{}),
		addr:          cfg.AdvertiseURL,
		handlers:      map[string]Handler{},
		slots:         map[int64]*slot{},
		finished:      map[int64]time.Time{},
		released:      map[int64]bool{},
		changed:       make(chan struct{}),
		logs:          newLogShipper(cfg),
		incarnation:   protocol.NewSecret()[:32],
	}
	if err := e.registerMetrics(); err != nil { // metrics.go
		return nil, err
	}
	return e, nil
}

// Handle registers h under name; jobs name their handler. It must be called
// before Start. Handle panics, like http.HandleFunc, on a programmer error:
// an empty name, a nil handler, a name registered twice, or a call after
// Start.
func (e *Executor) Handle(name string, h Handler) {
	if name == "" {
		panic("sdk: Executor.Handle: empty handler name")
	}
	if h == nil {
		panic(fmt.Sprintf("sdk: Executor.Handle(%q): nil handler", name))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != stateNew {
		panic(fmt.Sprintf("sdk: Executor.Handle(%q) called after Start: register every handler before Start", name))
	}
	if _, dup := e.handlers[name]; dup {
		panic(fmt.Sprintf("sdk: Executor.Handle: handler %q registered twice", name))
	}
	e.handlers[name] = h
}

// Start binds the HTTP server to ListenAddr and starts the heartbeat and
// result loops; it returns once the executor runs. It does not wait for an
// admin to answer: the executor keeps trying them in the background.
//
// ctx bounds Start itself. Its values (not its cancellation) are inherited
// by the handlers' contexts; to stop the executor call Stop.
func (e *Executor) Start(ctx context.Context) error {
	e.lifeMu.Lock()
	defer e.lifeMu.Unlock()
	e.mu.Lock()
	st, nh := e.state, len(e.handlers)
	e.mu.Unlock()
	switch {
	case st == stateRunning:
		return ErrAlreadyStarted
	case st == stateDraining || st == stateStopped:
		return ErrStopped
	case nh == 0:
		return ErrNoHandlers
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("start shardjob executor: %w", err)
	}
	if e.cfg.ResultsDir != "" && e.journal == nil {
		j, restored, err := openJournal(e.cfg.ResultsDir, 4*e.cfg.ResultBatch)
		if err != nil {
			return fmt.Errorf("start shardjob executor: ResultsDir: %w", err)
		}
		e.mu.Lock()
		for _, r := range restored {
			e.finished[r.Token] = time.Time{}
			e.pending = append(e.pending, r)
		}
		e.mu.Unlock()
		e.journal = j
		if len(restored) > 0 {
			e.log.Info("results of a previous process restored from the journal", "results", len(restored), "dir", e.cfg.ResultsDir)
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", e.cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("start shardjob executor: listen on ListenAddr %q: %w (choose a free port, or port 0 for any free one)", e.cfg.ListenAddr, err)
	}
	addr := e.cfg.AdvertiseURL
	if addr == "" {
		addr = "http://" + ln.Addr().String()
	}
	base := context.WithoutCancel(ctx)
	loopCtx, cancel := context.WithCancel(base)
	e.loopCancel = cancel
	e.srv = &http.Server{
		Handler:           e.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(e.log.Handler(), slog.LevelWarn),
	}
	e.mu.Lock()
	e.state, e.addr, e.baseCtx = stateRunning, addr, base
	names := e.handlerNamesLocked()
	e.mu.Unlock()

	e.serverDone = make(chan struct{})
	e.loops.Add(2)
	go e.serve(ln)
	go e.heartbeatLoop(loopCtx)
	go e.resultLoop(loopCtx)
	if e.logs != nil {
		e.loops.Add(1)
		go e.logLoop(loopCtx)
	}
	e.log.Info("shardjob executor started", "listen", ln.Addr().String(), "advertise", addr,
		"admins", e.cfg.Admins, "capacity", e.cfg.Capacity, "handlers", names)
	return nil
}

func (e *Executor) serve(ln net.Listener) {
	defer close(e.serverDone)
	if err := e.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		e.log.Error("executor HTTP server failed: pushes from the admin are lost, heartbeats still deliver assignments", "err", err)
	}
}

// Addr returns the URL advertised to the admin: AdvertiseURL, or
// "http://" + the actual listen address once Start returned ("" before,
// unless AdvertiseURL is set).
func (e *Executor) Addr() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.addr
}

// InstanceID returns the identity reported to the admin.
func (e *Executor) InstanceID() string { return e.cfg.InstanceID }

// Stop shuts the executor down gracefully, in this order:
//
//  1. stop accepting work: pushes are answered 503, assignments in heartbeat
//     responses are ignored; queued slots that have not started are handed
//     back (dropped without a result: the admin reassigns them when the
//     executor deregisters);
//  2. tell the admin (a heartbeat with Draining=true);
//  3. wait up to DrainTimeout for running slots to finish, then cancel their
//     contexts (they are reported cancelled) and wait up to DrainTimeout
//     again for them to return (a handler that ignores its context is left
//     behind: Go cannot stop a goroutine);
//  4. deliver the remaining results, for up to DrainTimeout;
//  5. deregister from the admin, stop the HTTP server, and wait for every
//     goroutine of the executor.
//
// Stop therefore returns within about 3×DrainTimeout plus the HTTP client's
// timeout for the last requests, even with a context that never ends. ctx
// bounds the whole of Stop: when it ends, running slots are cancelled at once
// and the remaining steps are given up. Stop returns nil after a clean
// stop, or an error wrapping ErrResultsUndelivered, ErrHandlersStuck, the
// deregistration failure or ctx's error. It is idempotent: later calls wait
// for the first one and return its result. Stop before Start just marks the
// executor stopped.
func (e *Executor) Stop(ctx context.Context) error {
	e.lifeMu.Lock()
	if done := e.stopDone; done != nil {
		e.lifeMu.Unlock()
		select {
		case <-done:
			return e.stopErr
		case <-ctx.Done():
			return fmt.Errorf("stop shardjob executor: waiting for a concurrent Stop: %w", ctx.Err())
		}
	}
	e.stopDone = make(chan struct{})
	defer close(e.stopDone)
	e.mu.Lock()
	if e.state == stateNew {
		e.state = stateStopped
		e.mu.Unlock()
		e.lifeMu.Unlock()
		return nil
	}
	e.state = stateDraining
	handedBack := len(e.queue)
	for _, s := range e.queue {
		delete(e.slots, s.task.Token)
	}
	clear(e.queue)
	e.queue = nil
	idle := make(chan struct{})
	if e.running == 0 {
		close(idle)
	} else {
		e.idle = idle
	}
	running := e.running
	e.mu.Unlock()
	e.lifeMu.Unlock()
	e.stopErr = e.stop(ctx, idle, running, handedBack)
	e.unregisterMetrics()
	return e.stopErr
}

func (e *Executor) stop(ctx context.Context, idle chan struct{}, running, handedBack int) error {
	e.log.Info("stopping shardjob executor: draining", "running", running, "handed_back", handedBack, "drain_timeout", e.cfg.DrainTimeout.String()) // "30s", not nanoseconds in JSON logs
	kick(e.hbKick)
	var errs []error

	// 3. Running slots get DrainTimeout, then are cancelled.
	stuck := false
	drain := time.NewTimer(e.cfg.DrainTimeout)
	select {
	case <-idle:
	case <-drain.C:
		n := e.cancelRunning(&StoppingError{DrainTimeout: e.cfg.DrainTimeout})
		e.log.Warn("drain timeout exceeded: cancelling running slots", "slots", n, "drain_timeout", e.cfg.DrainTimeout.String()) // "30s", not nanoseconds in JSON logs
	case <-ctx.Done():
		n := e.cancelRunning(&StoppingError{})
		e.log.Warn("Stop's context ended while draining: cancelling running slots", "slots", n, "err", ctx.Err())
	}
	drain.Stop()
	// Cancelled handlers get DrainTimeout again to return.
	grace := time.NewTimer(e.cfg.DrainTimeout)
	select {
	case <-idle:
	case <-grace.C:
		stuck = true
	case <-ctx.Done():
		stuck = true
	}
	grace.Stop()
	if stuck {
		select {
		case <-idle: // ready at the same time: idle wins
			stuck = false
		default:
		}
	}
	if !stuck {
		e.handlersWG.Wait() // every handler has finished; their goroutines are returning
	} else {
		e.mu.Lock()
		tokens := make([]int64, 0, len(e.slots))
		for tok := range e.slots {
			tokens = append(tokens, tok)
		}
		e.mu.Unlock()
		slices.Sort(tokens)
		e.log.Error("handlers did not return after their context was cancelled: leaving them behind, their results will not be delivered", "tokens", tokens)
		errs = append(errs, fmt.Errorf("%w: tokens %v", ErrHandlersStuck, tokens))
	}

	// 2. Make sure the admin was told (the kick above asked for it).
	select {
	case <-e.drainBeat:
	case <-ctx.Done():
	}
	e.loopCancel()
	e.loops.Wait() // the result loop may be sending: let it stop first

	// 4. Remaining results.
	flushCtx, cancelFlush := context.WithTimeout(ctx, e.cfg.DrainTimeout)
	err := e.flushRemaining(flushCtx)
	cancelFlush()
	if err != nil {
		e.log.Error("giving up delivering results", "err", err)
		errs = append(errs, err)
	}
	e.flushLogs(ctx) // best effort, bounded

	// 5. Deregister, stop serving, wait.
	if _, err := e.client.post(ctx, protocol.PathDeregister, protocol.DeregisterRequest{InstanceID: e.cfg.InstanceID}, nil); err != nil {
		e.log.Warn("deregister failed: the admin will notice the missed heartbeats instead", "err", err)
		errs = append(errs, fmt.Errorf("deregister: %w", err))
	}
	if err := e.srv.Shutdown(ctx); err != nil {
		_ = e.srv.Close()
	}
	<-e.serverDone
	if e.ownHTTP {
		e.client.http.CloseIdleConnections()
	}
	if e.journal != nil {
		if err := e.journal.close(); err != nil {
			errs = append(errs, fmt.Errorf("close results journal: %w", err))
		}
	}
	e.mu.Lock()
	e.state = stateStopped
	e.notifyLocked()
	e.mu.Unlock()
	if err := ctx.Err(); err != nil && !stuck {
		errs = append(errs, fmt.Errorf("stop shardjob executor: %w", err))
	}
	if len(errs) == 0 {
		e.log.Info("shardjob executor stopped")
		return nil
	}
	return errors.Join(errs...)
}

func (e *Executor) handlerNamesLocked() []string {
	names := make([]string, 0, len(e.handlers))
	for n := range e.handlers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// notifyLocked wakes whoever waits on the current changed channel.
func (e *Executor) notifyLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// observe returns a channel closed at the next change of state.
func (e *Executor) observe() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed
}

// kick does a non-blocking send on a 1-buffered signal channel.
func kick(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
