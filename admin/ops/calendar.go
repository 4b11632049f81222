package ops

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// ErrCalendarNotFound is a job's calendar_id that names no calendar the
// job's app may use.
var ErrCalendarNotFound = errors.New("calendar not found")

// CalendarFor reads calendar id for a job of app: a global calendar or one
// of app. Another app's calendar does not exist for the job
// (ErrCalendarNotFound), as it does not for its users.
func (s *Service) CalendarFor(ctx context.Context, id int64, app string) (store.Calendar, *calendar.Calendar, error) {
	row, err := s.st.Calendar(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && row.App != "" && row.App != app {
		return row, nil, ErrCalendarNotFound
	}
	if err != nil {
		return row, nil, err
	}
	cal, err := row.Build()
	return row, cal, err
}

// withCalendar completes a validated job on a calendar (jobdef.Validated):
// it reads the calendar, builds the schedule on it and sets the next
// firing. A job without a calendar is returned as it is, with a nil
// schedule. A calendar the job's app may not use is an ErrInvalid naming
// calendar_id.
func (s *Service) withCalendar(ctx context.Context, v jobdef.Validated) (jobdef.Validated, *schedule.CalendarSchedule, error) {
	if !v.Job.HasCalendar() {
		return v, nil, nil
	}
	_, cal, err := s.CalendarFor(ctx, v.Job.CalendarID, v.Job.App)
	if errors.Is(err, ErrCalendarNotFound) {
		return v, nil, fieldErrors(jobdef.FieldMsgs{"calendar_id": msg.New(msg.JobCalendarMissing, "id", v.Job.CalendarID, "app", v.Job.App)})
	}
	if err != nil {
		return v, nil, err
	}
	v, cs, err := jobdef.WithCalendar(v, cal, s.cfg.Clock.Now())
	if err != nil {
		return v, nil, fieldErrors(err)
	}
	return v, cs, nil
}

// NextFire returns the next firing after now of stored job j (enabled,
// not paused): with its calendar as stored now when it has one.
func (s *Service) NextFire(ctx context.Context, j store.Job, now time.Time) (sql.NullInt64, error) {
	next, _, err := s.nextInWindow(ctx, j, now)
	return next, err
}

// nextInWindow is NextFire with the reason the job is completed when it
// has no firing left in its window (zero otherwise, and for a job completed
// already).
func (s *Service) nextInWindow(ctx context.Context, j store.Job, now time.Time) (sql.NullInt64, msg.Msg, error) {
	if j.Completed() {
		return sql.NullInt64{}, msg.Msg{}, nil // an edit plans a completed job again
	}
	sc, err := jobrules.ScheduleOf(j)
	if err != nil {
		return sql.NullInt64{}, msg.Msg{}, err
	}
	from := jobdef.FiringsFrom(j.JobWindow, now)
	if !j.HasCalendar() {
		next, why := jobrules.BoundNext(j.JobWindow, j.CronExpr, jobdef.NextFire(sc, from))
		return next, why, nil
	}
	_, cal, err := s.CalendarFor(ctx, j.CalendarID, j.App)
	if err != nil {
		return sql.NullInt64{}, msg.Msg{}, fmt.Errorf("calendar %d: %w", j.CalendarID, err)
	}
	cs, err := schedule.WithCalendar(sc.Primary(), cal, jobrules.CalendarPolicy(j.JobCalendar))
	if err != nil {
		return sql.NullInt64{}, msg.Msg{}, err
	}
	next, why := jobrules.BoundNext(j.JobWindow, j.CronExpr, jobdef.NextEvent(cs, from))
	return next, why, nil
}
