package jobrules

import (
	"database/sql"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// A job's window (docs/schedules.md, "Windows and one-offs"): start_at,
// end_at, max_runs, and the completed state they (and a one-time @at
// schedule) lead to. admin/jobdef validates them.

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

// MaxRunsReached is the message of a job completed by its max_runs, or
// zero when it may fire (max_runs 0, or fewer successful runs).
func MaxRunsReached(j store.Job, c store.RunCounts) msg.Msg {
	if j.MaxRuns <= 0 || c.Succeeded < j.MaxRuns {
		return msg.Msg{}
	}
	return msg.New(msg.JobCompletedMaxRuns, "succeeded", c.Succeeded, "max", j.MaxRuns)
}
