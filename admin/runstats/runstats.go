// Package runstats keeps the dashboard's per-minute rollup of runs
// (run_stat_minute, migration 0037; docs/metrics.md, "Dashboard"), so that
// GET /api/v1/dashboard answers for an hour or a week from minutes × apps
// rows instead of the window's runs (ten million a day at scale).
//
// The leader runs an Aggregator for as long as it leads (WhileLeading wraps
// the leader's term, as retention and utilization do). Each closed minute
// is folded once: when the admin's clock has passed the minute's end by
// Config.Delay, one transaction reads the runs started in the minute
// (idx_run_started) and the runs finished in it (idx_run_finished, with
// their first slot's start), writes one row per app and moves the cursor
// (run_stat_cursor) over the minute with a conditional update. A minute is
// therefore folded exactly once across restarts and leader hand-overs: a
// second folder finds the cursor moved and writes nothing. The cost is
// O(runs of the minute) once per minute, and nothing on the hot path:
// firing, starting and settling write no rollup row (increments in the
// settle transaction would make every settle of an app in a minute update
// the same row, serialising the settles of concurrent replicas on its lock).
//
// Outcomes are keyed on finished_at and starts on started_at, not on the
// scheduled time: a run fired in minute M that ends at M+20 is counted in
// M+20, when it ended, and never missed because M was folded before it
// ended. The start-lag histogram (scheduled → first slot started) is
// counted with the outcome, when the lag is final. The one loss: a run
// whose start or end is written more than Delay after the instant it is
// stamped with (a transaction stuck that long) lands in a minute already
// folded and is not counted.
//
// On its first start (no cursor) the rollup begins Config.Backfill before
// now, so that the dashboard has history at once; an admin that was not
// leading for a while catches up straight on. A folder behind by more than
// a minute skips the quiet minutes (no run started or finished in them:
// they would fold into no row) up to the next run start or end in one
// conditional move of the cursor, two index reads, instead of a
// transaction per empty minute. Minutes older than Config.Keep are deleted.
package runstats

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/store"
)

// Defaults of Config.
const (
	DefaultDelay    = 15 * time.Second
	DefaultBackfill = 24 * time.Hour
	DefaultKeep     = 8 * 24 * time.Hour
	DefaultPoll     = 5 * time.Second
)

// minute is the width of a rollup row.
const minute = store.MinuteMS * time.Millisecond

// Config configures an Aggregator. Zero fields mean "the default".
type Config struct {
	// Delay is how long after a minute's end it is folded, so that runs
	// stamped in the minute by a transaction still in flight (the
	// database's or another replica's clock a little ahead) are committed
	// by then. Default 15s; the dashboard is complete up to at most
	// 1 minute + Delay ago. At least 1s.
	Delay time.Duration
	// Backfill is how far back the first fold of an installation starts.
	// Default 24h.
	Backfill time.Duration
	// Keep is how long folded minutes are kept. Default 8 days (the
	// dashboard's longest window is 7 days). At least 1 hour.
	Keep time.Duration
	// Poll bounds the wait between two checks for a closed minute (the
	// clock may be moved by tests). Default 5s.
	Poll time.Duration
	// Clock decides which minutes are closed (server.Config.Clock).
	// Default clock.System.
	Clock clock.Clock
	// OnFold, if set, is called after every minute folded by this
	// aggregator (tests).
	OnFold func(minuteMS int64)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Delay == 0 {
		c.Delay = DefaultDelay
	}
	if c.Backfill == 0 {
		c.Backfill = DefaultBackfill
	}
	if c.Keep == 0 {
		c.Keep = DefaultKeep
	}
	if c.Poll == 0 {
		c.Poll = DefaultPoll
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Delay < time.Second:
		return fmt.Errorf("runstats: delay %s: use at least 1s (default %s)", c.Delay, DefaultDelay)
	case c.Backfill < 0:
		return fmt.Errorf("runstats: backfill %s: use 0 or more (default %s)", c.Backfill, DefaultBackfill)
	case c.Keep < time.Hour:
		return fmt.Errorf("runstats: keep %s: use at least 1h (default %s)", c.Keep, DefaultKeep)
	case c.Poll <= 0:
		return fmt.Errorf("runstats: poll %s: use a positive interval (default %s)", c.Poll, DefaultPoll)
	}
	return nil
}

// Aggregator folds closed minutes into the rollup while its admin leads.
type Aggregator struct {
	cfg Config
	st  *store.Store
}

// New checks cfg.
func New(cfg Config, st *store.Store) (*Aggregator, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Aggregator{cfg: cfg, st: st}, nil
}

// Run folds every closed minute, then waits for the next one to close, until
// ctx ends. A failed fold is logged and tried again after Poll.
func (a *Aggregator) Run(ctx context.Context) {
	for {
		next, err := a.FoldDue(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := a.cfg.Poll
		if err != nil {
			a.cfg.Logger.Warn("run stats: fold failed; trying again", "err", err, "in", wait)
		} else if d := next.Sub(a.cfg.Clock.Now()); d < wait {
			wait = max(d, 10*time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// FoldDue folds, one transaction each, every minute that has closed at least
// Delay ago by the admin's clock and is not folded yet (by this admin or
// another), and returns when the next minute will be due.
func (a *Aggregator) FoldDue(ctx context.Context) (next time.Time, err error) {
	now := a.cfg.Clock.Now()
	cursor, ok, err := a.st.RunStatsFoldedUntil(ctx)
	if err != nil {
		return now, err
	}
	if !ok {
		start := now.Add(-a.cfg.Backfill).Truncate(minute).UnixMilli()
		if cursor, err = a.st.InitRunStats(ctx, start); err != nil {
			return now, err
		}
	}
	for ctx.Err() == nil {
		due := time.UnixMilli(cursor).Add(minute + a.cfg.Delay)
		if due.After(a.cfg.Clock.Now()) {
			return due, nil
		}
		// Behind by more than a minute (a first start's backfill, a term
		// after a while without a leader): the quiet minutes before the next
		// run start or end are skipped in one step, not folded one by one
		// into nothing (1,440 transactions of four statements each for the
		// backfill of a new installation).
		if until := a.cfg.Clock.Now().Add(-a.cfg.Delay).Truncate(minute).UnixMilli(); until-cursor >= 2*store.MinuteMS {
			to, moved, err := a.st.SkipQuietRunStats(ctx, cursor, until)
			if err != nil {
				return now, err
			}
			if moved {
				a.prune(ctx, cursor, to)
				cursor = to
				continue
			}
		}
		folded, err := a.st.FoldRunStats(ctx, cursor)
		if err != nil {
			return now, err
		}
		if !folded { // another admin got there first: start from where it is
			if cursor, _, err = a.st.RunStatsFoldedUntil(ctx); err != nil {
				return now, err
			}
			continue
		}
		if a.cfg.OnFold != nil {
			a.cfg.OnFold(cursor)
		}
		a.prune(ctx, cursor, cursor+store.MinuteMS)
		cursor += store.MinuteMS
	}
	return now, ctx.Err()
}

// prune deletes the minutes older than Keep when the cursor, moving from
// from to to, crossed the start of an hour (once an hour).
func (a *Aggregator) prune(ctx context.Context, from, to int64) {
	hour := time.Hour.Milliseconds()
	if to/hour == from/hour {
		return
	}
	if n, err := a.st.PruneRunStats(ctx, to-a.cfg.Keep.Milliseconds()); err != nil {
		a.cfg.Logger.Warn("run stats: prune failed; next hour again", "err", err)
	} else if n > 0 {
		a.cfg.Logger.Debug("run stats: pruned", "rows", n)
	}
}
