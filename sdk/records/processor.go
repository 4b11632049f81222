package records

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardjob/shardjob/sdk"
)

// Statuses of dedup_record.status.
const (
	statusPending = "pending"
	statusDone    = "done"
	statusFailed  = "failed"
)

// finalWriteTimeout bounds the writes Process still makes after its context
// was cancelled: marking the outcomes it has, giving back records it claimed
// but never started, releasing the lock.
const finalWriteTimeout = 10 * time.Second

// finalWriteContext is the context of such a write: ctx's values, not its
// cancellation, and finalWriteTimeout.
func finalWriteContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), finalWriteTimeout)
}

// maxListedKeys caps Result.UncertainKeys and Result.FailedKeys.
const maxListedKeys = 1000

// Processor runs the records of slots through the shard lock and the dedup
// table of one database. Create it once with New and share it: it is safe
// for concurrent use, by any number of slots at once.
type Processor struct {
	cfg   Config
	q     queries
	scope Scope
	state *processorState // shared with the copies made by WithScope

	// Set by this package's tests and benchmarks only.
	hooks       *testHooks
	noLockCheck bool // benchmark: measure the cost of the fencing check
}

type processorState struct {
	mu     sync.Mutex
	active map[attemptID]bool // the Process calls running
}

// attemptID is one attempt (token) of one slot.
type attemptID struct {
	slotID
	token int64
}

// testHooks let tests simulate a crash at a precise point.
type testHooks struct {
	// beforeMark runs before each External mark transaction with its keys;
	// an error stops Process as a crash would: nothing more is written (no
	// mark, no give-back, no release) and Process returns the error.
	beforeMark func(keys []string) error
	// retried is told about every transaction Process runs again.
	retried func(err error)
}

// New validates cfg (after WithDefaults) and returns a Processor. It does not
// touch the database; see EnsureSchema.
func New(cfg Config) (*Processor, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	q, err := loadQueries(cfg.Dialect)
	if err != nil {
		return nil, err
	}
	return &Processor{cfg: cfg, q: q, scope: cfg.Scope, state: &processorState{active: map[attemptID]bool{}}}, nil
}

// WithScope returns a Processor that shares p's configuration, database and
// running slots but processes records in scope s, e.g. a scope named after
// the business date of the run. An invalid scope makes Process fail.
func (p *Processor) WithScope(s Scope) *Processor {
	c := *p
	c.scope = s
	return &c
}

// EnsureSchema creates shard_lock and dedup_record (and their indexes) when
// they do not exist, from the DDL embedded in this package (see DDL). It is
// opt-in: teams that manage schemas with a migration tool apply DDL's text
// themselves.
func (p *Processor) EnsureSchema(ctx context.Context) error {
	ddl, err := DDL(p.cfg.Dialect)
	if err != nil {
		return err
	}
	for _, stmt := range splitStatements(ddl) {
		if _, err := p.cfg.DB.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("records: create schema (%.60s…): %w", stmt, err)
		}
	}
	return nil
}

// Func applies one record. It returns nil when the effect is applied, an
// error when it is not (the record is marked failed and retried by a later
// attempt), or, in External mode, an error wrapping ErrUncertain when it
// cannot tell. It must return when ctx is done.
//
// In Transactional mode it must write its effect through rec.Tx, and only
// there: the transaction may be rolled back and run again (deadlock, a
// failure of another record of the batch), so the effects of all but one
// call are rolled back. It must not commit or roll back rec.Tx, and must not
// use the Processor's DB directly while holding rec.Tx (on SQLite that waits
// for itself).
//
// In External mode, calls run concurrently (Config.Concurrency).
type Func func(ctx context.Context, rec Record) error

// Record is one record handed to a Func.
type Record struct {
	// Key is the record's key, as yielded by the Source.
	Key string
	// IdempotencyKey is "<job_id>|<scope>|<key>", e.g. "42|job|invoice-7"
	// or "42|run:1001|invoice-7": the same for every attempt that handles
	// this record, different for every other record. Pass it to the remote
	// system (an Idempotency-Key header, a unique column) so that a repeat
	// (policy Retry) is harmless.
	IdempotencyKey string
	// Tx is the transaction in which the record is marked done
	// (Transactional mode); nil in External mode.
	Tx *sql.Tx
	// Attempt is 1 the first time the record is handed to a handler, then
	// 2, 3, … up to Config.MaxRecordAttempts.
	Attempt int
	// Uncertain is true when an earlier attempt may already have applied
	// the record: it was left pending by an attempt that crashed or was
	// replaced (policy Retry).
	Uncertain bool
}

// Result counts what one Process call did. Every key read is counted once:
// in Processed, Skipped, Failed, Exhausted, or Uncertain when it is left
// pending; an uncertain record retried under policy Retry is counted both in
// Uncertain and in Processed or Failed.
type Result struct {
	Read      int64 // keys read from the Source
	Processed int64 // applied by the handler and marked done by this call
	Skipped   int64 // not handed to the handler: done already, being processed by another live attempt, or repeated by the Source
	Failed    int64 // the handler returned an error; marked failed, retried by later attempts while attempts < MaxRecordAttempts
	Exhausted int64 // found failed MaxRecordAttempts times already: left failed, not handed to the handler
	Uncertain int64 // found pending from an attempt that could not finish it, or ErrUncertain returned by the handler
	Retries   int64 // transactions run again after a deadlock, lock wait timeout, SQLite busy or a concurrent change

	// UncertainKeys lists (up to 1000) the uncertain records this call left
	// pending: policy Skip, attempts exhausted, or ErrUncertain. Someone
	// has to check whether their effect happened.
	UncertainKeys []string
	// FailedKeys lists (up to 1000) the records that failed in this call.
	FailedKeys []string
	// FirstError is the first error a handler returned in this call.
	FirstError error
}

// Err returns nil when no record failed, else an error wrapping
// ErrRecordsFailed that says how many and the first error. A handler
// returns it to make the slot fail, so that the admin's retry (a new
// attempt) retries the failed records.
func (r Result) Err() error {
	if r.Failed == 0 && r.Exhausted == 0 {
		return nil
	}
	msg := fmt.Sprintf("%d records failed in this attempt", r.Failed)
	if r.Exhausted > 0 {
		msg += fmt.Sprintf(", %d records are left failed after the maximum number of attempts", r.Exhausted)
	}
	if r.FirstError != nil {
		msg += "; first error: " + r.FirstError.Error()
	}
	return fmt.Errorf("%w: %s", ErrRecordsFailed, msg)
}

// Process runs one slot: it takes the shard lock with task.Token (see
// Acquire), reads keys from src in batches of BatchSize, claims them in the
// dedup table, hands the records that are not done to fn, records their
// outcome, and releases the lock. See the package documentation for the
// protocol and the guarantee of each Mode.
//
// It returns when src is exhausted and every outcome is recorded, or early
// with an error: a *FencedError (the attempt was replaced: nothing more was
// written), ctx's cause, a Source error, a database error that is not a
// transient conflict, ErrInvalidKey. Records that fail are counted in the
// Result, not returned as an error: see Result.Err.
//
// Counters and progress go to task as records are recorded (AddProcessed,
// AddSkipped, AddFailed, AddUncertain, Progress).
func (p *Processor) Process(ctx context.Context, task *sdk.Task, src Source, fn Func) (Result, error) {
	if err := checkTask(task); err != nil {
		return Result{}, err
	}
	if src == nil || fn == nil {
		return Result{}, errors.New("records: Process needs a Source and a Func")
	}
	pol, err := p.policyFor(task)
	if err != nil {
		return Result{}, err
	}
	id := attemptID{slotID{task.JobID, task.RunID, task.Slot}, task.Token}
	if !p.state.enter(id) {
		return Result{}, fmt.Errorf("%w (job %d run %d slot %d token %d)", ErrSlotBusy, id.job, id.run, id.slot, id.token)
	}
	defer p.state.leave(id)

	log := task.Logger
	if log == nil {
		log = p.cfg.Logger.With("job_id", task.JobID, "run_id", task.RunID, "slot", task.Slot, "token", task.Token)
	}
	if pol.replacedScope != ScopeRun {
		log.Warn("the job's dedup_scope replaces the scope this handler chose: records are deduplicated in the job's scope",
			"job_scope", task.Records.Scope, "handler_scope", string(pol.replacedScope))
	}
	lock, err := p.Acquire(ctx, task)
	if err != nil {
		return Result{}, err
	}
	scope := pol.scope.resolve(task.RunID)
	r := &run{
		p: p, task: task, lock: lock, scope: scope, fn: fn, src: src, log: log,
		uncertainPolicy: pol.uncertain, maxAttempts: pol.maxAttempts,
		idemPrefix: strconv.FormatInt(task.JobID, 10) + "|" + scope + "|",
		inflight:   map[string]bool{},
	}
	if p.cfg.Dialect == DialectSQLite {
		r.scopeArg = scope
	} else {
		r.scopeArg = []byte(scope)
	}
	if s, ok := src.(Sized); ok {
		r.total = s.Len()
	}
	return r.process(ctx)
}

func (s *processorState) enter(id attemptID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[id] {
		return false
	}
	s.active[id] = true
	return true
}

func (s *processorState) leave(id attemptID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.active, id)
}

// run is the state of one Process call.
type run struct {
	p        *Processor
	task     *sdk.Task
	lock     *Lock
	scope    string
	scopeArg any // scope as a query argument: []byte on MySQL (binary column)
	// The job's policy over the Processor's Config (policyFor).
	uncertainPolicy UncertainPolicy
	maxAttempts     int
	idemPrefix      string
	fn              Func
	src             Source
	log             *slog.Logger
	total           int64 // keys the Source will yield, 0 if unknown

	// Counters of the Result.
	read, processed, skipped, failed, exhausted, uncertain, retries atomic.Int64

	sourceDone atomic.Bool // the Source reported its end
	stopWrites atomic.Bool // fenced or crashed: write nothing more

	mu            sync.Mutex
	err           error // the first error; ends the call
	cancel        context.CancelCauseFunc
	parent        context.Context // Process's ctx: its cause explains a cancelled database call
	inflight      map[string]bool // External: claimed and not recorded yet
	uncertainKeys []string
	failedKeys    []string
	firstErr      error
}

func (r *run) process(parent context.Context) (Result, error) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	r.cancel, r.parent = cancel, parent

	stopRenew := make(chan struct{})
	var renewer sync.WaitGroup
	renewer.Go(func() { r.renewLoop(ctx, stopRenew) })

	switch r.p.cfg.Mode {
	case External:
		r.external(ctx, parent)
	case Transactional:
		r.transactional(ctx)
	}
	close(stopRenew)
	renewer.Wait()

	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if err == nil && !r.sourceDone.Load() {
		err = context.Cause(parent) // cancelled by the caller before the end
		if err == nil {
			err = context.Cause(ctx)
		}
	}
	if !r.stopWrites.Load() {
		wctx, wcancel := finalWriteContext(parent)
		if rerr := r.lock.Release(wctx); rerr != nil {
			r.log.Warn("records: could not release the shard lock (it expires after its lease)", "err", rerr)
		}
		wcancel()
	}
	return r.result(), err
}

// retried counts and logs a transaction run again after a transient
// conflict.
func (r *run) retried(err error) {
	r.retries.Add(1)
	r.log.Debug("records: transaction run again after a transient conflict", "err", err)
	if h := r.p.hooks; h != nil && h.retried != nil {
		h.retried(err)
	}
}

// fail records the first error and stops the call.
func (r *run) fail(err error) {
	// A database call cut short because Process's ctx ended reports a bare
	// context.Canceled: report why ctx ended instead (e.g. the admin
	// cancelled the slot, or its timeout passed).
	if r.parent != nil && r.parent.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		if cause := context.Cause(r.parent); cause != nil && !errors.Is(err, cause) {
			err = cause
		}
	}
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	if errors.Is(err, ErrFenced) {
		r.stopWrites.Store(true)
	}
	r.cancel(err)
}

func (r *run) result() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Result{
		Read: r.read.Load(), Processed: r.processed.Load(), Skipped: r.skipped.Load(), Failed: r.failed.Load(),
		Exhausted: r.exhausted.Load(), Uncertain: r.uncertain.Load(), Retries: r.retries.Load(),
		UncertainKeys: r.uncertainKeys, FailedKeys: r.failedKeys, FirstError: r.firstErr,
	}
}

// renewLoop renews the lease every LockLease/3 until stop is closed.
func (r *run) renewLoop(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(r.p.cfg.LockLease / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := r.lock.Renew(ctx)
		switch {
		case errors.Is(err, ErrFenced):
			r.fail(err)
			return
		case err != nil && ctx.Err() == nil:
			r.log.Warn("records: shard lock renewal failed; retrying (the lease is a safety net, fencing does not depend on it)", "err", err)
		}
	}
}

// next reads one batch from the Source: keys, and whether it was the last.
func (r *run) next(ctx context.Context) ([]string, bool, error) {
	keys, err := r.src.Next(ctx, r.p.cfg.BatchSize)
	end := len(keys) == 0
	if err != nil {
		if !isEOF(err) {
			return nil, false, fmt.Errorf("records: source: %w", err)
		}
		end = true
	}
	if len(keys) > r.p.cfg.BatchSize {
		return nil, false, fmt.Errorf("records: source returned %d keys, more than the %d asked for", len(keys), r.p.cfg.BatchSize)
	}
	r.read.Add(int64(len(keys)))
	return keys, end, nil
}

// prepare validates a batch, drops the keys repeated within it (and, in
// External mode, the keys being processed), and sorts it: transactions that
// lock rows in one order do not deadlock each other.
func (r *run) prepare(keys []string) ([]string, error) {
	out := make([]string, 0, len(keys))
	seen := make(map[string]bool, len(keys))
	var dups int64
	r.mu.Lock()
	for _, k := range keys {
		if k == "" || len(k) > MaxKeyLen {
			r.mu.Unlock()
			return nil, fmt.Errorf("%w: %q is %d bytes: keys must be 1 to %d bytes", ErrInvalidKey, truncate(k, 40), len(k), MaxKeyLen)
		}
		if seen[k] || r.inflight[k] {
			dups++
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	r.mu.Unlock()
	if dups > 0 {
		r.skipped.Add(dups)
		r.task.AddSkipped(dups)
	}
	slices.Sort(out)
	return out, nil
}

// call hands one record to fn, turning a panic into an error.
func (r *run) call(ctx context.Context, c claimed, tx *sql.Tx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Error("records: record handler panicked", "key", c.key, "panic", v, "stack", string(debug.Stack()))
			err = fmt.Errorf("records: handler panicked on key %q: %v", c.key, v)
		}
	}()
	return r.fn(ctx, Record{Key: c.key, IdempotencyKey: r.idemPrefix + c.key, Tx: tx, Attempt: c.attempt, Uncertain: c.uncertain})
}

// check runs the fencing check that starts every dedup write transaction,
// and returns the database clock it read.
func (r *run) check(ctx context.Context, tx *sql.Tx, op string) (int64, error) {
	if r.p.noLockCheck { // the benchmark without the check: the process clock stands in
		return time.Now().UnixMilli(), nil
	}
	return r.lock.check(ctx, tx, op)
}

// keyArg is a key as a query argument: bytes on MySQL, where the column is
// VARBINARY and a character string would be checked against the connection
// character set (and truncated by INSERT IGNORE if it is not valid there),
// and on PostgreSQL, where it is BYTEA; text on SQLite (a BLOB never equals
// a TEXT there).
func (r *run) keyArg(k string) any {
	if r.p.cfg.Dialect == DialectSQLite {
		return k
	}
	return []byte(k)
}

// afterClaim applies the counters of a committed claim.
func (r *run) afterClaim(res claimResult) {
	if n := res.skipped; n > 0 {
		r.skipped.Add(n)
		r.task.AddSkipped(n)
	}
	if n := int64(len(res.exhausted)); n > 0 {
		r.exhausted.Add(n)
		r.task.AddFailed(n)
		r.log.Warn("records: records failed too often earlier; left failed", "count", n,
			"max_record_attempts", r.maxAttempts, "keys", sample(res.exhausted))
	}
	if res.uncertainRetried > 0 {
		r.uncertain.Add(res.uncertainRetried)
		r.task.AddUncertain(res.uncertainRetried)
		r.log.Warn("records: records left pending by an attempt that could not finish them are processed again (policy Retry: at least once)",
			"count", res.uncertainRetried, "scope", r.scope)
	}
	r.leaveUncertain(res.uncertainLeft, "found pending from an attempt that could not finish them")
}

// leaveUncertain counts, lists and alarms records left pending.
func (r *run) leaveUncertain(keys []string, why string) {
	if len(keys) == 0 {
		return
	}
	n := int64(len(keys))
	r.uncertain.Add(n)
	r.task.AddUncertain(n)
	r.mu.Lock()
	r.uncertainKeys = appendCapped(r.uncertainKeys, keys)
	r.mu.Unlock()
	r.log.Error("records: uncertain records left pending, not processed again: their effect may or may not have happened; check them",
		"alarm", true, "why", why, "count", n, "policy", r.uncertainPolicy.String(), "scope", r.scope, "keys", sample(keys))
}

// recordFailures keeps the keys and the first error of failed records.
func (r *run) recordFailures(fs []failure) {
	if len(fs) == 0 {
		return
	}
	n := int64(len(fs))
	r.failed.Add(n)
	r.task.AddFailed(n)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.firstErr == nil {
		r.firstErr = fs[0].err
	}
	for _, f := range fs {
		if len(r.failedKeys) >= maxListedKeys {
			break
		}
		r.failedKeys = append(r.failedKeys, f.key)
	}
}

func (r *run) progress() {
	done := r.processed.Load() + r.skipped.Load() + r.failed.Load() + r.exhausted.Load()
	r.mu.Lock()
	done += int64(len(r.uncertainKeys))
	r.mu.Unlock()
	r.task.Progress(done, r.total)
}

type failure struct {
	key string
	err error
}

// errText is a handler error as stored in dedup_record.error: valid UTF-8,
// at most 1024 characters.
func errText(err error) string {
	return truncate(strings.ToValidUTF8(err.Error(), "?"), 1024)
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func sample(keys []string) []string {
	if len(keys) > 10 {
		return keys[:10]
	}
	return keys
}

func appendCapped(dst, src []string) []string {
	room := maxListedKeys - len(dst)
	if room <= 0 {
		return dst
	}
	return append(dst, src[:min(room, len(src))]...)
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF)
}
