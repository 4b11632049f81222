package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/shardjob/shardjob/admin/msg"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// Dead letters (docs/failures.md, "Dead letters"): the slots that failed
// permanently or used up their retries. admin/runstate decides which
// attempts are dead and writes their letters in the transaction that
// records the failure (DeadSources, InsertDeadLetters); it replays them
// (LockDeadLetters, LockDeadSlots, ReplaySlots, MarkReplayed). The
// operator API lists them (DeadLetters, CountDeadLetters).

// DeadSource is what a dead letter keeps of a dead attempt, read after its
// outcome was written.
type DeadSource struct {
	Token      int64  `db:"token"`
	RunID      int64  `db:"run_id"`
	Slot       int    `db:"slot"`
	Attempt    int    `db:"attempt"`
	Processed  int64  `db:"processed"`
	Skipped    int64  `db:"skipped"`
	Failed     int64  `db:"failed"`
	Uncertain  int64  `db:"uncertain"`
	Error      string `db:"error"`
	ErrorMsg   string `db:"error_msg"`
	ErrorClass string `db:"error_class"`
	JobID      int64  `db:"job_id"`
	App        string `db:"app"`
	JobName    string `db:"job_name"`
	Handler    string `db:"handler"`
	// ScheduledAt is the run key's instant (with JobID).
	ScheduledAt int64 `db:"scheduled_at"`
	// Params are what the attempt ran with: a replay's params of the slot,
	// else the run's.
	Params string `db:"params"`
	// SlotParams are the job's slot params ("0=a,1=b"), SlotCount the
	// run's slots: the caller picks the slot's param.
	SlotParams string `db:"slot_params"`
	SlotCount  int    `db:"slot_count"`
	DiedAt     int64  `db:"died_at"` // the database clock
}

// DeadLetter is a dead slot as kept, and its replays.
type DeadLetter struct {
	ID          int64  `db:"id"`
	App         string `db:"app"`
	JobID       int64  `db:"job_id"`
	JobName     string `db:"job_name"`
	Handler     string `db:"handler"`
	RunID       int64  `db:"run_id"`
	ScheduledAt int64  `db:"scheduled_at"`
	Slot        int    `db:"slot"`
	// Token is the dead attempt's, Attempt its number in the slot.
	Token      int64   `db:"token"`
	Attempt    int     `db:"attempt"`
	Params     string  `db:"params"`
	SlotParam  string  `db:"slot_param"`
	Error      string  `db:"error"`
	ErrorMsg   msg.Msg `db:"error_msg"` // an admin's reason as a code (zero: the handler's text)
	ErrorClass string  `db:"error_class"`
	Processed  int64   `db:"processed"`
	Skipped    int64   `db:"skipped"`
	Failed     int64   `db:"failed"`
	Uncertain  int64   `db:"uncertain"`
	DiedAt     int64   `db:"died_at"`
	// ReplayedAt, ReplayedBy and ReplayToken are of the latest replay
	// (NULL, "" and NULL before the first); Replays counts them.
	ReplayedAt  sql.NullInt64 `db:"replayed_at"`
	ReplayedBy  string        `db:"replayed_by"`
	ReplayToken sql.NullInt64 `db:"replay_token"`
	Replays     int           `db:"replays"`
}

// DeadSlot is the current attempt of a dead letter's slot, locked.
type DeadSlot struct {
	DeadID     int64  `db:"dead_id"`
	Token      int64  `db:"token"`
	RunID      int64  `db:"run_id"`
	Slot       int    `db:"slot"`
	Attempt    int    `db:"attempt"`
	Status     string `db:"status"`
	JobDeleted bool   `db:"job_deleted"`
}

// NewDeadLetter is a dead letter to write: a source and its slot's param.
type NewDeadLetter struct {
	DeadSource
	SlotParam string
}

// deadInsertBatch bounds the rows of one DeadLetterInsert (19 values each).
const deadInsertBatch = 500

// DeadSources reads what the dead letters of tokens keep, in one query.
func (t *Tx) DeadSources(ctx context.Context, tokens []int64) ([]DeadSource, error) {
	out, err := t.s.q.DeadLetterSources(ctx, t.tx, tokens)
	if err != nil {
		return nil, fmt.Errorf("dead attempts %v: %w", tokens, err)
	}
	return out, nil
}

// InsertDeadLetters writes dead letters in multi-row inserts.
func (t *Tx) InsertDeadLetters(ctx context.Context, rows []NewDeadLetter) error {
	for start := 0; start < len(rows); start += deadInsertBatch {
		chunk := rows[start:min(start+deadInsertBatch, len(rows))]
		ps := make([]deadLetterInsertParams, len(chunk))
		for i, d := range chunk {
			ps[i] = deadLetterInsertParams{
				App: d.App, JobID: d.JobID, JobName: d.JobName, Handler: d.Handler, RunID: d.RunID, ScheduledAt: d.ScheduledAt,
				Slot: d.Slot, Token: d.Token, Attempt: d.Attempt, Params: d.Params, SlotParam: d.SlotParam,
				Error: d.Error, ErrorMsg: d.ErrorMsg, ErrorClass: d.ErrorClass,
				Processed: d.Processed, Skipped: d.Skipped, Failed: d.Failed, Uncertain: d.Uncertain, DiedAt: d.DiedAt,
			}
		}
		if _, err := t.s.q.DeadLetterInsert(ctx, t.tx, ps); err != nil {
			return fmt.Errorf("write %d dead letters: %w", len(chunk), err)
		}
	}
	return nil
}

// DeadFilter selects dead letters. Zero fields do not filter.
type DeadFilter struct {
	App     string
	JobID   int64
	Handler string
	Class   string // error class
	// FromMS and ToMS, when not 0, keep letters that died in [FromMS, ToMS).
	FromMS, ToMS int64
	// BeforeID is the keyset: the letters older than letter BeforeID.
	BeforeID int64
	Limit    int
	Apps     []string // only these apps' letters (nil: every app)
}

// params are f's values for the list and count queries.
func (f DeadFilter) bounds() (before, to int64) {
	before, to = f.BeforeID, f.ToMS
	if before <= 0 {
		before = 1<<63 - 1
	}
	if to <= 0 {
		to = 1<<63 - 1
	}
	return before, to
}

// DeadLetters returns the letters f selects, newest first (by id).
func (s *Store) DeadLetters(ctx context.Context, f DeadFilter) ([]DeadLetter, error) {
	if f.Apps != nil && len(f.Apps) == 0 {
		return nil, nil
	}
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	before, to := f.bounds()
	out, err := s.deadListQueries(f).DeadLetterList(ctx, s.db, deadLetterListParams{
		ID: before, AllApps: f.Apps == nil, Apps: orNone(f.Apps), App: f.App, JobID: f.JobID, Handler: f.Handler, Class: f.Class,
		From: f.FromMS, To: to, Limit: f.Limit,
	})
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	return out, nil
}

// deadListQueries are the queries with DeadLetterList reading, on MariaDB
// and MySQL, the index of f's most selective filter (job, handler, app,
// class: each index is that column, then id). Left to itself MariaDB reads
// such an index by the filter's value alone ("ref"), from the newest
// letter down, and drops the keyset's id < ? to a condition on each row:
// page N of a filtered list then reads every letter of the pages before
// (TestScaleQueriesExamineOnlyTheirWork: 7,100 rows for the 100 of a
// second page). Forced, it reads the range (value, id < ?) and stops at
// the page's end.
func (s *Store) deadListQueries(f DeadFilter) queries {
	if s.dialect != sqlfiles.MySQL {
		return s.q
	}
	var index string
	switch {
	case f.JobID > 0:
		index = "idx_dead_job"
	case f.Handler != "":
		index = "idx_dead_handler"
	case f.App != "":
		index = "idx_dead_app"
	case f.Class != "":
		index = "idx_dead_class"
	default:
		return s.q
	}
	q := append(queries(nil), s.q...)
	q[qDeadLetterList] = strings.Replace(q[qDeadLetterList], "FROM dead_letter d", "FROM dead_letter d FORCE INDEX ("+index+")", 1)
	return q
}

// CountDeadLetters counts the letters f selects (its keyset aside) up to
// limit (DefaultListCountCap when 0): exact is false past it.
func (s *Store) CountDeadLetters(ctx context.Context, f DeadFilter, limit int) (n int64, exact bool, err error) {
	if f.Apps != nil && len(f.Apps) == 0 {
		return 0, true, nil
	}
	if limit <= 0 {
		limit = DefaultListCountCap
	}
	_, to := f.bounds()
	n, err = s.q.DeadLetterCount(ctx, s.db, deadLetterCountParams{
		AllApps: f.Apps == nil, Apps: orNone(f.Apps), App: f.App, JobID: f.JobID, Handler: f.Handler, Class: f.Class,
		From: f.FromMS, To: to, Limit: limit + 1,
	})
	if err != nil {
		return 0, false, fmt.Errorf("count dead letters: %w", err)
	}
	if n > int64(limit) {
		return int64(limit), false, nil
	}
	return n, true, nil
}

// DeadLettersByID returns the letters of ids that exist, by id order.
func (s *Store) DeadLettersByID(ctx context.Context, ids []int64) ([]DeadLetter, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := s.q.DeadLettersByID(ctx, s.db, ids)
	if err != nil {
		return nil, fmt.Errorf("dead letters %v: %w", ids, err)
	}
	return out, nil
}

// LockDeadLetters returns the letters of ids that exist, locked.
func (t *Tx) LockDeadLetters(ctx context.Context, ids []int64) ([]DeadLetter, error) {
	out, err := t.s.q.DeadLettersLock(ctx, t.tx, ids)
	if err != nil {
		return nil, fmt.Errorf("lock %d dead letters: %w", len(ids), err)
	}
	return out, nil
}

// LockDeadSlots returns the current attempt of each letter's slot, locked
// in token order; a letter whose run is gone is absent.
func (t *Tx) LockDeadSlots(ctx context.Context, ids []int64) ([]DeadSlot, error) {
	out, err := t.s.q.DeadSlotsLock(ctx, t.tx, ids)
	if err != nil {
		return nil, fmt.Errorf("lock the slots of %d dead letters: %w", len(ids), err)
	}
	return out, nil
}

// SlotReplay is one slot a replay runs again: its current (finished)
// attempt and, when the replay gives them, the params it runs with.
type SlotReplay struct {
	Token   int64
	RunID   int64
	Slot    int
	Attempt int
	Params  sql.NullString
}

// ReplaySlots runs slots again, set-based: their current attempts are
// superseded, each slot gets a new unplaced attempt (the leader places it)
// with a fresh retry budget, their runs that ended run again from atMS,
// and the params given are kept for the slots (every later attempt of the
// slot in the run runs with them). It returns how many attempts it
// created; fewer than len(slots) means a slot was no longer finished and
// the caller rolls back.
func (t *Tx) ReplaySlots(ctx context.Context, slots []SlotReplay, atMS int64) (int64, error) {
	if len(slots) == 0 {
		return 0, nil
	}
	tokens := make([]int64, len(slots))
	runs := make([]int64, 0, len(slots))
	next := make([]attemptInsertWaitingParams, len(slots))
	var params []slotReplayParamsUpsertParams
	for i, sl := range slots {
		tokens[i] = sl.Token
		runs = append(runs, sl.RunID)
		next[i] = attemptInsertWaitingParams{RunID: sl.RunID, Slot: sl.Slot, Attempt: sl.Attempt + 1}
		if sl.Params.Valid {
			params = append(params, slotReplayParamsUpsertParams{RunID: sl.RunID, Slot: sl.Slot, Params: sl.Params.String})
		}
	}
	n, err := t.s.q.AttemptsSupersedeFinished(ctx, t.tx, tokens)
	if err != nil {
		return 0, fmt.Errorf("replay: supersede %d attempts: %w", len(tokens), err)
	}
	if n != int64(len(tokens)) {
		return n, nil
	}
	var created int64
	for start := 0; start < len(next); start += deadInsertBatch {
		k, err := t.s.q.AttemptInsertWaiting(ctx, t.tx, next[start:min(start+deadInsertBatch, len(next))])
		if err != nil {
			return 0, fmt.Errorf("replay: insert %d attempts: %w", len(next), err)
		}
		created += k
	}
	for start := 0; start < len(params); start += deadInsertBatch {
		if _, err := t.s.q.SlotReplayParamsUpsert(ctx, t.tx, params[start:min(start+deadInsertBatch, len(params))]); err != nil {
			return 0, fmt.Errorf("replay: params of %d slots: %w", len(params), err)
		}
	}
	if _, err := t.s.q.RunsReopen(ctx, t.tx, runsReopenParams{StartedAt: atMS, IDs: runs}); err != nil {
		return 0, fmt.Errorf("replay: reopen %d runs: %w", len(runs), err)
	}
	return created, nil
}

// MarkReplayed records that letters ids were replayed at atMS by whom,
// with the new current attempt of each slot as its replay token: only
// letters not replayed yet unless force. It returns how many it marked.
func (t *Tx) MarkReplayed(ctx context.Context, ids []int64, atMS int64, by string, force bool) (int64, error) {
	n, err := t.s.q.DeadLettersMarkReplayed(ctx, t.tx, deadLettersMarkReplayedParams{ReplayedAt: atMS, ReplayedBy: by, IDs: ids, Force: force})
	if err != nil {
		return 0, fmt.Errorf("mark %d dead letters replayed: %w", len(ids), err)
	}
	return n, nil
}
