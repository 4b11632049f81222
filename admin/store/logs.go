package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
)

// Defaults of RunLogLimits.
const (
	DefaultRunLogLines = 10_000
	DefaultRunLogBytes = 8 << 20
	// DefaultRunLogHorizon is how long after its run finished a slot
	// attempt may still ship logs (an executor that was cut off from the
	// admins delivers them late).
	DefaultRunLogHorizon = time.Hour
)

// RunLogLimits caps the logs stored per run. Lines beyond a cap are counted
// as dropped on the run (RunLogState.DroppedCap), not stored.
type RunLogLimits struct {
	MaxLines int64         // lines stored per run; default 10000
	MaxBytes int64         // bytes of message + attributes stored per run; default 8 MiB
	Horizon  time.Duration // see DefaultRunLogHorizon
	// AppBytesPerDay is the quota of the executor's app (App) on the bytes
	// it stores in the UTC day Day (YYYY-MM-DD); 0: none. Lines beyond it
	// are counted in the run's DroppedQuota and the day's dropped lines.
	App            string
	Day            string
	AppBytesPerDay int64
}

// WithDefaults fills zero fields.
func (l RunLogLimits) WithDefaults() RunLogLimits {
	if l.MaxLines <= 0 {
		l.MaxLines = DefaultRunLogLines
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultRunLogBytes
	}
	if l.Horizon <= 0 {
		l.Horizon = DefaultRunLogHorizon
	}
	return l
}

// LogLine is a line shipped by an executor.
type LogLine struct {
	Token   int64
	At      int64 // executor clock, Unix ms
	Level   int
	Message string
	Attrs   string // JSON object or ""
}

// LogDrop counts the lines of a token an executor dropped.
type LogDrop struct {
	Token int64
	Lines int64
}

// AppendLogsResult is what AppendRunLogs did with a batch.
type AppendLogsResult struct {
	Stored  int // lines stored
	Dropped int // lines over their run's cap, counted on the run
	// OverQuota are lines over the app's daily quota, counted on the run.
	OverQuota int
	Rejected  []int64 // tokens not run by the executor (or too old): their lines were ignored
}

// RunLogLine is a stored line.
type RunLogLine struct {
	Seq     int64  `db:"seq"`
	Slot    int    `db:"slot"`
	Token   int64  `db:"token"`
	Attempt int    `db:"attempt"`
	At      int64  `db:"at"`
	Level   int    `db:"level"`
	Message string `db:"message"`
	Attrs   string `db:"attrs"`
}

// RunLogState sums up the logs of a run.
type RunLogState struct {
	RunID           int64 `db:"run_id"`
	NextSeq         int64 `db:"next_seq"`
	StoredLines     int64 `db:"stored_lines"`
	StoredBytes     int64 `db:"stored_bytes"`
	DroppedExecutor int64 `db:"dropped_executor"` // dropped by executors (their buffer was full)
	DroppedCap      int64 `db:"dropped_cap"`      // not stored: over RunLogLimits
	DroppedQuota    int64 `db:"dropped_quota"`    // not stored: over the app's daily quota
}

type logToken struct {
	Token   int64 `db:"token"`
	RunID   int64 `db:"run_id"`
	Slot    int   `db:"slot"`
	Attempt int   `db:"attempt"`
}

// runLogInsertBatch lines per INSERT statement (9 placeholders each).
const runLogInsertBatch = 200

// AppendRunLogs stores a batch of lines shipped by an executor and adds its
// drop counts to their runs. Only tokens of slot attempts the executor ran
// (of runs active or finished within lim.Horizon) are accepted; run, slot
// and attempt come from the database, not from the executor. Lines of a run
// get consecutive seq numbers in batch order, up to the run's caps; the
// rest are counted in the run's DroppedCap. One transaction; runs are
// locked in id order.
func (s *Store) AppendRunLogs(ctx context.Context, executorID int64, lines []LogLine, drops []LogDrop, lim RunLogLimits) (AppendLogsResult, error) {
	lim = lim.WithDefaults()
	var res AppendLogsResult
	tokens := make([]int64, 0, len(lines)+len(drops))
	for _, l := range lines {
		tokens = append(tokens, l.Token)
	}
	for _, d := range drops {
		tokens = append(tokens, d.Token)
	}
	slices.Sort(tokens)
	tokens = slices.Compact(tokens)
	if len(tokens) == 0 {
		return res, nil
	}
	known := map[int64]logToken{}
	for start := 0; start < len(tokens); start += 1000 {
		chunk := tokens[start:min(start+1000, len(tokens))]
		rows, err := s.q.RunLogTokens(ctx, s.db, runLogTokensParams{ExecutorID: executorID, HorizonMS: lim.Horizon.Milliseconds(), Tokens: chunk})
		if err != nil {
			return res, fmt.Errorf("tokens of executor %d: %w", executorID, err)
		}
		for _, r := range rows {
			known[r.Token] = r
		}
	}
	for _, t := range tokens {
		if _, ok := known[t]; !ok {
			res.Rejected = append(res.Rejected, t)
		}
	}
	// Group by run, keeping the batch order within a run.
	byRun := map[int64][]LogLine{}
	dropsByRun := map[int64]int64{}
	for _, l := range lines {
		if t, ok := known[l.Token]; ok {
			byRun[t.RunID] = append(byRun[t.RunID], l)
		}
	}
	for _, d := range drops {
		if t, ok := known[d.Token]; ok && d.Lines > 0 {
			dropsByRun[t.RunID] += d.Lines
		}
	}
	runs := make([]int64, 0, len(byRun)+len(dropsByRun))
	for r := range byRun {
		runs = append(runs, r)
	}
	for r := range dropsByRun {
		runs = append(runs, r)
	}
	slices.Sort(runs)
	runs = slices.Compact(runs)
	if len(runs) == 0 {
		return res, nil
	}
	if err := s.ensureRunLogStates(ctx, runs); err != nil {
		return res, err
	}
	quota := lim.AppBytesPerDay > 0
	if quota {
		err := retry(ctx, func() error {
			_, err := s.q.AppLogDayEnsure(ctx, s.db, appLogDayEnsureParams{App: lim.App, Day: lim.Day})
			return err
		})
		if err != nil {
			return res, fmt.Errorf("log quota of app %s: %w", lim.App, err)
		}
	}
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		res.Stored, res.Dropped, res.OverQuota = 0, 0, 0
		left := int64(math.MaxInt64) // bytes the app may still store today
		if quota {
			used, err := s.q.AppLogDayLock(ctx, tx, appLogDayLockParams{App: lim.App, Day: lim.Day})
			if err != nil {
				return fmt.Errorf("log quota of app %s: %w", lim.App, err)
			}
			left = max(lim.AppBytesPerDay-used, 0)
		}
		states, err := s.lockRunLogStates(ctx, tx, runs)
		if err != nil {
			return err
		}
		var rows []runLogInsertParams // the lines of every run, in (run_id, seq) order
		var storedBytes int64
		cols := make([][]any, 6) // next_seq, stored_lines, stored_bytes, +dropped_executor, +dropped_cap, +dropped_quota
		for c := range cols {
			cols[c] = make([]any, len(runs))
		}
		for r, runID := range runs {
			st, ok := states[runID]
			if !ok {
				return fmt.Errorf("log state of run %d: %w", runID, ErrNotFound)
			}
			// The stored lines of a run are a prefix of what it logged: the
			// first line over a cap ends the run's storage.
			// The app's daily quota drops the lines that do not fit what is
			// left of it (a smaller later line may still fit).
			kept, overQuota := 0, 0
			for _, l := range byRun[runID] {
				size := int64(len(l.Message) + len(l.Attrs))
				if st.DroppedCap > 0 || st.StoredLines+int64(kept) >= lim.MaxLines || st.StoredBytes+size > lim.MaxBytes {
					break
				}
				if size > left {
					overQuota++
					continue
				}
				t := known[l.Token]
				rows = append(rows, runLogInsertParams{RunID: runID, Seq: st.NextSeq + int64(kept), Slot: t.Slot, Token: t.Token, Attempt: t.Attempt,
					At: l.At, Level: l.Level, Message: l.Message, Attrs: l.Attrs})
				kept++
				left -= size
				storedBytes += size
				st.StoredBytes += size
			}
			over := len(byRun[runID]) - kept - overQuota
			cols[0][r], cols[1][r], cols[2][r] = st.NextSeq+int64(kept), st.StoredLines+int64(kept), st.StoredBytes
			cols[3][r], cols[4][r], cols[5][r] = dropsByRun[runID], int64(over), int64(overQuota)
			res.Stored += kept
			res.Dropped += over
			res.OverQuota += overQuota
		}
		for start := 0; start < len(rows); start += runLogInsertBatch {
			chunk := rows[start:min(start+runLogInsertBatch, len(rows))]
			if _, err := s.q.RunLogInsert(ctx, tx, chunk); err != nil {
				return fmt.Errorf("insert %d log lines: %w", len(chunk), err)
			}
		}
		if _, err := s.execByKey(ctx, tx, qRunLogStatesUpdate, "run_id", runs, cols...); err != nil {
			return fmt.Errorf("update log state of %d runs: %w", len(runs), err)
		}
		if quota {
			if _, err := s.q.AppLogDayAdd(ctx, tx, appLogDayAddParams{Bytes: storedBytes, Dropped: res.OverQuota, App: lim.App, Day: lim.Day}); err != nil {
				return fmt.Errorf("log quota of app %s: %w", lim.App, err)
			}
		}
		return nil
	})
	return res, err
}

// AppLogDay returns the run-log bytes app stored on the UTC day (YYYY-MM-DD)
// and the lines its quota dropped (0 and 0 without a quota).
func (s *Store) AppLogDay(ctx context.Context, app, day string) (bytes, dropped int64, err error) {
	r, err := s.q.AppLogDay(ctx, s.db, appLogDayParams{App: app, Day: day})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("logs of app %s on %s: %w", app, day, err)
	}
	return r.Bytes, r.Dropped, nil
}

// AppLogQuota returns app's quota on run-log bytes a day (0: none, or no
// such app).
func (s *Store) AppLogQuota(ctx context.Context, app string) (int64, error) {
	n, err := s.q.AppLogQuota(ctx, s.db, app)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("log quota of app %s: %w", app, err)
	}
	return n, nil
}

// ensureRunLogStates creates the missing log states of runs (sorted), in
// autocommit statements of up to 1000 runs.
func (s *Store) ensureRunLogStates(ctx context.Context, runs []int64) error {
	for start := 0; start < len(runs); start += 1000 {
		chunk := runs[start:min(start+1000, len(runs))]
		err := retry(ctx, func() error {
			_, err := s.q.RunLogStateEnsure(ctx, s.db, chunk)
			return err
		})
		if err != nil {
			return fmt.Errorf("log states of %d runs: %w", len(chunk), err)
		}
	}
	return nil
}

// lockRunLogStates locks the log states of runs (sorted) in run_id order
// and returns them by run.
func (s *Store) lockRunLogStates(ctx context.Context, tx *sqlx.Tx, runs []int64) (map[int64]RunLogState, error) {
	out := make(map[int64]RunLogState, len(runs))
	for start := 0; start < len(runs); start += 1000 {
		chunk := runs[start:min(start+1000, len(runs))]
		rows, err := s.q.RunLogStatesLock(ctx, tx, chunk)
		if err != nil {
			return nil, fmt.Errorf("lock log states of %d runs: %w", len(chunk), err)
		}
		for _, st := range rows {
			out[st.RunID] = st
		}
	}
	return out, nil
}

// RunLogFilter selects lines for RunLogs.
type RunLogFilter struct {
	Slot     int   // -1: every slot
	AfterSeq int64 // keyset: lines with seq > AfterSeq
	MinLevel int   // lines with level >= MinLevel (math.MinInt32 for all)
	Limit    int   // 1..; default 500
}

// RunLogs returns a page of a run's lines in seq order, and the run's log
// state read just before them (zero when the run has no logs): every
// matching line with seq < state.NextSeq is in this page or an earlier one
// when the page is not full.
func (s *Store) RunLogs(ctx context.Context, runID int64, f RunLogFilter) ([]RunLogLine, RunLogState, error) {
	st, err := s.q.RunLogState(ctx, s.db, runID)
	if errors.Is(err, sql.ErrNoRows) {
		st = RunLogState{RunID: runID, NextSeq: 1}
	} else if err != nil {
		return nil, st, fmt.Errorf("log state of run %d: %w", runID, err)
	}
	if f.Limit <= 0 {
		f.Limit = 500
	}
	var out []RunLogLine
	if f.Slot >= 0 {
		out, err = s.q.RunLogPageSlot(ctx, s.db, runLogPageSlotParams{RunID: runID, Slot: f.Slot, Seq: f.AfterSeq, Level: f.MinLevel, Limit: f.Limit})
	} else {
		out, err = s.q.RunLogPage(ctx, s.db, runLogPageParams{RunID: runID, Seq: f.AfterSeq, Level: f.MinLevel, Limit: f.Limit})
	}
	if err != nil {
		return nil, st, fmt.Errorf("log lines of run %d: %w", runID, err)
	}
	return out, st, nil
}

// DeleteRunLogs deletes the log lines and log state of runs (for
// retention: in the transaction that deletes the runs).
func (t *Tx) DeleteRunLogs(ctx context.Context, runIDs []int64) error {
	s, tx := t.s, t.tx
	if len(runIDs) == 0 {
		return nil
	}
	for _, del := range []func(context.Context, dbtx, []int64) (int64, error){s.q.RunLogDeleteRuns, s.q.RunLogStateDeleteRuns} {
		if _, err := del(ctx, tx, runIDs); err != nil {
			return fmt.Errorf("delete logs of %d runs: %w", len(runIDs), err)
		}
	}
	return nil
}
