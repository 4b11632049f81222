package demo

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/records"
	"github.com/shardjob/shardjob/sql/namedsql"
)

// Handler names of the record-level demo handlers (RegisterRecords).
const (
	LedgerHandler         = "demo.ledger"
	LedgerExternalHandler = "demo.ledger-external"
)

// ledgerDDL creates the ledger and external_calls tables on MySQL and
// MariaDB (see ledger.sql), ledgerPostgresDDL on PostgreSQL.
var (
	//go:embed ledger.sql
	ledgerDDL string
	//go:embed ledger_postgres.sql
	ledgerPostgresDDL string
)

// The two effects, with "?" placeholders (numbered for PostgreSQL by
// NewLedger). Kept here, next to the only code that runs them.
const (
	insertLedger = `INSERT INTO ledger (record_key, source_key, job_id, run_id, slot, amount, token)
VALUES (?, ?, ?, ?, ?, ?, ?)`
	insertExternalCall = `INSERT INTO external_calls (idempotency_key, job_id, run_id, slot, token, attempt, uncertain)
VALUES (?, ?, ?, ?, ?, ?, ?)`
)

// maxConcurrency caps the concurrency param: every value gets a Processor
// of its own, and a Transactional one holds that many connections per slot.
const maxConcurrency = 64

// The duplicate key errors: MySQL's ER_DUP_ENTRY, PostgreSQL's
// unique_violation (SQLSTATE).
const (
	mysqlDuplicateKey    = 1062
	postgresDuplicateKey = "23505"
)

// externalCallTimeout bounds one external call. The call is not cut short
// by the slot's context once it was sent: whether it happened must be
// known (see External).
const externalCallTimeout = 10 * time.Second

// ErrAlreadyBooked is returned (wrapped) by demo.ledger when the ledger
// already holds a row for the record: the record would have been applied
// twice. The unique key refuses the second row; this error makes the
// attempt visible in the slot's error and the executor's log. It never
// happens while sdk/records keeps its exactly-once promise.
var ErrAlreadyBooked = errors.New("demo.ledger: the record is already in the ledger: it would have been applied twice")

// OpenDB opens the business database of the record-level demo handlers.
// A DSN starting with postgres:// or postgresql:// is a PostgreSQL (>= 13)
// URL opened with pgx (github.com/jackc/pgx/v5/stdlib), such as
// "postgres://user:pw@127.0.0.1:5432/business?sslmode=disable"; any other
// is a go-sql-driver/mysql DSN (MySQL 8 or MariaDB >= 10.6), such as
// "user:pw@tcp(127.0.0.1:3306)/business", opened with interpolateParams
// (sdk/records batches are statements of a different size each time).
// Either must name a database. The pool is sized for an executor running a
// few slots at once.
//
// Server variables may be set in the DSN. They let a newer attempt take
// over a slot from a frozen process at once (see the sdk/records
// documentation): on MariaDB "&idle_transaction_timeout=N" (seconds), on
// PostgreSQL "&options=-c%20idle_in_transaction_session_timeout%3DN"
// (milliseconds).
func OpenDB(dsn string) (*sql.DB, error) {
	var db *sql.DB
	var err error
	if isPostgresDSN(dsn) {
		db, err = openPostgres(dsn)
	} else {
		db, err = openMySQL(dsn)
	}
	if err != nil {
		return nil, err
	}
	// A slot holds up to Concurrency+1 connections (Transactional) or 3
	// plus its handler calls (External); an executor runs Capacity slots.
	db.SetMaxOpenConns(64)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(time.Minute)
	return db, nil
}

func isPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

func openPostgres(dsn string) (*sql.DB, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("demo database DSN: %w (want a PostgreSQL URL such as postgres://user:pw@127.0.0.1:5432/business?sslmode=disable)", err)
	}
	if cfg.Database == "" {
		return nil, errors.New("demo database DSN names no database: put one after the slash, e.g. postgres://user:pw@127.0.0.1:5432/business")
	}
	return sql.Open("pgx", dsn)
}

func openMySQL(dsn string) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("demo database DSN: %w (want a MySQL DSN such as user:pw@tcp(127.0.0.1:3306)/business)", err)
	}
	if cfg.DBName == "" {
		return nil, errors.New("demo database DSN names no database: put one after the slash, e.g. user:pw@tcp(127.0.0.1:3306)/business")
	}
	cfg.InterpolateParams = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("demo database DSN: %w", err)
	}
	return sql.OpenDB(connector), nil
}

// RegisterRecords adds the record-level demo handlers to an executor,
// backed by db, a business database opened by OpenDB: MySQL or MariaDB
// with the go-sql-driver/mysql driver, or PostgreSQL with pgx. It creates
// the tables they need when they do not exist: shard_lock and dedup_record
// (sdk/records), ledger and external_calls (ledger.sql,
// ledger_postgres.sql). Call it before ex.Start.
//
//   - demo.ledger (records.Transactional: exactly once): books one ledger
//     row per record, in the transaction that marks the record done.
//   - demo.ledger-external (records.External: at least once with
//     "uncertain=retry", at most once with "uncertain=skip"): makes one
//     "external call" per record, an external_calls row written on a
//     connection of its own, outside the dedup transaction.
//
// Both process their slot's part (Task.IDRange) of the record ids
// 1..records; see Ledger for their params.
func RegisterRecords(ex *sdk.Executor, db *sql.DB) error {
	l, err := NewLedger(db, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.EnsureSchema(ctx); err != nil {
		return err
	}
	ex.Handle(LedgerHandler, l.Transactional)
	ex.Handle(LedgerExternalHandler, l.External)
	return nil
}

// Ledger holds the record-level demo handlers and the sdk/records
// Processors they use. Its methods are sdk.Handlers.
//
// Params ("a=1;b=2"), all optional except uncertain:
//
//	records=N         the job's records are the ids 1..N (default 1000); a slot processes Task.IDRange(1, N)
//	ms_per_record=M   every record takes M milliseconds (default 0), honouring cancellation
//	batch=B           records.Config.BatchSize, 1..4000 (default 500)
//	concurrency=C     records.Config.Concurrency (default: the records defaults, 2 batch transactions at once for demo.ledger, 8 handler calls at once for demo.ledger-external)
//	scope=S           dedup scope: "run" (default: once per run), "job" (once per job), or a name of your choice; the job's dedup_scope wins
//	uncertain=P       demo.ledger-external only, required: "retry" (at least once) or "skip" (at most once)
//
// A slot that finished logs one line "ledger slot done" with the Result's
// counters (read, processed, skipped, failed, exhausted, uncertain,
// retries) and, when records were left uncertain, their keys (up to 1000).
type Ledger struct {
	db      *sql.DB
	dialect string // records.DialectMySQL or records.DialectPostgres
	ddl     string // ledgerDDL or ledgerPostgresDDL
	log     *slog.Logger
	holder  string

	// The effects' statements, in the dialect's placeholders.
	insertLedger, insertExternalCall string

	mu    sync.Mutex
	procs map[procKey]*records.Processor
}

type procKey struct {
	mode        records.Mode
	policy      records.UncertainPolicy
	batch       int
	concurrency int
}

// NewLedger returns the handlers over db: MySQL or MariaDB through
// go-sql-driver/mysql, or PostgreSQL through pgx's stdlib (see OpenDB); the
// driver decides the dialect. log receives the logs that are not about one
// slot; nil means slog.Default(). It does not touch the database: see
// EnsureSchema.
func NewLedger(db *sql.DB, log *slog.Logger) (*Ledger, error) {
	if db == nil {
		return nil, errors.New("demo: RegisterRecords needs the *sql.DB of the business database (see OpenDB)")
	}
	if log == nil {
		log = slog.Default()
	}
	l := &Ledger{db: db, log: log, holder: holderBase(), procs: map[procKey]*records.Processor{},
		insertLedger: insertLedger, insertExternalCall: insertExternalCall}
	switch db.Driver().(type) {
	case *mysql.MySQLDriver:
		l.dialect, l.ddl = records.DialectMySQL, ledgerDDL
	case *stdlib.Driver:
		l.dialect, l.ddl = records.DialectPostgres, ledgerPostgresDDL
		l.insertLedger, l.insertExternalCall = namedsql.Dollar(insertLedger), namedsql.Dollar(insertExternalCall)
	default:
		return nil, fmt.Errorf("demo: the record handlers need MySQL or MariaDB through github.com/go-sql-driver/mysql, or PostgreSQL through github.com/jackc/pgx/v5/stdlib, not a %T", db.Driver())
	}
	return l, nil
}

// EnsureSchema creates shard_lock, dedup_record, ledger and external_calls
// when they do not exist.
func (l *Ledger) EnsureSchema(ctx context.Context) error {
	p, err := l.processor(procKey{mode: records.Transactional})
	if err != nil {
		return err
	}
	if err := p.EnsureSchema(ctx); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	for _, stmt := range statements(l.ddl) {
		if _, err := l.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("demo: create the ledger tables (%.50s…): %w", stmt, err)
		}
	}
	return nil
}

// Transactional is demo.ledger: one ledger row per record through
// rec.Tx, committed with the record's done mark.
func (l *Ledger) Transactional(ctx context.Context, t *sdk.Task) error {
	o, err := parseLedgerParams(t.Params, false)
	if err != nil {
		return err
	}
	p, err := l.processor(procKey{mode: records.Transactional, batch: o.batch, concurrency: o.concurrency})
	if err != nil {
		return err
	}
	return l.process(ctx, t, p.WithScope(o.scope), o, func(ctx context.Context, rec records.Record) error {
		if err := pause(ctx, o.perRecord); err != nil {
			return err
		}
		_, err := rec.Tx.ExecContext(ctx, l.insertLedger,
			[]byte(rec.IdempotencyKey), []byte(rec.Key), t.JobID, t.RunID, t.Slot, amountOf(rec.Key), t.Token)
		if duplicateKey(err) {
			return fmt.Errorf("%w (key %s, token %d, attempt %d)", ErrAlreadyBooked, rec.IdempotencyKey, t.Token, rec.Attempt)
		}
		return err
	})
}

// External is demo.ledger-external: one external call (an external_calls
// row, autocommitted on a connection of its own) per record.
//
// The record's work (ms_per_record) comes first and honours cancellation:
// cancelled there, the call was not made. Once sent, the call is not cut
// short by the slot's context, and its outcome is reported honestly: nil
// when it was made, a plain error when the server refused it or it could
// not be sent (it did not happen: the record is retried), and an error
// wrapping records.ErrUncertain when the connection broke after it was
// sent (it may have happened: the UncertainPolicy decides).
func (l *Ledger) External(ctx context.Context, t *sdk.Task) error {
	o, err := parseLedgerParams(t.Params, true)
	if err != nil {
		return err
	}
	p, err := l.processor(procKey{mode: records.External, policy: o.policy, batch: o.batch, concurrency: o.concurrency})
	if err != nil {
		return err
	}
	return l.process(ctx, t, p.WithScope(o.scope), o, func(ctx context.Context, rec records.Record) error {
		if err := pause(ctx, o.perRecord); err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), externalCallTimeout)
		defer cancel()
		_, err := l.db.ExecContext(cctx, l.insertExternalCall,
			[]byte(rec.IdempotencyKey), t.JobID, t.RunID, t.Slot, t.Token, rec.Attempt, rec.Uncertain)
		switch {
		case err == nil:
			return nil
		case notSent(err):
			return fmt.Errorf("external call for %s not made: %w", rec.IdempotencyKey, err)
		default:
			return fmt.Errorf("%w: external call for %s: %v", records.ErrUncertain, rec.IdempotencyKey, err)
		}
	})
}

func (l *Ledger) process(ctx context.Context, t *sdk.Task, p *records.Processor, o ledgerParams, fn records.Func) error {
	lo, hi := t.IDRange(1, o.records)
	res, err := p.Process(ctx, t, records.IDRangeSource(lo, hi), fn)
	log := t.Logger
	if log == nil {
		log = l.log.With("run_id", t.RunID, "slot", t.Slot, "token", t.Token)
	}
	attrs := []any{
		"lo", lo, "hi", hi, "read", res.Read, "processed", res.Processed, "skipped", res.Skipped,
		"failed", res.Failed, "exhausted", res.Exhausted, "uncertain", res.Uncertain, "retries", res.Retries,
	}
	if len(res.UncertainKeys) > 0 {
		attrs = append(attrs, "uncertain_keys", strings.Join(res.UncertainKeys, ","))
	}
	if err != nil {
		log.Warn("ledger slot stopped", append(attrs, "err", err)...)
		return err
	}
	log.Info("ledger slot done", attrs...)
	return res.Err()
}

// processor returns the Processor for a mode, policy, batch size and
// concurrency, creating it on first use. Each has a holder of its own.
func (l *Ledger) processor(k procKey) (*records.Processor, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.procs[k]; ok {
		return p, nil
	}
	p, err := records.New(records.Config{
		DB: l.db, Dialect: l.dialect, Mode: k.mode, Uncertain: k.policy, BatchSize: k.batch,
		Concurrency: k.concurrency, Holder: l.holderFor(k), Logger: l.log,
	})
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	l.procs[k] = p
	return p, nil
}

// holderFor names the Processor of k in shard_lock.holder, e.g.
// "demo:host:42:1a2b3c4d/external-skip-batch20-c0".
func (l *Ledger) holderFor(k procKey) string {
	h := l.holder + "/" + k.mode.String()
	if k.policy != 0 {
		h += "-" + k.policy.String()
	}
	return h + "-batch" + strconv.Itoa(k.batch) + "-c" + strconv.Itoa(k.concurrency)
}

type ledgerParams struct {
	records     int64
	perRecord   time.Duration
	batch       int
	concurrency int
	scope       records.Scope
	policy      records.UncertainPolicy
}

func parseLedgerParams(params string, external bool) (ledgerParams, error) {
	var o ledgerParams
	var err error
	if o.records, err = intParam(params, "records", DefaultRangeRecords); err != nil {
		return o, err
	}
	ms, err := intParam(params, "ms_per_record", 0)
	if err != nil {
		return o, err
	}
	if ms > int64(time.Hour/time.Millisecond) {
		return o, fmt.Errorf("param ms_per_record=%d: at most %d (one hour)", ms, time.Hour/time.Millisecond)
	}
	o.perRecord = time.Duration(ms) * time.Millisecond
	batch, err := intParam(params, "batch", 0)
	if err != nil {
		return o, err
	}
	if batch > records.MaxBatchSize {
		return o, fmt.Errorf("param batch=%d: at most %d", batch, records.MaxBatchSize)
	}
	o.batch = int(batch)
	concurrency, err := intParam(params, "concurrency", 0)
	if err != nil {
		return o, err
	}
	if concurrency > maxConcurrency {
		return o, fmt.Errorf("param concurrency=%d: at most %d", concurrency, maxConcurrency)
	}
	o.concurrency = int(concurrency)
	switch s, _ := param(params, "scope"); s {
	case "", "run":
		o.scope = records.ScopeRun
	case "job":
		o.scope = records.ScopeJob
	default:
		if strings.HasPrefix(s, "run:") || len(s) > records.MaxScopeLen {
			return o, fmt.Errorf("param scope=%q: use run, job, or a name of at most %d bytes not starting with \"run:\"", s, records.MaxScopeLen)
		}
		o.scope = records.Scope(s)
	}
	v, set := param(params, "uncertain")
	switch {
	case !external && set:
		return o, errors.New("param uncertain: only demo.ledger-external takes it (demo.ledger is transactional: nothing is ever uncertain)")
	case !external:
	case v == "retry":
		o.policy = records.Retry
	case v == "skip":
		o.policy = records.Skip
	default:
		return o, fmt.Errorf("param uncertain=%q: demo.ledger-external needs uncertain=retry (at least once: a record left pending by a crash is called again) or uncertain=skip (at most once: it is skipped and alarmed)", v)
	}
	return o, nil
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-timer.C:
		return nil
	}
}

// amountOf is the amount booked for a record: its id, or 1 when the key
// is not a number, so that SUM(amount) checks that every id was booked once.
func amountOf(key string) int64 {
	if n, err := strconv.ParseInt(key, 10, 64); err == nil {
		return n
	}
	return 1
}

// duplicateKey reports whether err is a unique key violation.
func duplicateKey(err error) bool {
	var me *mysql.MySQLError
	var pe *pgconn.PgError
	return errors.As(err, &me) && me.Number == mysqlDuplicateKey ||
		errors.As(err, &pe) && pe.Code == postgresDuplicateKey
}

// notSent reports whether an error of an autocommitted statement proves
// that it did not happen: the server answered with an error, no connection
// could be made, or the driver reported the connection bad before sending
// (driver.ErrBadConn, which a driver returns only when the server cannot
// have run the statement).
func notSent(err error) bool {
	var me *mysql.MySQLError
	var pe *pgconn.PgError
	if errors.As(err, &me) || errors.As(err, &pe) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// statements splits a SQL file into statements: "--" comment lines are
// dropped and a statement ends with a line ending in ";".
func statements(text string) []string {
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		trim := strings.TrimSpace(sc.Text())
		if trim == "" || strings.HasPrefix(trim, "--") {
			continue
		}
		cur.WriteString(sc.Text())
		cur.WriteByte('\n')
		if strings.HasSuffix(trim, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	return out
}

// holderBase names this process in shard_lock.holder: host:pid:random.
func holderBase() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	h := "demo:" + host + ":" + strconv.Itoa(os.Getpid()) + ":" + hex.EncodeToString(b)
	if len(h) > 200 { // room for the "/mode-policy-batch" suffix in 255 bytes
		h = h[len(h)-200:]
	}
	return h
}
