package jobdef

import (
	"database/sql"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobrules"
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

// planWindow sets the next firing of the new definition j (enabled, its
// schedule's next firing after FiringsFrom is next) and whether it is
// completed as of now.
func planWindow(j *store.Job, next sql.NullInt64, now time.Time) {
	n, why := jobrules.BoundNext(j.JobWindow, j.CronExpr, next)
	j.NextFireAt = n
	j.CompletedAt, j.CompletedMsg = sql.NullInt64{}, msg.Msg{}
	if !why.IsZero() {
		j.CompletedAt, j.CompletedMsg = sql.NullInt64{Int64: now.UnixMilli(), Valid: true}, why
	}
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
