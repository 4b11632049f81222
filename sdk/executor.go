package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
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

// slot is an accepted slot attempt that has not finished: queued or running.
type slot struct {
	task    *Task
	handler Handler
	timeout time.Duration
	started time.Time               // zero while queued
	cancel  context.CancelCauseFunc // nil while queued
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

// cancelRunning cancels the context of every running slot with cause and
// returns how many there were.
func (e *Executor) cancelRunning(cause error) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, s := range e.slots {
		if s.cancel != nil {
			s.cancel(cause)
			n++
		}
	}
	return n
}

// accept takes the assignments of a push or a heartbeat response and returns
// the tokens the executor holds among them: new ones and ones it already
// knows (queued, running, or finished recently) — so a push and a heartbeat
// delivering the same assignment start it once. Tokens not returned were
// refused (the executor is stopping, or MaxPendingResults is reached).
// started lists the accepted tokens that are not queued: started now, or
// already running or finished.
func (e *Executor) accept(as []protocol.RunAssignment, source string) (accepted, started []int64, seq int64) {
	now := time.Now()
	accepted = []int64{}
	refused := 0
	e.mu.Lock()
	defer e.mu.Unlock()
	// Numbered before anything is taken: every heartbeat built from now on
	// reports what this batch accepted (the admin reconciles on it).
	e.acceptSeq++
	seq = e.acceptSeq
	for i := range as {
		ra := &as[i]
		var problem string // of the run's last slot that failed before start
		failed := 0
		for _, sa := range ra.Slots {
			if e.knownLocked(sa.Token) {
				accepted = append(accepted, sa.Token)
				_, finished := e.finished[sa.Token]
				if s, ok := e.slots[sa.Token]; ok && s.cancel != nil || finished {
					started = append(started, sa.Token) // running or finished; not queued or given back
				}
				continue
			}
			if e.state != stateRunning || len(e.slots)+len(e.pending) >= e.cfg.MaxPendingResults {
				refused++
				continue
			}
			accepted = append(accepted, sa.Token)
			t := e.newTask(ra, sa)
			h, ok := e.handlers[ra.Handler]
			bad := ""
			switch {
			case !ok:
				bad = fmt.Sprintf("no handler named %s registered on this executor (app %s)", ra.Handler, e.cfg.App)
			case ra.Total < 1 || sa.Slot < 0 || sa.Slot >= ra.Total:
				bad = fmt.Sprintf("invalid assignment: slot %d is outside [0, %d)", sa.Slot, ra.Total)
			}
			if bad != "" {
				problem = bad
				failed++
				e.finishLocked(protocol.SlotResult{
					Token: sa.Token, Status: protocol.SlotFailed, Error: bad,
					StartedAt: now.UnixMilli(), FinishedAt: now.UnixMilli(),
				})
				started = append(started, sa.Token)
				continue
			}
			s := &slot{task: t, handler: h, timeout: time.Duration(ra.TimeoutMS) * time.Millisecond}
			e.slots[sa.Token] = s
			if e.running < e.cfg.Capacity {
				e.startLocked(s)
				started = append(started, sa.Token)
			} else {
				e.queue = append(e.queue, s)
				t.Logger.Debug("slot queued: executor at capacity", "capacity", e.cfg.Capacity, "queued", len(e.queue))
			}
		}
		if failed > 0 { // one line per run, not per slot
			e.log.Error("slots failed before start", "run_id", ra.RunID, "job", ra.JobName,
				"handler", ra.Handler, "slots", failed, "err", problem, "source", source)
		}
	}
	e.notifyLocked()
	if refused > 0 {
		e.stats.Refused += uint64(refused)
		switch {
		case e.state != stateRunning:
			e.log.Debug("ignoring assignments: executor is stopping", "slots", refused, "source", source)
		case !e.refusedLogged:
			e.refusedLogged = true
			e.log.Warn("refusing assignments: MaxPendingResults reached (results are not being acknowledged by any admin)",
				"slots", refused, "max_pending_results", e.cfg.MaxPendingResults,
				"pending_results", len(e.pending), "unfinished", len(e.slots), "source", source)
		default:
			e.log.Debug("refusing assignments: MaxPendingResults reached", "slots", refused, "source", source)
		}
	}
	return accepted, started, seq
}

func (e *Executor) knownLocked(token int64) bool {
	if _, ok := e.slots[token]; ok {
		return true
	}
	if e.released[token] {
		return true // given back: never started here, even if delivered again
	}
	_, ok := e.finished[token]
	return ok
}

func (e *Executor) newTask(ra *protocol.RunAssignment, sa protocol.SlotAttempt) *Task {
	t := &Task{
		RunID:       ra.RunID,
		JobID:       ra.JobID,
		JobName:     ra.JobName,
		Handler:     ra.Handler,
		ScheduledAt: time.UnixMilli(ra.ScheduledAt),
		Slot:        sa.Slot,
		Total:       ra.Total,
		Params:      ra.Params,
		SlotParam:   sa.Param,
		Token:       sa.Token,
		Attempt:     sa.Attempt,
		Workflow:    ra.Workflow,
		Logger:      e.taskLogger(ra, sa), // tagged with run_id, job, slot, token, attempt (logship.go)
	}
	if ra.Records != nil {
		t.Records = *ra.Records
	}
	return t
}

// startLocked runs s in a goroutine of its own.
func (e *Executor) startLocked(s *slot) {
	e.running++
	e.stats.Started++
	s.started = time.Now()
	ctx, cancel := context.WithCancelCause(e.baseCtx)
	s.cancel = cancel
	e.handlersWG.Add(1)
	go e.run(ctx, s)
}

func (e *Executor) run(ctx context.Context, s *slot) {
	defer e.handlersWG.Done()
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, s.timeout, &TimeoutError{Timeout: s.timeout})
		defer cancel()
	}
	// Per-slot lines are debug: at thousands of slots a second they would be
	// most of the log (and of the shipped lines); the admin records every
	// attempt's start and end anyway. A failed slot is logged at warn.
	s.task.Logger.Debug("slot started", "handler", s.task.Handler)
	var err error
	returned := false
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			s.task.Logger.Error("handler panicked", "panic", fmt.Sprint(v), "stack", string(pe.Stack))
			err = pe
		} else if !returned {
			err = errors.New("handler called runtime.Goexit instead of returning")
		}
		res := e.result(ctx, s, err)
		s.cancel(nil)
		if res.Status == protocol.SlotSucceeded {
			s.task.Logger.Debug("slot finished", "status", res.Status, "duration", time.Since(s.started).Round(time.Millisecond).String())
		} else {
			s.task.Logger.Warn("slot finished", "status", res.Status, "duration", time.Since(s.started).Round(time.Millisecond).String(), "err", res.Error)
		}
		e.finish(s, res)
	}()
	err = s.handler(ctx, s.task)
	returned = true
}

// result turns a handler's return into the slot's result: nil → succeeded;
// context cancelled by the admin or by Stop → cancelled; anything else
// (including a timeout and a panic) → failed, with its error class: timeout
// when the slot's timeout ended it, permanent when the error wraps a
// *PermanentError (Permanent), retryable otherwise (with the delay of a
// *RetryAfterError, RetryAfter).
func (e *Executor) result(ctx context.Context, s *slot, err error) protocol.SlotResult {
	t := s.task
	res := protocol.SlotResult{
		Token:      t.Token,
		StartedAt:  s.started.UnixMilli(),
		FinishedAt: time.Now().UnixMilli(),
	}
	res.Processed, res.Skipped, res.Failed, res.Uncertain = t.Counts()
	var pe *PanicError
	var ce *CancelledError
	var se *StoppingError
	cause := context.Cause(ctx) // nil unless ctx is done
	switch {
	case err == nil:
		res.Status, res.Result = protocol.SlotSucceeded, t.Result()
	case errors.As(err, &pe):
		// A panic is a bug, not a verdict on the input: retryable, even
		// when the panic value wraps a *PermanentError.
		res.Status, res.Error, res.ErrorClass = protocol.SlotFailed, err.Error(), protocol.ClassRetryable
	case cause != nil && (errors.As(cause, &ce) || errors.As(cause, &se)):
		res.Status, res.Error = protocol.SlotCancelled, withCause(cause, err)
	case cause != nil:
		res.Status, res.Error, res.ErrorClass = protocol.SlotFailed, withCause(cause, err), protocol.ClassRetryable
		var te *TimeoutError
		if errors.As(cause, &te) {
			res.ErrorClass = protocol.ClassTimeout
		}
	default:
		res.Status, res.Error = protocol.SlotFailed, err.Error()
		res.ErrorClass, res.RetryAfterMS = classify(err)
	}
	if len(res.Error) > maxErrorLen {
		res.Error = res.Error[:maxErrorLen] + "…"
	}
	return res
}

// withCause describes a handler error after its context ended: the cause,
// followed by the handler's own error unless it only echoes the context's.
func withCause(cause, err error) string {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, cause) {
		return cause.Error()
	}
	return cause.Error() + ": " + err.Error()
}

// finish records the result of a started slot and starts queued ones.
func (e *Executor) finish(s *slot, res protocol.SlotResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.slots, s.task.Token)
	e.running--
	e.finishLocked(res)
	e.startQueuedLocked()
	if e.running == 0 && e.idle != nil {
		close(e.idle)
		e.idle = nil
	}
}

// startQueuedLocked starts queued slots in arrival order while capacity
// allows, but asks first when the contact with the admins is stale (the
// process was frozen, or cut off): it waits for a heartbeat answer, which
// cancels the queued tokens that were moved elsewhere meanwhile, and the
// heartbeat calls it again.
func (e *Executor) startQueuedLocked() {
	if e.state != stateRunning {
		return
	}
	for e.running < e.cfg.Capacity && len(e.queue) > 0 {
		if e.contactStaleLocked(time.Now()) {
			e.log.Debug("holding queued slots until an admin answers a heartbeat", "queued", len(e.queue),
				"last_heartbeat", e.lastBeat)
			kick(e.hbKick)
			return
		}
		next := e.queue[0]
		e.queue[0] = nil
		e.queue = e.queue[1:]
		e.startLocked(next)
	}
}

// finishLocked queues res for delivery.
func (e *Executor) finishLocked(res protocol.SlotResult) {
	e.finished[res.Token] = time.Time{}
	e.pending = append(e.pending, res)
	if e.journal != nil {
		if err := e.journal.add(res); err != nil {
			e.log.Error("results journal: cannot record a result on disk; it is kept in memory", "token", res.Token, "err", err)
		}
	}
	e.stats.RecordsProcessed += uint64(max(res.Processed, 0))
	e.stats.RecordsSkipped += uint64(max(res.Skipped, 0))
	e.stats.RecordsFailed += uint64(max(res.Failed, 0))
	e.stats.RecordsUncertain += uint64(max(res.Uncertain, 0))
	switch res.Status {
	case protocol.SlotSucceeded:
		e.stats.Succeeded++
	case protocol.SlotCancelled:
		e.stats.Cancelled++
	default:
		e.stats.Failed++
	}
	kick(e.resWake)
	e.notifyLocked()
}

// cancel cancels the given tokens: a running slot's context is cancelled (it
// reports cancelled when its handler returns), a queued slot is finished as
// cancelled at once. Unknown and finished tokens are ignored. It returns the
// tokens found.
func (e *Executor) cancel(tokens []int64, reason, source string) []int64 {
	found := []int64{}
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, tok := range tokens {
		s, ok := e.slots[tok]
		if !ok {
			continue
		}
		found = append(found, tok)
		cause := &CancelledError{Reason: reason}
		if s.cancel != nil {
			s.task.Logger.Info("cancelling slot", "reason", reason, "source", source)
			s.cancel(cause)
			continue
		}
		s.task.Logger.Info("cancelling queued slot before it started", "reason", reason, "source", source)
		if i := slices.Index(e.queue, s); i >= 0 {
			e.queue = slices.Delete(e.queue, i, i+1)
		}
		delete(e.slots, tok)
		e.finishLocked(protocol.SlotResult{
			Token: tok, Status: protocol.SlotCancelled, Error: cause.Error() + " (before it started)",
			StartedAt: now.UnixMilli(), FinishedAt: now.UnixMilli(),
		})
	}
	return found
}

// release gives back the given tokens that are queued (accepted, not
// started): they leave the queue and will never start on this executor. A
// running, finished or unknown token is kept as it is. It returns the tokens
// given back. The decision is taken under the executor's lock, so a token is
// either started here or released, never both.
func (e *Executor) release(tokens []int64, reason string) []int64 {
	released := []int64{}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, tok := range tokens {
		s, ok := e.slots[tok]
		if !ok || s.cancel != nil {
			continue
		}
		if i := slices.Index(e.queue, s); i >= 0 {
			e.queue = slices.Delete(e.queue, i, i+1)
		}
		delete(e.slots, tok)
		e.released[tok] = true
		e.stats.Released++
		released = append(released, tok)
		s.task.Logger.Info("queued slot given back to the admin before it started", "reason", reason)
	}
	if len(released) > 0 {
		e.notifyLocked()
	}
	return released
}

// forgetReleased drops released tokens the admin reports as no longer
// current for this executor.
func (e *Executor) forgetReleased(tokens []int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, tok := range tokens {
		delete(e.released, tok)
	}
}

func (e *Executor) handlerNamesLocked() []string {
	names := make([]string, 0, len(e.handlers))
	for n := range e.handlers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Stats is a snapshot of an executor's state and counters, for metrics.
type Stats struct {
	Running        int // handlers running now
	Queued         int // accepted slots waiting for capacity
	PendingResults int // results not yet acknowledged by an admin

	Started   uint64 // handlers started
	Succeeded uint64 // slots finished succeeded
	Failed    uint64 // slots finished failed (including unknown handler, timeout, panic)
	Cancelled uint64 // slots finished cancelled

	ResultsAccepted uint64 // results acknowledged as accepted
	ResultsRejected uint64 // results acknowledged as rejected (stale token)
	// Refused counts slot assignments not accepted: while stopping, or
	// because MaxPendingResults was reached.
	Refused uint64
	// Released counts queued slots given back unstarted to the admin (work
	// stealing: an idle executor runs them instead).
	Released uint64

	Heartbeats        uint64 // heartbeats an admin answered
	HeartbeatFailures uint64 // heartbeats no admin answered
	ResultFailures    uint64 // result requests no admin answered
	// LastHeartbeat is when an admin last answered a heartbeat (zero: never).
	LastHeartbeat time.Time

	// Records counted by finished slots (Task.AddProcessed and the like).
	RecordsProcessed, RecordsSkipped, RecordsFailed, RecordsUncertain uint64

	ExecutorID int64  // the id the admin gave this executor (0 until it answered)
	Admin      string // the admin requests go to first
}

// Stats returns a snapshot of the executor's state and counters.
func (e *Executor) Stats() Stats {
	e.mu.Lock()
	s := e.stats
	s.Running, s.Queued, s.PendingResults = e.running, len(e.queue), len(e.pending)
	s.ExecutorID = e.executorID
	s.LastHeartbeat = e.lastBeat
	e.mu.Unlock()
	s.Admin = e.client.current()
	return s
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
