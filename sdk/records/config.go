package records

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// Mode says where a handler's effect goes, and therefore what Process
// guarantees (see the package documentation).
type Mode int

const (
	// Transactional: the effect is written to the same database as the
	// dedup table, through Record.Tx, the transaction that also marks the
	// record done. The effect and the mark commit together: exactly once.
	Transactional Mode = iota + 1
	// External: the effect goes elsewhere (an API, a queue, another
	// database). The record is marked pending before the handler runs and
	// done or failed after it; a crash in between leaves it uncertain, and
	// the UncertainPolicy decides.
	External
)

func (m Mode) String() string {
	switch m {
	case Transactional:
		return "transactional"
	case External:
		return "external"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// UncertainPolicy decides what happens to a record found pending from an
// attempt that can no longer finish it (it crashed, hung or was replaced
// between starting the effect and recording its outcome), and to a record
// whose handler returned ErrUncertain.
type UncertainPolicy int

const (
	// Retry hands the record to the handler again: at least once. The
	// handler sees Record.Uncertain and should use Record.IdempotencyKey
	// to make the repeat harmless.
	Retry UncertainPolicy = iota + 1
	// Skip leaves the record pending, counts it as uncertain, lists it in
	// Result.UncertainKeys and logs an error with alarm=true: at most once.
	// Someone has to look at those records.
	Skip
)

func (u UncertainPolicy) String() string {
	switch u {
	case Retry:
		return "retry"
	case Skip:
		return "skip"
	}
	return "UncertainPolicy(" + strconv.Itoa(int(u)) + ")"
}

// Scope is the part of a record's identity besides its job and key: a record
// is processed at most once per (job, scope, key).
//
//	ScopeRun ("", the default)  once per run: stored as "run:<run_id>"; a retry of a slot (same run, newer token) skips what is done, the next firing processes everything again
//	ScopeJob ("job")            once per job, across all its runs (up to the dedup horizon)
//	any other string            a scope the handler names, e.g. Scope("date:2026-11-30"): runs that name the same scope share it
//
// A named scope is at most 128 bytes and must not start with "run:".
type Scope string

const (
	ScopeRun Scope = ""
	ScopeJob Scope = "job"
)

// Defaults applied by Config.WithDefaults, and limits checked by Validate.
const (
	DefaultBatchSize   = 500
	MaxBatchSize       = 4000 // 8 parameters a row: SQLite allows 32766 per statement
	DefaultConcurrency = 8    // External mode
	// DefaultTransactionalConcurrency is the default Concurrency in
	// Transactional mode on MySQL: each unit of concurrency is a write
	// transaction on the business database, and several slots and
	// executors share that database. Measured on 2 cores with a no-op
	// handler (docs/performance.md): 4 Processors with 8 transactions each
	// reached 196-268k records/s, with 4 each 213-300k, with 2 each
	// 297-312k. A handler that waits per record inside the transaction (a
	// network call) may want more: raise Concurrency for it.
	DefaultTransactionalConcurrency = 2
	DefaultMaxRecordAttempts        = 3
	DefaultLockLease                = 30 * time.Second
	MinLockLease                    = 100 * time.Millisecond
	DefaultFlushInterval            = 100 * time.Millisecond

	MaxKeyLen   = 255 // bytes of a record key (dedup_record.record_key)
	MaxScopeLen = 128 // bytes of a scope (dedup_record.scope)
)

// Config configures a Processor. The zero value of every optional field
// means "use the default"; WithDefaults fills them in and New validates the
// result.
type Config struct {
	// DB is the business database holding shard_lock and dedup_record (see
	// EnsureSchema), and in Transactional mode the tables the handler
	// writes. Required.
	//
	// MySQL: use interpolateParams=true in the DSN (one round trip per
	// statement instead of three: the batches are multi-row statements of
	// a different size each time, which server-side prepared statements do
	// not amortise). A Process call holds up to 3 connections in External
	// mode (claim, mark, lease renewal) and Concurrency + 1 in
	// Transactional mode; size the pool for the slots run at once.
	// MariaDB: consider idle_transaction_timeout so that a transaction of a
	// frozen process (SIGSTOP, VM pause) does not hold the shard lock's
	// shared lock, which would make the takeover by a newer token wait.
	//
	// SQLite: set busy_timeout (e.g. _pragma=busy_timeout(10000) with
	// modernc.org/sqlite) and WAL; Process also retries SQLITE_BUSY.
	DB *sql.DB

	// Dialect is "mysql" (MySQL 8, MariaDB >= 10.6), "postgres"
	// (PostgreSQL >= 13, a driver taking $1 placeholders: pgx's stdlib or
	// lib/pq) or "sqlite". Required.
	Dialect string

	// Mode is Transactional or External. Required: it decides the guarantee.
	Mode Mode

	// Uncertain is the policy for uncertain records: Retry (at least once) or
	// Skip (at most once, alarmed). Required in External mode. In
	// Transactional mode records are never left pending (the mark commits
	// with the effect), so it only matters for rows left by an External
	// processor on the same scope; default Retry there.
	Uncertain UncertainPolicy

	// Scope is the default dedup scope of Process (see Scope). Default
	// ScopeRun. WithScope returns a Processor using another one. The job's
	// definition overrides it, Uncertain and MaxRecordAttempts when it sets
	// them (sdk.Task.Records: dedup_scope, uncertain_policy,
	// record_max_attempts).
	Scope Scope

	// BatchSize is the number of keys read from the Source, claimed, and
	// marked per statement. Default 500, at most 4000.
	BatchSize int

	// Concurrency bounds the handler calls running at once. External mode:
	// Concurrency goroutines call the handler. Transactional mode: up to
	// Concurrency batch transactions run at once, each calling the handler
	// for its records one after the other (a transaction is one
	// connection). Default 8 in External mode; in Transactional mode 2 on
	// MySQL (DefaultTransactionalConcurrency) and 1 on SQLite, where write
	// transactions run one at a time anyway (more only adds waiting for
	// the database lock). In Transactional mode keep the write
	// transactions of all the slots and executors sharing one database
	// at a few per database core: beyond that InnoDB spends its time
	// waiting for page latches, and throughput falls.
	Concurrency int

	// MaxRecordAttempts is how many times a record is handed to the
	// handler in total: a failed record is retried by the next attempt (or
	// run, for a shared scope) until it has failed this many times, then
	// left failed with its last error. Uncertain records retried under
	// policy Retry count too, so that a record that crashes its process
	// cannot crash every attempt. Default 3.
	MaxRecordAttempts int

	// LockLease is the shard lock's lease, renewed every LockLease/3 while
	// Process runs. Expiry (database clock) is only a safety net: it lets
	// another instance holding the same token take the lock. A newer token
	// takes over at once anyway. Default 30s, at least 100ms.
	LockLease time.Duration

	// FlushInterval (External mode) is the longest a record's outcome waits
	// before its done/failed mark is written; marks are written earlier
	// when BatchSize outcomes are ready. Shorter means fewer uncertain
	// records after a crash, longer means fewer statements. Default 100ms.
	FlushInterval time.Duration

	// Holder names this instance in shard_lock.holder. Default
	// hostname:pid:random. Two Processors must not share a Holder.
	Holder string

	// Logger receives the logs that are not about one task (those go to
	// Task.Logger when it is set). Default slog.Default().
	Logger *slog.Logger

	// Observer, when set, is told how long each claim of a batch of keys in
	// the dedup table took, for metrics: pass the *sdk.Executor (it feeds
	// shardjob_executor_dedup_batch_seconds) or an Observer of your own.
	// Default nil: nothing is observed.
	Observer Observer
}

// Observer receives measurements of a Processor. ObserveDedupBatch is
// called after each claim of a batch of keys (one or a few statements in
// the claiming transaction), whether or not it succeeded, from the
// goroutine that claimed; it must return promptly.
type Observer interface {
	ObserveDedupBatch(keys int, d time.Duration)
}

// ErrInvalidConfig is wrapped by every error of Config.Validate.
var ErrInvalidConfig = errors.New("invalid records config")

// WithDefaults returns a copy of c with every unset optional field set to
// its default. Fields that are set are left alone, even if invalid:
// Validate reports those.
func (c Config) WithDefaults() Config {
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
		if c.Mode == Transactional {
			c.Concurrency = DefaultTransactionalConcurrency
			if c.Dialect == DialectSQLite {
				c.Concurrency = 1
			}
		}
	}
	if c.MaxRecordAttempts == 0 {
		c.MaxRecordAttempts = DefaultMaxRecordAttempts
	}
	if c.LockLease == 0 {
		c.LockLease = DefaultLockLease
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.Uncertain == 0 && c.Mode == Transactional {
		c.Uncertain = Retry
	}
	if c.Holder == "" {
		c.Holder = defaultHolder()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports every problem of c, each naming the field and the fix.
// All errors wrap ErrInvalidConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	if c.DB == nil {
		bad("DB is nil: pass the *sql.DB of the business database that holds shard_lock and dedup_record")
	}
	switch c.Dialect {
	case DialectMySQL, DialectPostgres, DialectSQLite:
	default:
		bad("Dialect %q: must be %q (MySQL, MariaDB), %q or %q", c.Dialect, DialectMySQL, DialectPostgres, DialectSQLite)
	}
	switch c.Mode {
	case Transactional, External:
	case 0:
		bad("Mode is not set: choose records.Transactional (the effect is written through Record.Tx: exactly once) or records.External (the effect is elsewhere: at least or at most once, see Uncertain)")
	default:
		bad("Mode %d: must be records.Transactional or records.External", int(c.Mode))
	}
	switch c.Uncertain {
	case Retry, Skip:
	case 0:
		if c.Mode != Transactional {
			bad("Uncertain is not set: in External mode choose records.Retry (a record left pending by a crash is processed again: at least once) or records.Skip (it is skipped and alarmed: at most once)")
		}
	default:
		bad("Uncertain %d: must be records.Retry or records.Skip", int(c.Uncertain))
	}
	if err := checkScope(c.Scope); err != nil {
		bad("Scope: %v", err)
	}
	if c.BatchSize < 0 || c.BatchSize > MaxBatchSize {
		bad("BatchSize is %d: must be in [1, %d], or 0 for the default %d", c.BatchSize, MaxBatchSize, DefaultBatchSize)
	}
	if c.Concurrency < 0 {
		bad("Concurrency is %d: must be >= 1, or 0 for the default (%d in External mode, %d in Transactional mode on MySQL, 1 on SQLite)", c.Concurrency, DefaultConcurrency, DefaultTransactionalConcurrency)
	}
	if c.MaxRecordAttempts < 0 {
		bad("MaxRecordAttempts is %d: must be >= 1, or 0 for the default %d", c.MaxRecordAttempts, DefaultMaxRecordAttempts)
	}
	if c.LockLease != 0 && c.LockLease < MinLockLease {
		bad("LockLease is %s: must be at least %s, or 0 for the default %s", c.LockLease, MinLockLease, DefaultLockLease)
	}
	if c.FlushInterval < 0 {
		bad("FlushInterval is %s: must be positive, or 0 for the default %s", c.FlushInterval, DefaultFlushInterval)
	}
	if len(c.Holder) > 255 {
		bad("Holder is %d bytes long: at most 255 (shard_lock.holder)", len(c.Holder))
	}
	return errors.Join(errs...)
}

// checkScope validates a scope named by a handler.
func checkScope(s Scope) error {
	switch {
	case s == ScopeRun || s == ScopeJob:
		return nil
	case strings.HasPrefix(string(s), "run:"):
		return fmt.Errorf("%q starts with \"run:\", which is reserved for ScopeRun: use ScopeRun (\"\") for a per-run scope, or another prefix", s)
	case len(s) > MaxScopeLen:
		return fmt.Errorf("%q is %d bytes: at most %d", s, len(s), MaxScopeLen)
	}
	return nil
}

// resolve returns the scope as stored in dedup_record.scope for a run.
func (s Scope) resolve(runID int64) string {
	if s == ScopeRun {
		return "run:" + strconv.FormatInt(runID, 10)
	}
	return string(s)
}

func defaultHolder() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	h := host + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b)
	if len(h) > 255 {
		h = h[len(h)-255:]
	}
	return h
}
