package xxljob

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// ErrNotXXL is returned by Log and Kill for an attempt whose executor is not
// an XXL-JOB executor.
var ErrNotXXL = errors.New("the attempt was not placed on an XXL-JOB executor")

// ErrEnded is returned by Kill for an attempt that already has its outcome
// (or was superseded): there is nothing of it to kill.
var ErrEnded = errors.New("the attempt has ended: nothing to kill")

// ErrNoToken is returned when the app of an executor has no access token
// configured.
var ErrNoToken = errors.New("no XXL-JOB access token configured for the app")

// Service is XXL-JOB executor support for one admin replica: the admin API
// XXL-JOB executors call (ServeHTTP), the routing Pusher the scheduler uses
// (Router), the prober (Run) and the console's log and kill (Log, Kill).
// Create it with New.
type Service struct {
	cfg     Config
	st      *store.Store
	runs    *runstate.Machine // finishes attempts
	client  *Client
	allowed *AllowedHosts
	log     *slog.Logger
	tokens  map[string]string

	mu        sync.Mutex
	sending   map[int64]bool      // tokens whose run call this replica is making
	recording map[int64]bool      // tokens whose callback this replica is recording
	busy      map[int64]int64     // token → executor id: refused as busy, or held (not its handler's turn), sent again at the next probe
	idle      map[int64]idleCheck // running token → what its executor's idleBeat said

	// concurrent: apps whose executors may run several slots of one
	// handler at a time (Config.ConcurrentApps).
	concurrent map[string]bool
	// kick carries executor ids whose held attempts may be sent now (a
	// callback ended one of their attempts); Run sends them.
	kick chan int64

	// ignoredCallbacks counts callbacks for attempts that already had their
	// outcome (duplicates, or after the admin killed, cancelled or timed
	// out the attempt).
	ignoredCallbacks atomic.Int64
	idleLost         atomic.Int64
}

// Stats are counters of a Service since it was created.
type Stats struct {
	// IgnoredCallbacks: callbacks for an attempt that already had its
	// outcome — a duplicate (some executors send one twice), or one that
	// came after the admin killed, cancelled or timed out the attempt. The
	// first outcome stands; these are acknowledged and logged.
	IgnoredCallbacks int64
	// BusyWaiting: attempts the executor refused because a task of the
	// same XXL-JOB job id was running there, or held in the admin because
	// another slot of their handler runs there (Config.ConcurrentApps),
	// waiting to be sent.
	BusyWaiting int
	// IdleLost: running attempts the admin marked lost because their
	// executor said twice that it was idle for their job id and no callback
	// came.
	IdleLost int64
}

// Stats returns the Service's counters.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{IgnoredCallbacks: s.ignoredCallbacks.Load(), BusyWaiting: len(s.busy), IdleLost: s.idleLost.Load()}
}

// New returns a Service. It reads Config.TokensFile and checks the tokens
// and Config.AllowedHosts. Close it after its last use.
func New(cfg Config, st *store.Store) (*Service, error) {
	cfg = cfg.WithDefaults()
	if st == nil {
		return nil, errors.New("xxljob: a store is required")
	}
	tokens := maps.Clone(cfg.Tokens)
	if tokens == nil {
		tokens = map[string]string{}
	}
	if cfg.TokensFile != "" {
		m, err := loadTokensFile(cfg.TokensFile)
		if err != nil {
			return nil, fmt.Errorf("--xxljob-tokens: %w", err)
		}
		maps.Copy(tokens, m)
	}
	cfg.Tokens = tokens
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("--xxljob-tokens: %w", err)
	}
	allowed, err := ParseAllowedHosts(cfg.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("--xxljob-allowed-hosts: %w", err)
	}
	concurrent, err := cfg.concurrentApps()
	if err != nil {
		return nil, fmt.Errorf("--xxljob-concurrent-apps: %w", err)
	}
	return &Service{
		cfg: cfg, st: st, runs: runstate.New(st), client: NewClient(cfg.RequestTimeout, allowed), allowed: allowed,
		log: cfg.Logger.With("component", "xxljob"), tokens: tokens,
		sending: map[int64]bool{}, recording: map[int64]bool{}, busy: map[int64]int64{},
		concurrent: concurrent, idle: map[int64]idleCheck{}, kick: make(chan int64, 64),
	}, nil
}

// Close releases the connections kept alive to executors. Call it once
// nothing uses the Service any more (Run returned, the HTTP server shut
// down).
func (s *Service) Close() { s.client.CloseIdleConnections() }

// AllowedHosts returns where executors may be (for the start-up log).
func (s *Service) AllowedHosts() string { return s.allowed.String() }

// Apps returns how many apps have an access token.
func (s *Service) Apps() int { return len(s.tokens) }

// tokenFor returns the access token of an app.
func (s *Service) tokenFor(app string) (string, error) {
	t, ok := s.tokens[app]
	if !ok {
		return "", fmt.Errorf("app %s: %w", app, ErrNoToken)
	}
	return t, nil
}

// target is how to call the executor of app at address whose recorded
// version is version (its generation: GenerationOf).
func (s *Service) target(app, address, version string) (Target, error) {
	tok, err := s.tokenFor(app)
	return Target{Address: address, App: app, Token: tok, Generation: GenerationOf(version)}, err
}

// tokenMatches compares in constant time.
func tokenMatches(want, got string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// instanceID is the executor identity of an XXL-JOB executor: its app and
// address (XXL-JOB executors have no instance id of their own).
func instanceID(app, address string) string { return "xxljob:" + app + "@" + address }

// claim marks tokens in set (s.sending, s.recording) and returns those
// that were not marked already: this replica works on a token once at a
// time.
func (s *Service) claim(set map[int64]bool, tokens []int64) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := tokens[:0:0]
	for _, t := range tokens {
		if !set[t] {
			set[t] = true
			out = append(out, t)
		}
	}
	return out
}

// unclaim removes the marks claim made.
func (s *Service) unclaim(set map[int64]bool, tokens []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tokens {
		delete(set, t)
	}
}

// setBusy records (busy) or forgets the busy refusal of a token.
func (s *Service) setBusy(token, executorID int64, busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if busy {
		s.busy[token] = executorID
	} else {
		delete(s.busy, token)
	}
}

// busyOf returns the tokens of an executor refused as busy.
func (s *Service) busyOf(executorID int64) map[int64]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int64]bool{}
	for t, e := range s.busy {
		if e == executorID {
			out[t] = true
		}
	}
	return out
}

// attemptOnXXL returns the attempt and how to call its executor, or
// ErrNotXXL.
func (s *Service) attemptOnXXL(ctx context.Context, token int64) (store.TokenInfo, Target, error) {
	info, err := s.st.TokenInfo(ctx, token)
	if err != nil {
		return info, Target{}, err
	}
	if info.Protocol != store.ProtocolXXLJob {
		return info, Target{}, fmt.Errorf("attempt %d: %w", token, ErrNotXXL)
	}
	t, err := s.target(info.App, info.Address, info.Version)
	return info, t, err
}

// Log reads the executor's log of an attempt, from line from (1-based).
func (s *Service) Log(ctx context.Context, token int64, from int) (LogResult, error) {
	info, t, err := s.attemptOnXXL(ctx, token)
	if err != nil {
		return LogResult{}, err
	}
	return s.client.Log(ctx, t, LogParam{LogDateTim: info.ScheduledAt, LogDateTime: info.ScheduledAt, LogID: token,
		JobID: SlotJobID(info.JobID, info.Slot), FromLineNum: max(from, 1)})
}

// Kill ends an attempt running on an XXL-JOB executor: the admin records
// it failed ("killed by <by>"; the job's retry policy decides what follows)
// and then asks the executor to kill the slot's XXL-JOB job id
// (SlotJobID). The outcome is recorded first, in the database, because
// some executors (xxl-job-executor-go) call back success for a killed task:
// that callback, on whichever admin replica it arrives, then finds the
// attempt ended and is ignored. ErrEnded when the attempt has its outcome
// already. The kill call's own result is only logged (see killSlots): the
// attempt is failed either way. To stop a whole run on every executor,
// cancel the run.
func (s *Service) Kill(ctx context.Context, token int64, by string) error {
	info, t, err := s.attemptOnXXL(ctx, token)
	if err != nil {
		return err
	}
	if !info.Current || (info.Status != store.AttemptAssigned && info.Status != store.AttemptRunning) {
		return fmt.Errorf("attempt %d is %s: %w", token, info.Status, ErrEnded)
	}
	now, err := s.st.NowMS(ctx)
	if err != nil {
		return err
	}
	o := store.SlotOutcome{ExecutorID: info.ExecutorID, SlotResult: protocol.SlotResult{
		Token: token, Status: store.AttemptFailed, FinishedAt: now, ErrorClass: protocol.ClassCancelled,
	}, Reason: msg.New(msg.AttemptXXLKilled, "user", by, "address", info.Address)}
	if info.StartedAt.Valid && info.StartedAt.Int64 <= now {
		o.StartedAt = info.StartedAt.Int64
	}
	acc, err := s.runs.FinishAttempts(ctx, []store.SlotOutcome{o})
	if err != nil {
		return err
	}
	if !acc[0] {
		return fmt.Errorf("attempt %d: %w", token, ErrEnded)
	}
	s.killSlots(ctx, t, []store.JobSlot{{JobID: info.JobID, Slot: info.Slot}}, "killed by "+by)
	return nil
}

// killSlots asks an XXL-JOB executor to kill the per-slot job ids of slots,
// whose attempts the admin has already ended (cancelled, failed, timed
// out), and logs what came of it in the terms of the protocol: XXL-JOB
// executors have no heartbeat through which they would learn it later.
func (s *Service) killSlots(ctx context.Context, t Target, slots []store.JobSlot, why string) {
	address := t.Address
	for _, js := range slots {
		id := SlotJobID(js.JobID, js.Slot)
		err := s.client.Kill(ctx, t, id)
		var ce *CallError
		switch {
		case err == nil:
			s.log.Info("killed on XXL-JOB executor", "address", address, "job_id", js.JobID, "slot", js.Slot, "xxl_job_id", id, "why", why)
		case errors.As(err, &ce):
			s.log.Info("XXL-JOB executor refused the kill: it no longer runs the slot (nothing to stop; a callback that still comes is ignored, the attempt has ended)",
				"address", address, "job_id", js.JobID, "slot", js.Slot, "xxl_job_id", id, "code", ce.Code, "msg", ce.Msg, "why", why)
		default:
			s.log.Warn("kill did not reach the XXL-JOB executor: it has no heartbeat through which to learn it later, so its task may run to its end (its callback is ignored: the attempt has ended)",
				"address", address, "job_id", js.JobID, "slot", js.Slot, "xxl_job_id", id, "err", err, "why", why)
		}
	}
}
