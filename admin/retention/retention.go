// Package retention deletes the platform's history past its horizon: finished
// runs (job_run) with their slot attempts, alarm events (alarm_event) with
// their deliveries, audit entries (audit_log), utilization samples
// (utilization_sample) and dead letters (dead_letter), each table with its
// own horizon. The leader runs it for its term (Retainer.Run, one of the
// term's duties in admin/server, started and stopped by
// admin/internal/loops): every Interval, one pass over the five tables.
//
// A pass walks each table in the order of its (instant, id) index with a
// keyset (the last key seen, never OFFSET), reading windows of BatchSize
// rows without locks; the rows chosen from a window are then locked by
// primary key, checked again and deleted in one short transaction, and the
// pass pauses (Pause) before the next one. It never deletes a run that is
// not finished (pending, running, or reopened by a retry since the scan),
// nor an alarm whose delivery is not done. Passes keep no state: a pass
// cut short (crash, lost leadership) is simply run again, the rows it
// deleted are gone and the others are found again.
//
// The queries are in sql/queries_retention.sql. See docs/retention.md.
package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sql/namedsql"
)

// Defaults of Config.
const (
	DefaultRuns       = 90 * 24 * time.Hour
	DefaultAlarms     = 90 * 24 * time.Hour
	DefaultAudit      = 365 * 24 * time.Hour
	DefaultSamples    = 7 * 24 * time.Hour
	DefaultDead       = 30 * 24 * time.Hour
	DefaultInterval   = time.Hour
	DefaultFirstDelay = time.Minute
	DefaultBatchSize  = 500
	DefaultPause      = 20 * time.Millisecond

	// KeepForever, as a horizon, turns retention off for that table.
	KeepForever time.Duration = -1
	// MinHorizon is the shortest horizon accepted.
	MinHorizon = time.Hour
)

// Config configures a Retainer. Zero fields mean "the default".
type Config struct {
	// Runs is how long a finished run (and its slot attempts) is kept after
	// it finished. Default 90 days; KeepForever keeps them all.
	Runs time.Duration
	// Alarms is how long an alarm event (and its deliveries) is kept.
	// Default 90 days; KeepForever keeps them all.
	Alarms time.Duration
	// Audit is how long an audit log entry is kept. Default 365 days;
	// KeepForever keeps them all.
	Audit time.Duration
	// Samples is how long a utilization sample (admin/utilization) is
	// kept. Default 7 days, the longest range GET /api/v1/stats/utilization
	// answers; KeepForever keeps them all.
	Samples time.Duration
	// Dead is how long a dead letter is kept after its slot died, whatever
	// became of its run (--dead-retention). Default 30 days; KeepForever
	// keeps them all.
	Dead time.Duration

	// Interval between passes while leading. Default 1h.
	Interval time.Duration
	// FirstDelay before the first pass of a leadership term, so that a new
	// leader catches up with its schedule first. Default 1m.
	FirstDelay time.Duration
	// BatchSize is the number of rows read per window and at most deleted
	// per transaction (a batch of runs is also cut when their slot counts
	// add up to BatchSize, so that their attempts stay about as many).
	// Default 500.
	BatchSize int
	// Pause after each deleting transaction. Default 20ms; negative: none.
	Pause time.Duration

	// OnPass, if set, is called after every pass of Run (tests, metrics).
	OnPass func(Report, error)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	set := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	set(&c.Runs, DefaultRuns)
	set(&c.Alarms, DefaultAlarms)
	set(&c.Audit, DefaultAudit)
	set(&c.Samples, DefaultSamples)
	set(&c.Dead, DefaultDead)
	set(&c.Interval, DefaultInterval)
	set(&c.FirstDelay, DefaultFirstDelay)
	set(&c.Pause, DefaultPause)
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	for _, h := range []struct {
		name string
		d    time.Duration
	}{{"Runs", c.Runs}, {"Alarms", c.Alarms}, {"Audit", c.Audit}, {"Samples", c.Samples}, {"Dead", c.Dead}} {
		if h.d >= 0 && h.d < MinHorizon {
			errs = append(errs, fmt.Errorf("retention: %s horizon %s: at least %s, or KeepForever", h.name, h.d, MinHorizon))
		}
	}
	if c.Interval < 0 || c.FirstDelay < 0 {
		errs = append(errs, fmt.Errorf("retention: Interval %s and FirstDelay %s must be positive", c.Interval, c.FirstDelay))
	}
	if c.BatchSize < 1 || c.BatchSize > 5000 {
		errs = append(errs, fmt.Errorf("retention: BatchSize %d: want 1 to 5000", c.BatchSize))
	}
	return errors.Join(errs...)
}

// Report counts the rows one pass deleted.
type Report struct {
	Runs       int64
	Attempts   int64
	Alarms     int64
	Deliveries int64
	Audit      int64
	Samples    int64 // utilization samples
	Dead       int64 // dead letters
	Sessions   int64 // expired console sessions
	Batches    int64 // transactions that deleted rows
}

// Retainer runs the retention passes.
type Retainer struct {
	cfg Config
	st  *store.Store
	q   []string // by query
}

// New checks cfg and loads the queries.
func New(cfg Config, st *store.Store) (*Retainer, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	q, err := loadQueries(st.Dialect())
	if err != nil {
		return nil, err
	}
	return &Retainer{cfg: cfg, st: st, q: q}, nil
}

// Run runs a pass after FirstDelay, then every Interval, until ctx ends.
func (r *Retainer) Run(ctx context.Context) {
	t := time.NewTimer(r.cfg.FirstDelay)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := r.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			r.cfg.Logger.Error("retention pass failed; next pass at the next interval", "err", err)
		}
		if r.cfg.OnPass != nil {
			r.cfg.OnPass(rep, err)
		}
		t.Reset(r.cfg.Interval)
	}
}

// RunOnce runs one pass over the four tables and reports what it deleted.
// Horizons are measured on the database clock.
func (r *Retainer) RunOnce(ctx context.Context) (Report, error) {
	var rep Report
	now, err := r.st.Now(ctx)
	if err != nil {
		return rep, fmt.Errorf("retention: database clock: %w", err)
	}
	cutoff := func(h time.Duration) int64 { return now.Add(-h).UnixMilli() }
	start := time.Now()
	if r.cfg.Runs >= 0 {
		err = errors.Join(err, r.runs(ctx, cutoff(r.cfg.Runs), &rep))
	}
	if r.cfg.Alarms >= 0 && ctx.Err() == nil {
		err = errors.Join(err, r.alarms(ctx, cutoff(r.cfg.Alarms), &rep))
	}
	if r.cfg.Audit >= 0 && ctx.Err() == nil {
		err = errors.Join(err, r.audit(ctx, cutoff(r.cfg.Audit), &rep))
	}
	if r.cfg.Samples >= 0 && ctx.Err() == nil {
		err = errors.Join(err, r.samples(ctx, cutoff(r.cfg.Samples), &rep))
	}
	if r.cfg.Dead >= 0 && ctx.Err() == nil {
		err = errors.Join(err, r.standalone(ctx, "dead_letter", qRetentionDeadScan, qRetentionDeadDelete, cutoff(r.cfg.Dead), &rep.Dead, &rep))
	}
	if ctx.Err() == nil { // an expired session can never be used again
		n, perr := r.st.PurgeSessions(ctx)
		rep.Sessions += n
		err = errors.Join(err, perr)
		// Nor can an expired pending OIDC sign-in (admin/sso).
		_, perr = r.st.PurgePendingSignIns(ctx)
		err = errors.Join(err, perr)
	}
	r.cfg.Logger.Info("retention pass", "runs", rep.Runs, "attempts", rep.Attempts, "alarms", rep.Alarms,
		"deliveries", rep.Deliveries, "audit", rep.Audit, "samples", rep.Samples, "dead", rep.Dead, "sessions", rep.Sessions, "batches", rep.Batches,
		"duration", time.Since(start).Round(time.Millisecond), "err", err)
	return rep, err
}

// keyset is the position of a walk over an (instant, id) index.
type keyset struct{ at, id int64 }

func start() keyset { return keyset{at: math.MinInt64, id: 0} }

// runs deletes finished runs older than cutoff with their attempts.
func (r *Retainer) runs(ctx context.Context, cutoff int64, rep *Report) error {
	pos := start()
	for {
		type row struct {
			id, createdAt int64
			status        string
			finishedAt    int64
			slots         int64
		}
		var rows []row
		err := r.scan(ctx, qRetentionRunsScan, cutoff, pos, func(sc func(...any) error) error {
			var x row
			if err := sc(&x.id, &x.createdAt, &x.status, &x.finishedAt, &x.slots); err != nil {
				return err
			}
			rows = append(rows, x)
			return nil
		})
		if err != nil {
			return fmt.Errorf("retention: read job_run: %w", err)
		}
		var batch []int64
		var attempts int64
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			ids := batch
			batch, attempts = nil, 0
			return r.deleteBatch(ctx, rep, func(tx *store.Tx) error {
				locked, err := r.lockIDs(ctx, tx, qRetentionRunsLock, ids, cutoff)
				if err != nil || len(locked) == 0 {
					return err
				}
				na, err := r.exec(ctx, tx, qRetentionAttemptsDelete, locked)
				if err != nil {
					return err
				}
				if err := tx.DeleteRunLogs(ctx, locked); err != nil { // handler logs of the runs
					return err
				}
				if _, err := r.exec(ctx, tx, qRetentionReplayParamsDelete, locked); err != nil { // params replays gave their slots
					return err
				}
				nr, err := r.exec(ctx, tx, qRetentionRunsDelete, locked)
				rep.Attempts += na
				rep.Runs += nr
				return err
			})
		}
		for _, x := range rows {
			if finished(x.status) && x.finishedAt > 0 && x.finishedAt < cutoff {
				batch = append(batch, x.id)
				attempts += max(x.slots, 1)
				if attempts >= int64(r.cfg.BatchSize) {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if len(rows) < r.cfg.BatchSize {
			return nil
		}
		pos = keyset{at: rows[len(rows)-1].createdAt, id: rows[len(rows)-1].id}
	}
}

func finished(status string) bool {
	switch status {
	case store.RunSucceeded, store.RunFailed, store.RunPartiallyFailed, store.RunCancelled, store.RunSkipped:
		return true
	}
	return false
}

// alarms deletes alarm events older than cutoff whose deliveries are done,
// and the alarm groups they leave empty.
func (r *Retainer) alarms(ctx context.Context, cutoff int64, rep *Report) error {
	return r.simple(ctx, "alarm_event", qRetentionAlarmsScan, cutoff, func(tx *store.Tx, ids []int64) error {
		locked, err := r.lockIDs(ctx, tx, qRetentionAlarmsLock, ids, cutoff)
		if err != nil || len(locked) == 0 {
			return err
		}
		nd, err := r.exec(ctx, tx, qRetentionDeliveriesDelete, locked)
		if err != nil {
			return err
		}
		groups, err := tx.SelectIDs(ctx, r.q[qRetentionAlarmGroupsOf], locked)
		if err != nil {
			return err
		}
		na, err := r.exec(ctx, tx, qRetentionAlarmsDelete, locked)
		rep.Deliveries += nd
		rep.Alarms += na
		if err != nil || len(groups) == 0 {
			return err
		}
		_, err = r.exec(ctx, tx, qRetentionAlarmGroupsDelete, groups) // the groups they leave empty
		return err
	}, rep)
}

// audit deletes audit entries older than cutoff.
func (r *Retainer) audit(ctx context.Context, cutoff int64, rep *Report) error {
	return r.standalone(ctx, "audit_log", qRetentionAuditScan, qRetentionAuditDelete, cutoff, &rep.Audit, rep)
}

// samples deletes utilization samples older than cutoff.
func (r *Retainer) samples(ctx context.Context, cutoff int64, rep *Report) error {
	return r.standalone(ctx, "utilization_sample", qRetentionUtilizationScan, qRetentionUtilizationDelete, cutoff, &rep.Samples, rep)
}

// standalone deletes the rows of a table that no other table refers to
// (del: "id IN (?) AND at < ?"), counting them in deleted.
func (r *Retainer) standalone(ctx context.Context, table string, scan, del query, cutoff int64, deleted *int64, rep *Report) error {
	return r.simple(ctx, table, scan, cutoff, func(tx *store.Tx, ids []int64) error {
		n, err := r.exec(ctx, tx, del, ids, cutoff)
		*deleted += n
		return err
	}, rep)
}

// simple walks a table whose scan returns (id, at) and deletes each window
// with del.
func (r *Retainer) simple(ctx context.Context, table string, scan query, cutoff int64, del func(tx *store.Tx, ids []int64) error, rep *Report) error {
	pos := start()
	for {
		var ids []int64
		var last keyset
		err := r.scan(ctx, scan, cutoff, pos, func(sc func(...any) error) error {
			if err := sc(&last.id, &last.at); err != nil {
				return err
			}
			ids = append(ids, last.id)
			return nil
		})
		if err != nil {
			return fmt.Errorf("retention: read %s: %w", table, err)
		}
		if len(ids) > 0 {
			if err := r.deleteBatch(ctx, rep, func(tx *store.Tx) error { return del(tx, ids) }); err != nil {
				return fmt.Errorf("retention: delete from %s: %w", table, err)
			}
		}
		if len(ids) < r.cfg.BatchSize {
			return nil
		}
		pos = last
	}
}

// scan runs a keyset window query without locks.
func (r *Retainer) scan(ctx context.Context, name query, cutoff int64, pos keyset, each func(sc func(...any) error) error) error {
	return r.st.Scan(ctx, r.q[name], []any{cutoff, pos.at, pos.at, pos.id, r.cfg.BatchSize}, each)
}

// deleteBatch runs del in a transaction (READ COMMITTED on MySQL: the
// locks are on the rows deleted only), then pauses.
func (r *Retainer) deleteBatch(ctx context.Context, rep *Report, del func(tx *store.Tx) error) error {
	before := *rep
	if err := r.st.Batch(ctx, del); err != nil {
		*rep = before
		return err
	}
	if *rep == before {
		return ctx.Err() // nothing qualified any more: no pause either
	}
	rep.Batches++
	if r.cfg.Pause <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(r.cfg.Pause)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lockIDs returns the ids that still qualify, locked.
func (r *Retainer) lockIDs(ctx context.Context, tx *store.Tx, name query, ids []int64, cutoff int64) ([]int64, error) {
	return tx.SelectIDs(ctx, r.q[name], ids, cutoff)
}

func (r *Retainer) exec(ctx context.Context, tx *store.Tx, name query, ids []int64, more ...any) (int64, error) {
	return tx.ExecIn(ctx, r.q[name], append([]any{ids}, more...)...)
}

//go:generate go run github.com/shardjob/shardjob/sql/namedsql/gen/namegen -pkg retention -type query -prefix q -o queries_gen.go ../../sql/queries_retention.sql

// loadQueries returns the Retention* queries (sql/queries_retention.sql,
// parsed by the store with the other named queries), indexed by the
// constants of queries_gen.go.
func loadQueries(dialect string) ([]string, error) {
	all, err := store.Queries(dialect)
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	q, err := namedsql.Select(all, queryNames[:])
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	return q, nil
}
