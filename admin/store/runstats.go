package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/jmoiron/sqlx"
)

// MinuteMS is the width of a rollup row, in ms.
const MinuteMS = 60_000

// LagBoundsMS are the upper bounds (inclusive, in ms) of the start-lag
// histogram of run_stat_minute (migration 0037): bucket i holds the lags up
// to LagBoundsMS[i] and above the bound before it, the last bucket
// (LagBuckets-1) the lags beyond the largest bound. They are fixed: the
// rows of every minute use the same buckets, so that summing them over any
// window gives that window's histogram.
var LagBoundsMS = [...]int64{100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000}

// LagBuckets is the number of buckets of the start-lag histogram.
const LagBuckets = len(LagBoundsMS) + 1

// LagBucket is the bucket of a start lag of lagMS.
func LagBucket(lagMS int64) int {
	return sort.Search(len(LagBoundsMS), func(i int) bool { return lagMS <= LagBoundsMS[i] })
}

// RunStat is one minute of the rollup: of one app (a row of
// run_stat_minute), or summed over apps (RunStats).
type RunStat struct {
	Minute int64  // start of the minute, Unix ms
	App    string // empty in the sums of RunStats
	// Started counts the runs whose started_at is in the minute.
	Started int64
	// Succeeded, Failed (failed and partially_failed), Cancelled and
	// Skipped count the runs whose finished_at is in the minute.
	Succeeded, Failed, Cancelled, Skipped int64
	// Lag is the start-lag histogram (LagBoundsMS) of the runs finished in
	// the minute: scheduled_at → first slot started on an executor.
	// Retries and runs that started no slot are not in it.
	Lag [LagBuckets]int64
}

// Add adds the counts and the histogram of o to r.
func (r *RunStat) Add(o RunStat) {
	r.Started += o.Started
	r.Succeeded += o.Succeeded
	r.Failed += o.Failed
	r.Cancelled += o.Cancelled
	r.Skipped += o.Skipped
	for i := range r.Lag {
		r.Lag[i] += o.Lag[i]
	}
}

// LagRuns is the number of runs in the start-lag histogram.
func (r RunStat) LagRuns() int64 {
	var n int64
	for _, c := range r.Lag {
		n += c
	}
	return n
}

// LagPercentile is the q-quantile (0 < q ≤ 1, nearest rank) of the
// histogram as the upper bound of the bucket that holds it: the exact
// percentile of the same runs is at most boundMS and above the bucket's
// lower bound. above reports the last bucket (the percentile is beyond
// boundMS, the largest bound). ok is false without runs.
func (r RunStat) LagPercentile(q float64) (boundMS int64, above, ok bool) {
	n := r.LagRuns()
	if n == 0 {
		return 0, false, false
	}
	rank := max(int64(math.Ceil(q*float64(n))), 1)
	var seen int64
	for i, c := range r.Lag {
		seen += c
		if seen >= rank {
			if i == len(LagBoundsMS) {
				return LagBoundsMS[len(LagBoundsMS)-1], true, true
			}
			return LagBoundsMS[i], false, true
		}
	}
	return LagBoundsMS[len(LagBoundsMS)-1], true, true
}

// runStatRow is a row of run_stat_minute, or a sum of them.
type runStatRow struct {
	Minute    int64  `db:"minute"`
	App       string `db:"app"`
	Started   int64  `db:"started"`
	Succeeded int64  `db:"succeeded"`
	Failed    int64  `db:"failed"`
	Cancelled int64  `db:"cancelled"`
	Skipped   int64  `db:"skipped"`
	L0        int64  `db:"lag_0"`
	L1        int64  `db:"lag_1"`
	L2        int64  `db:"lag_2"`
	L3        int64  `db:"lag_3"`
	L4        int64  `db:"lag_4"`
	L5        int64  `db:"lag_5"`
	L6        int64  `db:"lag_6"`
	L7        int64  `db:"lag_7"`
	L8        int64  `db:"lag_8"`
	L9        int64  `db:"lag_9"`
	L10       int64  `db:"lag_10"`
	L11       int64  `db:"lag_11"`
}

func (r runStatRow) stat() RunStat {
	return RunStat{Minute: r.Minute, App: r.App, Started: r.Started, Succeeded: r.Succeeded, Failed: r.Failed, Cancelled: r.Cancelled, Skipped: r.Skipped,
		Lag: [LagBuckets]int64{r.L0, r.L1, r.L2, r.L3, r.L4, r.L5, r.L6, r.L7, r.L8, r.L9, r.L10, r.L11}}
}

// RunStatsFoldedUntil returns the instant (Unix ms, a minute boundary)
// before which every minute is folded into the rollup; ok is false before
// the first fold of the installation (no cursor yet).
func (s *Store) RunStatsFoldedUntil(ctx context.Context) (until int64, ok bool, err error) {
	until, err = s.q.RunStatCursorGet(ctx, s.db)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("run stats cursor: %w", err)
	}
	return until, true, nil
}

// InitRunStats starts the rollup at fromMS (a minute boundary: the first
// minute folded) unless it has started already; it returns where the
// cursor is.
func (s *Store) InitRunStats(ctx context.Context, fromMS int64) (int64, error) {
	if fromMS%MinuteMS != 0 {
		return 0, fmt.Errorf("run stats: %d is not a minute boundary", fromMS)
	}
	if err := retry(ctx, func() error {
		_, err := s.q.RunStatCursorInit(ctx, s.db, fromMS)
		return err
	}); err != nil {
		return 0, fmt.Errorf("run stats cursor: start at %d: %w", fromMS, err)
	}
	until, _, err := s.RunStatsFoldedUntil(ctx)
	return until, err
}

// SkipQuietRunStats moves the rollup's cursor from fromMS (where the folder
// found it) over the minutes before untilMS (a minute boundary, the end of
// the last closed minute) in which no run started or finished: to the
// minute of the first such instant at or after fromMS, or to untilMS when
// there is none. Those minutes would fold into no row. It returns where
// the cursor is and false when it did not move it (activity in fromMS's
// minute, or another admin moved the cursor first).
func (s *Store) SkipQuietRunStats(ctx context.Context, fromMS, untilMS int64) (int64, bool, error) {
	next, err := s.q.RunStatNextActivity(ctx, s.db, fromMS)
	if err != nil {
		return fromMS, false, fmt.Errorf("run stats: the next activity after %d: %w", fromMS, err)
	}
	to := untilMS
	for _, at := range []sql.NullInt64{next.Started, next.Finished} {
		if at.Valid {
			to = min(to, at.Int64-at.Int64%MinuteMS)
		}
	}
	if to <= fromMS {
		return fromMS, false, nil
	}
	var n int64
	if err := retry(ctx, func() error {
		n, err = s.q.RunStatCursorAdvance(ctx, s.db, runStatCursorAdvanceParams{FoldedUntil: to, FromFoldedUntil: fromMS})
		return err
	}); err != nil {
		return fromMS, false, fmt.Errorf("run stats: skip to %d: %w", to, err)
	}
	return to, n > 0, nil
}

// finishedRun is a row of RunStatFinished.
type finishedRun struct {
	App            string        `db:"app"`
	Status         string        `db:"status"`
	TriggerKind    string        `db:"trigger_kind"`
	ScheduledAt    int64         `db:"scheduled_at"`
	FirstStartedAt sql.NullInt64 `db:"first_started_at"`
}

// FoldRunStats folds the minute starting at minuteMS into run_stat_minute
// (one row per app that had a run started or finished in it, and their sum
// in run_stat_minute_all) and moves the
// cursor past it, in one transaction. It folds only the minute the cursor
// is at: folded is false, and nothing is written, when the cursor is
// elsewhere (another admin folded it), so that each minute is folded
// exactly once however many admins try. Its cost is the runs started and
// finished in the minute (idx_run_started, idx_run_finished) and their
// attempts; the caller waits until no run of the minute can still be
// written (runstats.Config.Delay).
func (s *Store) FoldRunStats(ctx context.Context, minuteMS int64) (folded bool, err error) {
	if minuteMS%MinuteMS != 0 {
		return false, fmt.Errorf("run stats: %d is not a minute boundary", minuteMS)
	}
	end := minuteMS + MinuteMS
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		folded = false
		n, err := s.q.RunStatCursorAdvance(ctx, tx, runStatCursorAdvanceParams{FoldedUntil: end, FromFoldedUntil: minuteMS})
		if err != nil {
			return fmt.Errorf("advance the cursor: %w", err)
		}
		if n == 0 {
			return nil
		}
		per := map[string]*RunStat{}
		of := func(app string) *RunStat {
			if per[app] == nil {
				per[app] = &RunStat{Minute: minuteMS, App: app}
			}
			return per[app]
		}
		started, err := s.q.RunStatStarted(ctx, tx, runStatStartedParams{FromMS: minuteMS, ToMS: end})
		if err != nil {
			return fmt.Errorf("runs started: %w", err)
		}
		for _, r := range started {
			of(r.App).Started = r.N
		}
		finished, err := s.q.RunStatFinished(ctx, tx, runStatFinishedParams{FromMS: minuteMS, ToMS: end})
		if err != nil {
			return fmt.Errorf("runs finished: %w", err)
		}
		for _, r := range finished {
			st := of(r.App)
			switch r.Status {
			case RunSucceeded:
				st.Succeeded++
			case RunFailed, RunPartiallyFailed:
				st.Failed++
			case RunCancelled:
				st.Cancelled++
			case RunSkipped:
				st.Skipped++
			}
			if r.FirstStartedAt.Valid && r.TriggerKind != TriggerRetry {
				st.Lag[LagBucket(max(0, r.FirstStartedAt.Int64-r.ScheduledAt))]++
			}
		}
		var all RunStat
		for _, st := range per {
			all.Add(*st)
			l := st.Lag
			if _, err := s.q.RunStatInsert(ctx, tx, runStatInsertParams{
				Minute: st.Minute, App: st.App, Started: st.Started, Succeeded: st.Succeeded, Failed: st.Failed, Cancelled: st.Cancelled, Skipped: st.Skipped,
				Lag0: l[0], Lag1: l[1], Lag2: l[2], Lag3: l[3], Lag4: l[4], Lag5: l[5], Lag6: l[6], Lag7: l[7], Lag8: l[8], Lag9: l[9], Lag10: l[10], Lag11: l[11],
			}); err != nil {
				return fmt.Errorf("insert the minute of app %q: %w", st.App, err)
			}
		}
		if len(per) > 0 {
			l := all.Lag
			if _, err := s.q.RunStatInsertAll(ctx, tx, runStatInsertAllParams{
				Minute: minuteMS, Started: all.Started, Succeeded: all.Succeeded, Failed: all.Failed, Cancelled: all.Cancelled, Skipped: all.Skipped,
				Lag0: l[0], Lag1: l[1], Lag2: l[2], Lag3: l[3], Lag4: l[4], Lag5: l[5], Lag6: l[6], Lag7: l[7], Lag8: l[8], Lag9: l[9], Lag10: l[10], Lag11: l[11],
			}); err != nil {
				return fmt.Errorf("insert the minute of every app: %w", err)
			}
		}
		folded = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("fold run stats of minute %d: %w", minuteMS, err)
	}
	return folded, nil
}

// RunStatFilter selects the minutes of RunStats.
type RunStatFilter struct {
	FromMS, ToMS int64 // [FromMS, ToMS), Unix ms
	// Apps limits the sums to these apps; nil: every app, empty: none.
	Apps []string
}

// RunStats returns the folded minutes of [FromMS, ToMS) summed over the
// apps of f, oldest first; a minute without a run is absent. It reads
// minutes × f.Apps rows (every app: the minutes' rows of
// run_stat_minute_all), whatever the number of runs.
func (s *Store) RunStats(ctx context.Context, f RunStatFilter) ([]RunStat, error) {
	if f.Apps != nil && len(f.Apps) == 0 {
		return nil, nil
	}
	var rows []runStatRow
	var err error
	if f.Apps != nil {
		rows, err = s.q.RunStatRangeOfApps(ctx, s.db, runStatRangeOfAppsParams{Apps: f.Apps, FromMS: f.FromMS, ToMS: f.ToMS})
	} else {
		rows, err = s.q.RunStatRange(ctx, s.db, runStatRangeParams{FromMS: f.FromMS, ToMS: f.ToMS})
	}
	if err != nil {
		return nil, fmt.Errorf("run stats from %d to %d: %w", f.FromMS, f.ToMS, err)
	}
	out := make([]RunStat, len(rows))
	for i, r := range rows {
		out[i] = r.stat()
	}
	return out, nil
}

// PruneRunStats deletes the minutes before beforeMS and returns how many
// rows went.
func (s *Store) PruneRunStats(ctx context.Context, beforeMS int64) (int64, error) {
	var n int64
	err := retry(ctx, func() error {
		var err error
		if n, err = s.q.RunStatPrune(ctx, s.db, beforeMS); err != nil {
			return err
		}
		_, err = s.q.RunStatPruneAll(ctx, s.db, beforeMS)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune run stats before %d: %w", beforeMS, err)
	}
	return n, nil
}
