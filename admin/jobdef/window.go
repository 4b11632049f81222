package jobdef

import (
	"database/sql"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// MaxMaxRuns bounds a job's max_runs.
const MaxMaxRuns = 1_000_000

// A job's window (docs/schedules.md, "Windows and one-offs"): start_at,
// end_at, max_runs, and the completed state they (and a one-time @at
// schedule) lead to.

// validateWindow checks start_at, end_at and max_runs into errs.
func validateWindow(s apitypes.JobDef, errs FieldMsgs) {
	if s.StartAt != nil && s.EndAt != nil && !s.EndAt.After(*s.StartAt) {
		errs["end_at"] = msg.New(msg.JobEndBeforeStart, "start_at", s.StartAt.UTC().Format(time.RFC3339))
	}
	if s.MaxRuns < 0 || s.MaxRuns > MaxMaxRuns {
		errs["max_runs"] = msg.New(msg.JobMaxRuns, "value", s.MaxRuns, "max", MaxMaxRuns)
	}
}

// windowRow is the window of spec s as stored (not yet completed).
func windowRow(s apitypes.JobDef) store.JobWindow {
	w := store.JobWindow{MaxRuns: s.MaxRuns}
	if s.StartAt != nil {
		w.StartAt = sql.NullInt64{Int64: s.StartAt.UnixMilli(), Valid: true}
	}
	if s.EndAt != nil {
		w.EndAt = sql.NullInt64{Int64: s.EndAt.UnixMilli(), Valid: true}
	}
	return w
}

// FiringsFrom is the instant a job's next firing is looked for after: now,
// or just before its start_at when that is later.
func FiringsFrom(w store.JobWindow, now time.Time) time.Time {
	if w.StartAt.Valid {
		if start := time.UnixMilli(w.StartAt.Int64).Add(-time.Millisecond); start.After(now) {
			return start
		}
	}
	return now
}

// InWindow reports whether a firing at ms is inside the window (start_at
// and end_at inclusive).
func InWindow(w store.JobWindow, ms int64) bool {
	return (!w.StartAt.Valid || ms >= w.StartAt.Int64) && (!w.EndAt.Valid || ms <= w.EndAt.Int64)
}

// BoundNext is next (the job's next firing as its schedule gives it) with
// the window applied: NULL when it is after end_at. The message says why
// the job is then completed: past its end_at, or no firing left in
// schedule expr (a one-time @at that fired or is past); zero when next is
// a firing.
func BoundNext(w store.JobWindow, expr string, next sql.NullInt64) (sql.NullInt64, msg.Msg) {
	switch {
	case !next.Valid:
		return next, msg.New(msg.JobCompletedNoFiring, "expr", strconv.Quote(expr))
	case w.EndAt.Valid && next.Int64 > w.EndAt.Int64:
		return sql.NullInt64{}, msg.New(msg.JobCompletedEndAt, "end_at", time.UnixMilli(w.EndAt.Int64).UTC().Format(time.RFC3339))
	}
	return next, msg.Msg{}
}

// planWindow sets the next firing of the new definition j (enabled, its
// schedule's next firing after FiringsFrom is next) and whether it is
// completed as of now.
func planWindow(j *store.Job, next sql.NullInt64, now time.Time) {
	n, why := BoundNext(j.JobWindow, j.CronExpr, next)
	j.NextFireAt = n
	j.CompletedAt, j.CompletedMsg = sql.NullInt64{}, msg.Msg{}
	if !why.IsZero() {
		j.CompletedAt, j.CompletedMsg = sql.NullInt64{Int64: now.UnixMilli(), Valid: true}, why
	}
}

// MaxRunsReached is the message of a job completed by its max_runs, or
// zero when it may fire (max_runs 0, or fewer successful runs).
func MaxRunsReached(j store.Job, c store.RunCounts) msg.Msg {
	if j.MaxRuns <= 0 || c.Succeeded < j.MaxRuns {
		return msg.Msg{}
	}
	return msg.New(msg.JobCompletedMaxRuns, "succeeded", c.Succeeded, "max", j.MaxRuns)
}

// State is job j's state as the API answers it (apitypes.Job.State).
func State(j store.Job) string {
	switch {
	case !j.Enabled:
		return apitypes.JobDisabled
	case j.Completed():
		return apitypes.JobCompleted
	case j.Paused:
		return apitypes.JobPaused
	}
	return apitypes.JobScheduled
}
