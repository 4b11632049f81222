package records

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// ArchiveMode says what Archive does with the done rows it takes out of
// dedup_record.
type ArchiveMode int

const (
	// ArchiveMove copies each row to dedup_record_archive and deletes it
	// from dedup_record, in one transaction (the default).
	ArchiveMove ArchiveMode = iota + 1
	// ArchiveDelete only deletes the rows.
	ArchiveDelete
)

func (m ArchiveMode) String() string {
	switch m {
	case ArchiveMove:
		return "archive"
	case ArchiveDelete:
		return "delete"
	}
	return "ArchiveMode(" + strconv.Itoa(int(m)) + ")"
}

// Defaults and limits of ArchiveConfig.
const (
	DefaultArchiveHorizon   = 30 * 24 * time.Hour
	MinArchiveHorizon       = time.Hour // a shorter horizon is almost surely a mistake (records processed again)
	DefaultArchiveBatchSize = 1000
	DefaultArchivePause     = 5 * time.Millisecond

	// DefaultLockHorizon is how long after its lease ended a shard lock
	// row is kept by Archive (ArchiveConfig.LockHorizon).
	DefaultLockHorizon = 24 * time.Hour

	// KeepForever, as a per-job horizon, keeps every dedup row of the job.
	KeepForever time.Duration = -1
)

// ArchiveConfig configures Archive. Zero optional fields mean "the default";
// WithDefaults fills them in and Validate checks the result.
type ArchiveConfig struct {
	// Dialect of the database: "mysql" (MySQL 8, MariaDB >= 10.6) or
	// "sqlite". Required.
	Dialect string

	// Mode: ArchiveMove (default) or ArchiveDelete. ArchiveMove needs the
	// table dedup_record_archive (in DDL, created by EnsureSchema).
	Mode ArchiveMode

	// Horizon: a done row whose updated_at (the instant it was marked
	// done) is older than this, on the database clock, is taken out.
	// Default 30 days, at least MinArchiveHorizon. A record whose row was
	// taken out is no longer deduplicated: it is processed again if a run
	// presents it again.
	Horizon time.Duration

	// JobHorizons overrides Horizon per job id (dedup_record.job_id); a
	// value of KeepForever (any negative value) keeps every row of that
	// job. Default none.
	JobHorizons map[int64]time.Duration

	// Slot and SlotCount share the work between SlotCount callers (the
	// slots of an archive job): slot s takes the (job_id, scope) groups of
	// rows whose FNV-1a hash modulo SlotCount is s. A group is a contiguous range of the
	// primary key, found with one index seek, so every caller walks only
	// its own ranges. Default slot 0 of 1 (everything).
	Slot, SlotCount int

	// BatchSize is how many rows are read per window and at most how many
	// are moved per transaction. Default 1000, at most MaxBatchSize.
	BatchSize int

	// Pause is the wait after each transaction that moved rows, which lets
	// other transactions through (and replication catch up). Default 5ms;
	// a negative value means no pause.
	Pause time.Duration

	// LockHorizon: slot 0 also deletes the shard_lock rows whose lease
	// ended more than this ago (Processor.PurgeLocks), so that the lock
	// table does not grow without bound. Choose it above the longest an
	// attempt can live plus the longest pause to fence: a purged lock no
	// longer fences its run's old tokens. Default DefaultLockHorizon, at
	// least MinArchiveHorizon; KeepForever (any negative value) keeps
	// every lock row.
	LockHorizon time.Duration

	// OnBatch, if set, is called after each committed transaction with the
	// number of rows it took out (e.g. to report progress).
	OnBatch func(moved int64)

	// Logger receives retried conflicts and a summary. Default
	// slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns a copy of c with every unset optional field set.
func (c ArchiveConfig) WithDefaults() ArchiveConfig {
	if c.Mode == 0 {
		c.Mode = ArchiveMove
	}
	if c.Horizon == 0 {
		c.Horizon = DefaultArchiveHorizon
	}
	if c.SlotCount == 0 {
		c.SlotCount = 1
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultArchiveBatchSize
	}
	if c.Pause == 0 {
		c.Pause = DefaultArchivePause
	}
	if c.LockHorizon == 0 {
		c.LockHorizon = DefaultLockHorizon
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports every problem of c; all errors wrap ErrInvalidConfig.
func (c ArchiveConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: archive: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	switch c.Dialect {
	case DialectMySQL, DialectPostgres, DialectSQLite:
	default:
		bad("Dialect %q: must be %q (MySQL, MariaDB), %q or %q", c.Dialect, DialectMySQL, DialectPostgres, DialectSQLite)
	}
	switch c.Mode {
	case ArchiveMove, ArchiveDelete:
	default:
		bad("Mode %d: must be records.ArchiveMove or records.ArchiveDelete", int(c.Mode))
	}
	if c.Horizon < MinArchiveHorizon {
		bad("Horizon is %s: must be at least %s (rows younger than the horizon are what keeps records from being processed twice), or 0 for the default %s", c.Horizon, MinArchiveHorizon, DefaultArchiveHorizon)
	}
	for job, h := range c.JobHorizons {
		if h >= 0 && h < MinArchiveHorizon {
			bad("JobHorizons[%d] is %s: must be at least %s, or KeepForever", job, h, MinArchiveHorizon)
		}
	}
	if c.LockHorizon >= 0 && c.LockHorizon < MinArchiveHorizon {
		bad("LockHorizon is %s: must be at least %s (a purged lock no longer fences the old tokens of its run), KeepForever, or 0 for the default %s", c.LockHorizon, MinArchiveHorizon, DefaultLockHorizon)
	}
	if c.SlotCount < 1 || c.Slot < 0 || c.Slot >= c.SlotCount {
		bad("Slot %d of SlotCount %d: want 0 <= Slot < SlotCount", c.Slot, c.SlotCount)
	}
	if c.BatchSize < 1 || c.BatchSize > MaxBatchSize {
		bad("BatchSize is %d: must be in [1, %d], or 0 for the default %d", c.BatchSize, MaxBatchSize, DefaultArchiveBatchSize)
	}
	return errors.Join(errs...)
}

// ArchiveResult counts what one Archive call did.
type ArchiveResult struct {
	Moved   int64 // rows taken out of dedup_record (copied first in ArchiveMove mode)
	Scanned int64 // rows read (of the groups of this slot)
	Groups  int64 // (job_id, scope) groups of this slot walked
	Batches int64 // transactions that took rows out
	Locks   int64 // shard_lock rows deleted (slot 0 only; see LockHorizon)
}

// Archive takes the done rows older than the horizon out of dedup_record —
// moving them to dedup_record_archive or deleting them — in small
// transactions, in primary-key order, and returns when it has walked the
// whole table (its share of it: Slot of SlotCount). Pending and failed rows
// and rows younger than the horizon are never touched.
//
// The walk is keyset-only (see sql/archive.sql): windows of BatchSize rows
// are read without locks, and the window's rows to move are then locked,
// copied (INSERT IGNORE into the archive) and deleted in one transaction,
// by the window's primary-key range; on MySQL under READ COMMITTED, which
// locks the matching rows only and no gap. A transaction so holds at most
// BatchSize row locks for a few milliseconds: record processing
// running at the same time is delayed by at most one such transaction, and
// only on the same rows (which are older than the horizon). Pause separates
// the transactions.
//
// Archive keeps no state between calls: after a crash or a cancellation,
// calling it again walks the table again, and the rows already taken out
// are simply not there any more. A transaction either moved its rows
// (copied and deleted them) or did nothing, so nothing is skipped or
// counted twice; the copy is INSERT IGNORE, so a row is never archived
// twice either. ctx cancels between transactions (and inside a statement).
func Archive(ctx context.Context, db *sql.DB, cfg ArchiveConfig) (ArchiveResult, error) {
	var res ArchiveResult
	if db == nil {
		return res, fmt.Errorf("%w: archive: db is nil", ErrInvalidConfig)
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	q, err := loadQueries(cfg.Dialect)
	if err != nil {
		return res, err
	}
	a := &archiver{cfg: cfg, db: db, q: q, res: &res}
	var now int64
	if err := db.QueryRowContext(ctx, q.get(qDBNow)).Scan(&now); err != nil {
		return res, fmt.Errorf("records: archive: read the database clock: %w", err)
	}
	a.now = now
	start := time.Now()
	err = a.walk(ctx)
	if err == nil && cfg.Slot == 0 && cfg.LockHorizon > 0 {
		res.Locks, err = purgeLocks(ctx, db, q, cfg.LockHorizon)
	}
	cfg.Logger.Info("dedup archive pass ended", "mode", cfg.Mode, "slot", cfg.Slot, "total", cfg.SlotCount,
		"moved", res.Moved, "scanned", res.Scanned, "groups", res.Groups, "batches", res.Batches, "locks_purged", res.Locks,
		"duration", time.Since(start).Round(time.Millisecond).String(), "err", err)
	return res, err
}

type archiver struct {
	cfg ArchiveConfig
	db  *sql.DB
	q   queries
	now int64 // database clock at the start, Unix ms
	res *ArchiveResult
}

// arg converts a scope or key for the dialect: bytes for MySQL's VARBINARY
// and PostgreSQL's BYTEA, a string for SQLite's TEXT (a BLOB never equals a
// TEXT there).
func (a *archiver) arg(s string) any {
	if a.cfg.Dialect == DialectSQLite {
		return s
	}
	return []byte(s)
}

// cutoff returns the updated_at below which done rows of job go, and false
// when the job's rows are kept forever.
func (a *archiver) cutoff(job int64) (int64, bool) {
	h := a.cfg.Horizon
	if jh, ok := a.cfg.JobHorizons[job]; ok {
		h = jh
	}
	if h < 0 {
		return 0, false
	}
	return a.now - h.Milliseconds(), true
}

// owns reports whether the group (job, scope) is this slot's.
func (a *archiver) owns(job int64, scope string) bool {
	return groupSlot(job, scope, a.cfg.SlotCount) == a.cfg.Slot
}

// groupSlot maps a (job_id, scope) group to a slot in [0, total).
func groupSlot(job int64, scope string, total int) int {
	if total <= 1 {
		return 0
	}
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(job))
	_, _ = h.Write(b[:])
	_, _ = h.Write([]byte(scope))
	return int(h.Sum64() % uint64(total))
}

// walk visits the groups in primary-key order, one index seek each.
func (a *archiver) walk(ctx context.Context) error {
	job := int64(math.MinInt64)
	var scope string
	haveJob := false
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		found := false
		if haveJob {
			var s []byte
			err := a.db.QueryRowContext(ctx, a.q.get(qArchiveNextScope), job, a.arg(scope)).Scan(&s)
			switch {
			case err == nil:
				scope, found = string(s), true
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("records: archive: find the next scope of job %d: %w", job, err)
			}
		}
		if !found {
			var s []byte
			err := a.db.QueryRowContext(ctx, a.q.get(qArchiveNextJob), job).Scan(&job, &s)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("records: archive: find the next job after %d: %w", job, err)
			}
			scope, haveJob = string(s), true
		}
		cutoff, ok := a.cutoff(job)
		if !ok {
			haveJob = false // kept forever: on to the next job
			continue
		}
		if !a.owns(job, scope) {
			continue
		}
		a.res.Groups++
		if err := a.group(ctx, job, scope, cutoff); err != nil {
			return err
		}
	}
}

// group takes the old done rows of one group out, window by window.
func (a *archiver) group(ctx context.Context, job int64, scope string, cutoff int64) error {
	after := ""
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		candidates, last, n, err := a.scan(ctx, job, scope, after, cutoff)
		if err != nil {
			return err
		}
		a.res.Scanned += int64(n)
		if candidates > 0 {
			moved, err := a.move(ctx, job, scope, cutoff, after, last)
			if err != nil {
				return err
			}
			if moved > 0 {
				a.res.Moved += moved
				a.res.Batches++
				if a.cfg.OnBatch != nil {
					a.cfg.OnBatch(moved)
				}
			}
			if err := a.pause(ctx); err != nil {
				return err
			}
		}
		if n < a.cfg.BatchSize {
			return nil
		}
		after = last
	}
}

// scan reads the window after key `after` without locks and returns how
// many of its rows are to take out, the last key read and the rows read.
func (a *archiver) scan(ctx context.Context, job int64, scope, after string, cutoff int64) (candidates int, last string, n int, err error) {
	rows, err := a.db.QueryContext(ctx, a.q.get(qArchiveScan), job, a.arg(scope), a.arg(after), a.cfg.BatchSize)
	if err != nil {
		return 0, "", 0, fmt.Errorf("records: archive: read job %d scope %q: %w", job, scope, err)
	}
	defer rows.Close()
	var k []byte
	var status string
	var updated int64
	for rows.Next() {
		if err := rows.Scan(&k, &status, &updated); err != nil {
			return 0, "", 0, fmt.Errorf("records: archive: read job %d scope %q: %w", job, scope, err)
		}
		n++
		if strings.TrimRight(status, " ") == statusDone && updated < cutoff { // CHAR(7): see readRows
			candidates++
		}
	}
	last = string(k) // the bytes of the last row (Scan copies into k)
	if err := rows.Err(); err != nil {
		return 0, "", 0, fmt.Errorf("records: archive: read job %d scope %q: %w", job, scope, err)
	}
	return candidates, last, n, nil
}

// move takes the rows to move of the window (after, last] out, in one
// transaction, and returns how many it took.
func (a *archiver) move(ctx context.Context, job int64, scope string, cutoff int64, after, last string) (int64, error) {
	var moved int64
	onRetry := func(err error) {
		a.cfg.Logger.Debug("dedup archive: transaction conflict, retrying", "job_id", job, "scope", scope, "err", err)
	}
	args := []any{a.now, job, a.arg(scope), a.arg(after), a.arg(last), cutoff}
	err := a.inTx(ctx, onRetry, func(tx *sql.Tx) error {
		moved = 0
		want := int64(-1)
		if a.cfg.Dialect != DialectSQLite {
			// Lock exactly the rows that qualify now (a row marked failed
			// or taken over since the scan no longer does).
			if err := tx.QueryRowContext(ctx, a.q.get(qArchiveLock), args[1:]...).Scan(&want); err != nil {
				return fmt.Errorf("records: archive: lock rows (job %d scope %q): %w", job, scope, err)
			}
			if want == 0 {
				return nil
			}
		}
		if a.cfg.Mode == ArchiveMove {
			if _, err := tx.ExecContext(ctx, a.q.get(qArchiveCopy), args...); err != nil {
				return fmt.Errorf("records: archive: copy to dedup_record_archive (job %d scope %q; does the table exist? see records.DDL): %w", job, scope, err)
			}
		}
		r, err := tx.ExecContext(ctx, a.q.get(qArchiveDelete), args[1:]...)
		if err != nil {
			return fmt.Errorf("records: archive: delete (job %d scope %q): %w", job, scope, err)
		}
		if moved, err = r.RowsAffected(); err != nil {
			return err
		}
		if want >= 0 && moved != want {
			return fmt.Errorf("records: archive: deleted %d rows of job %d scope %q, locked %d: rolled back", moved, job, scope, want)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return moved, nil
}

// inTx is the package's inTx with READ COMMITTED on MySQL: the locking
// read takes no gap lock where a key vanished since the scan.
func (a *archiver) inTx(ctx context.Context, onRetry func(error), f func(tx *sql.Tx) error) error {
	var opts *sql.TxOptions
	if a.cfg.Dialect == DialectMySQL {
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	for attempt := 1; ; attempt++ {
		err := func() error {
			tx, err := a.db.BeginTx(ctx, opts)
			if err != nil {
				return err
			}
			if err := f(tx); err != nil {
				_ = tx.Rollback()
				return err
			}
			return tx.Commit()
		}()
		if err == nil || !retryable(err) {
			return err
		}
		onRetry(err)
		if berr := backoff(ctx, attempt); berr != nil {
			return errors.Join(berr, err)
		}
	}
}

func (a *archiver) pause(ctx context.Context) error {
	if a.cfg.Pause <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(a.cfg.Pause)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
