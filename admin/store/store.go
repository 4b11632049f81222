package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite" // also registers the "sqlite" driver (pure Go)
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/shardjob/shardjob/admin/partition"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// Sentinel errors. Callers test them with errors.Is.
var (
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrStaleEpoch   = errors.New("leader epoch is no longer ours: another admin leads")
	ErrSchemaTooNew = errors.New("database schema is newer than this binary")
)

// conflictError is an ErrConflict whose text says the whole story (what
// conflicts and what to do), without ": conflict" after it.
type conflictError struct{ text string }

func (e *conflictError) Error() string { return e.text }

// Is makes errors.Is(err, ErrConflict) true.
func (e *conflictError) Is(target error) bool { return target == ErrConflict }

// conflictf is an error of ErrConflict with the text of format and args.
func conflictf(format string, args ...any) error {
	return &conflictError{text: fmt.Sprintf(format, args...)}
}

// Config selects and tunes the database.
type Config struct {
	// Driver is "mysql", "postgres" or "sqlite". Required.
	Driver string
	// DSN is the data source name. For mysql a go-sql-driver DSN
	// (user:pass@tcp(host:3306)/db); parseTime, loc and time_zone are set by
	// Open. For postgres a URL (postgres://user:pass@host:5432/db) or
	// key=value pairs; the session's time zone is set to UTC by Open. For
	// sqlite a file path (created if missing). Required.
	DSN string
	// ConnectTimeout bounds the first ping. Default 5s.
	ConnectTimeout time.Duration
	// MaxOpenConns caps the pool (mysql, postgres). Default 32. SQLite always uses 1.
	MaxOpenConns int
	// IdleTxTimeout makes MariaDB roll back a transaction that stays idle
	// (no statement running) this long, and close its connection
	// (idle_transaction_timeout). It frees the locks of an admin that froze
	// inside a transaction (SIGSTOP, VM pause) so that a successor can claim
	// the leader epoch at once. PostgreSQL does the same with
	// idle_in_transaction_session_timeout. Default 5s; MySQL 8 has no such
	// setting (see docs/operations.md).
	IdleTxTimeout time.Duration
	// HintTimeLimit makes MariaDB abort the scheduler's hint reads — the
	// next due job, the next pause end, the pre-read count, by partition
	// or not — that run longer (max_statement_time): the scheduler stops
	// waiting for them (scheduler.Config.HintTimeout) but the server would
	// finish them, and during a bulk load each one read a million entries
	// for minutes. Default 2s; negative: no limit. MySQL 8 and the other
	// dialects have no per-statement limit here (PostgreSQL cancels a
	// statement whose context ends).
	HintTimeLimit time.Duration
	// Replica is the ID of the admin replica that uses the store (its
	// --id, "standalone" in standalone mode): the raised_by of the alarms
	// it raises without naming who raised them (the run state machine's,
	// the workflow engine's), so that every alarm names a replica the same
	// way. Default "admin".
	Replica string
	// PartitionCount is the installation's number of scheduling partitions
	// (docs/architecture.md, "Partitions"): the store fills a job's
	// partition_id with partition.Of(id, PartitionCount). Every admin of
	// an installation must use the same. Default partition.DefaultCount
	// (256).
	PartitionCount int
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	if c.Replica == "" {
		c.Replica = "admin"
	}
	if c.MaxOpenConns <= 0 {
		c.MaxOpenConns = 32
	}
	if c.IdleTxTimeout <= 0 {
		c.IdleTxTimeout = 5 * time.Second
	}
	if c.HintTimeLimit == 0 {
		c.HintTimeLimit = 2 * time.Second
	}
	if c.PartitionCount == 0 {
		c.PartitionCount = partition.DefaultCount
	}
	return c
}

func (c Config) validate() error {
	switch c.Driver {
	case sqlfiles.MySQL, sqlfiles.Postgres, sqlfiles.SQLite:
	default:
		return fmt.Errorf("store driver %q: must be %q, %q or %q", c.Driver, sqlfiles.MySQL, sqlfiles.Postgres, sqlfiles.SQLite)
	}
	if c.DSN == "" {
		return errors.New("store DSN is empty: set the database DSN (mysql, postgres) or file path (sqlite)")
	}
	if c.PartitionCount < 1 || c.PartitionCount > partition.MaxCount {
		return fmt.Errorf("store partition count %d: must be 1-%d", c.PartitionCount, partition.MaxCount)
	}
	return nil
}

// Store is the platform database. It is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	dialect string
	q       queries
	replica string // Config.Replica
	parts   int    // Config.PartitionCount
}

// Open connects, checks the connection, and returns a Store. It does not
// migrate; call Migrate.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dsn := cfg.DSN
	var db *sqlx.DB
	var err error
	switch cfg.Driver {
	case sqlfiles.Postgres:
		db, err = openPostgres(dsn, cfg)
	case sqlfiles.MySQL:
		mc, perr := mysql.ParseDSN(dsn)
		if perr != nil {
			return nil, fmt.Errorf("mysql DSN: %w", perr)
		}
		mc.ParseTime = true
		mc.Loc = time.UTC
		if mc.Params == nil {
			mc.Params = map[string]string{}
		}
		mc.Params["time_zone"] = "'+00:00'"
		mc.Timeout = cfg.ConnectTimeout
		mc.MultiStatements = true
		// RowsAffected counts matched rows, as SQLite does, so guarded updates
		// that happen to change nothing still report success.
		mc.ClientFoundRows = true
		// Client-side interpolation: one round trip per statement instead of
		// prepare + execute + close (the driver escapes values; utf8mb4 only).
		mc.InterpolateParams = true
		dsn = mc.FormatDSN()
		db, err = sqlx.Open(cfg.Driver, dsn)
	default:
		dsn = sqliteDSN(dsn)
		db, err = sqlx.Open(cfg.Driver, dsn)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", cfg.Driver, err)
	}
	if cfg.Driver == sqlfiles.SQLite {
		db.SetMaxOpenConns(1)
	} else {
		db.SetMaxOpenConns(cfg.MaxOpenConns)
		db.SetMaxIdleConns(cfg.MaxOpenConns)
		db.SetConnMaxLifetime(30 * time.Minute)
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", cfg.Driver, err)
	}
	q, err := loadQueries(cfg.Driver)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if cfg.Driver == sqlfiles.MySQL {
		var mariaDB bool
		if db, mariaDB, err = withServerSettings(ctx, db, dsn, cfg, q); err != nil {
			return nil, err
		}
		if mariaDB && cfg.HintTimeLimit > 0 {
			q = q.withTimeLimit(hintQueries, cfg.HintTimeLimit)
		}
	}
	return &Store{db: db, dialect: cfg.Driver, q: q, replica: cfg.Replica, parts: cfg.PartitionCount}, nil
}

// withServerSettings reopens the pool with session settings that depend on
// the server: every statement READ COMMITTED (transactions ask for it
// anyway; single statements such as a heartbeat's lease renewal would
// otherwise take gap locks on the attempts' executor index, which block the
// leader's inserts of new attempts and deadlock with results), and on
// MariaDB idle_transaction_timeout (an unknown variable would fail every
// connection on MySQL, whose isolation variable has another name).
func withServerSettings(ctx context.Context, db *sqlx.DB, dsn string, cfg Config, q queries) (*sqlx.DB, bool, error) {
	version, err := q.ServerVersion(ctx, db)
	if err != nil {
		_ = db.Close()
		return nil, false, fmt.Errorf("read server version: %w", err)
	}
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		_ = db.Close()
		return nil, false, err
	}
	mariaDB := strings.Contains(strings.ToLower(version), "mariadb")
	if mariaDB {
		mc.Params["tx_isolation"] = "'READ-COMMITTED'"
		mc.Params["idle_transaction_timeout"] = strconv.Itoa(max(1, int(cfg.IdleTxTimeout.Seconds())))
	} else {
		mc.Params["transaction_isolation"] = "'READ-COMMITTED'"
	}
	_ = db.Close()
	db, err = sqlx.Open(sqlfiles.MySQL, mc.FormatDSN())
	if err != nil {
		return nil, false, fmt.Errorf("open mysql: %w", err)
	}
	db.SetMaxOpenConns(cfg.MaxOpenConns)
	db.SetMaxIdleConns(cfg.MaxOpenConns)
	db.SetConnMaxLifetime(30 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, false, fmt.Errorf("connect to mysql database: %w", err)
	}
	return db, mariaDB, nil
}

func sqliteDSN(path string) string {
	if strings.HasPrefix(path, "file:") {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return "file:" + path + sep + "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"
}

// Close closes the pool.
func (s *Store) Close() error { return s.db.Close() }

// Dialect returns "mysql", "postgres" or "sqlite".
func (s *Store) Dialect() string { return s.dialect }

// DB exposes the pool to tests (counting rows, freezing a transaction).
// Production code outside the store never calls it (TestOnlyStoreUsesSQLX
// checks): it uses the store's typed methods, and Tx for a transaction.
func (s *Store) DB() *sqlx.DB { return s.db }

// SQLDB is the pool as a *sql.DB, for the metrics' read-only gauges, which
// run their own named queries (admin/metrics/queries.sql).
func (s *Store) SQLDB() *sql.DB { return s.db.DB }

// Ping checks the database.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Now returns the database clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	ms, err := s.q.DBNow(ctx, s.db)
	if err != nil {
		return time.Time{}, fmt.Errorf("read database clock: %w", err)
	}
	return time.UnixMilli(ms).UTC(), nil
}

// inTx runs fn in a transaction, committing when fn returns nil. On MySQL
// the transaction is READ COMMITTED (no gap locks: concurrent claimers with
// SKIP LOCKED do not deadlock on index gaps), and a deadlock or lock-wait
// timeout runs fn again (see retry), so fn must be restartable (start from
// scratch each call). Store.Tx is the same for callers outside the store.
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	var opts *sql.TxOptions
	if s.dialect == sqlfiles.MySQL {
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	return retry(ctx, func() error { return s.tx(ctx, opts, fn) })
}

// exec runs an autocommit statement, again on a deadlock or lock-wait
// timeout (see retry): a statement that locks several rows can deadlock
// with a transaction that locks them in another order, and InnoDB then
// rolls back one of the two.
func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := retry(ctx, func() error {
		var err error
		res, err = s.db.ExecContext(ctx, q, args...)
		return err
	})
	return res, err
}

// retry runs fn until it does not fail with a deadlock or lock-wait timeout,
// up to 5 attempts with a short, growing backoff.
func retry(ctx context.Context, fn func() error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = fn()
		if !retryable(err) || attempt == 5 {
			return err
		}
		t := time.NewTimer(time.Duration(attempt*attempt) * 5 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func (s *Store) tx(ctx context.Context, opts *sql.TxOptions, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Error numbers of MySQL and MariaDB (*mysql.MySQLError.Number) the store
// acts on; the driver has no constants for them.
const (
	mysqlDupEntry        = 1062 // ER_DUP_ENTRY: a unique or primary key exists already
	mysqlLockWaitTimeout = 1205 // ER_LOCK_WAIT_TIMEOUT
	mysqlDeadlock        = 1213 // ER_LOCK_DEADLOCK
)

// retryable reports a deadlock or lock-wait timeout (on PostgreSQL also a
// serialization failure).
func retryable(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlDeadlock || me.Number == mysqlLockWaitTimeout
	}
	switch pgCode(err) {
	case pgDeadlock, pgLockNotAvailable, pgSerializationFailure:
		return true
	}
	return false
}

// isDuplicate reports whether err is, or wraps, a driver's error for a
// write that hit a unique key: MySQL/MariaDB's ER_DUP_ENTRY, PostgreSQL's
// unique_violation (23505), or SQLite's
// SQLITE_CONSTRAINT_UNIQUE or SQLITE_CONSTRAINT_PRIMARYKEY (both say
// "UNIQUE constraint failed"; modernc.org/sqlite turns the extended result
// codes on, so *sqlite.Error.Code tells them from other constraints). The
// store's methods that insert by a natural key turn it into ErrConflict.
func isDuplicate(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlDupEntry
	}
	if pgCode(err) == pgUniqueViolation {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func nullMS(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}
