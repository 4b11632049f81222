package store

import (
	"context"
	"fmt"

	"github.com/shardjob/shardjob/admin/calendar"
)

// Calendar is a stored business calendar (see admin/calendar for what it
// means): its base week and days as the canonical CSV of
// calendar.FormatCSV, their counts, and Version, the content hash a run
// records. Revision is the optimistic lock of edits. App "" is a global
// calendar, which every app's jobs may use.
type Calendar struct {
	ID          int64  `db:"id"`
	App         string `db:"app"`
	Name        string `db:"name"`
	Description string `db:"description"`
	Week        string `db:"week"`
	Days        string `db:"days"` // empty in lists (CalendarsOfApps)
	Holidays    int    `db:"holidays"`
	Workdays    int    `db:"workdays"`
	Version     string `db:"version"`
	Revision    int64  `db:"revision"`
	CreatedAt   int64  `db:"created_at"`
	UpdatedAt   int64  `db:"updated_at"`
	UpdatedBy   string `db:"updated_by"`
}

// CreateCalendar inserts c and returns its id; a taken (app, name) is
// ErrConflict.
func (s *Store) CreateCalendar(ctx context.Context, c Calendar) (int64, error) {
	id, err := s.q.CalendarInsert(ctx, s.db, c)
	if isDuplicate(err) {
		return 0, conflictf("calendar %q of app %q already exists", c.Name, c.App)
	}
	if err != nil {
		return 0, fmt.Errorf("create calendar %s: %w", c.Name, err)
	}
	return id, nil
}

// UpdateCalendar writes c's description, week and days over calendar c.ID
// if its revision is still c.Revision; otherwise ErrConflict (someone else
// changed it) or ErrNotFound.
func (s *Store) UpdateCalendar(ctx context.Context, c Calendar) error {
	n, err := s.q.CalendarUpdate(ctx, s.db, c)
	if err != nil {
		return fmt.Errorf("update calendar %d: %w", c.ID, err)
	}
	if n == 0 {
		if _, err := s.Calendar(ctx, c.ID); err != nil {
			return err
		}
		return conflictf("calendar %d was changed by someone else (revision %d is stale): reload it and apply your change again", c.ID, c.Revision)
	}
	return nil
}

// Calendar returns one calendar with its days, or ErrNotFound.
func (s *Store) Calendar(ctx context.Context, id int64) (Calendar, error) {
	return s.calendar(ctx, s.db, id)
}

func (s *Store) calendar(ctx context.Context, db dbtx, id int64) (Calendar, error) {
	c, err := s.q.CalendarByID(ctx, db, id)
	if err != nil {
		return c, notFound(err, fmt.Sprintf("calendar %d", id))
	}
	return c, nil
}

// CalendarsOfApps lists the calendars a reader limited to apps sees (nil:
// no limit): the global ones and those of apps, without their days.
func (s *Store) CalendarsOfApps(ctx context.Context, apps []string) ([]Calendar, error) {
	out, err := s.q.CalendarList(ctx, s.db, calendarListParams{AllApps: apps == nil, Apps: orNone(apps)})
	if err != nil {
		return nil, fmt.Errorf("list calendars: %w", err)
	}
	return out, nil
}

// DeleteCalendar removes a calendar; ErrNotFound when there is none.
func (s *Store) DeleteCalendar(ctx context.Context, id int64) error {
	n, err := s.q.CalendarDelete(ctx, s.db, id)
	if err != nil {
		return fmt.Errorf("delete calendar %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("calendar %d: %w", id, ErrNotFound)
	}
	return nil
}

// Build returns the calendar c stands for (its days parsed): what a job's
// schedule is decided with. Its Version is c.Version for a calendar stored
// by the API.
func (c Calendar) Build() (*calendar.Calendar, error) {
	week, err := calendar.ParseWeek(c.Week)
	if err != nil {
		return nil, fmt.Errorf("calendar %d: stored week: %w", c.ID, err)
	}
	entries, err := calendar.ParseCSV([]byte(c.Days))
	if err != nil {
		return nil, fmt.Errorf("calendar %d: stored days: %w", c.ID, err)
	}
	cal, err := calendar.New(calendar.Definition{Name: c.Name, Week: week, Entries: entries})
	if err != nil {
		return nil, fmt.Errorf("calendar %d: %w", c.ID, err)
	}
	return cal, nil
}

// JobsOfCalendar returns the jobs that use calendar id (at most 1000).
func (s *Store) JobsOfCalendar(ctx context.Context, id int64) ([]Job, error) {
	out, err := s.q.JobsOfCalendar(ctx, s.db, id)
	if err != nil {
		return nil, fmt.Errorf("jobs of calendar %d: %w", id, err)
	}
	return out, nil
}

// CalendarVersions returns the version of each of the calendars ids that
// exists (one query): the leader reloads a calendar only when its version
// changed.
func (t *Tx) CalendarVersions(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.s.q.CalendarVersions(ctx, t.tx, ids)
	if err != nil {
		return nil, fmt.Errorf("calendar versions: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = r.Version
	}
	return out, nil
}

// Calendar reads one calendar with its days inside the transaction, or
// ErrNotFound.
func (t *Tx) Calendar(ctx context.Context, id int64) (Calendar, error) {
	return t.s.calendar(ctx, t.tx, id)
}
