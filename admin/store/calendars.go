package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
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
	res, err := s.db.NamedExecContext(ctx, s.q.get(qCalendarInsert), c)
	if isDuplicate(err) {
		return 0, fmt.Errorf("calendar %q of app %q already exists: %w", c.Name, c.App, ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("create calendar %s: %w", c.Name, err)
	}
	return res.LastInsertId()
}

// UpdateCalendar writes c's description, week and days over calendar c.ID
// if its revision is still c.Revision; otherwise ErrConflict (someone else
// changed it) or ErrNotFound.
func (s *Store) UpdateCalendar(ctx context.Context, c Calendar) error {
	res, err := s.db.NamedExecContext(ctx, s.q.get(qCalendarUpdate), c)
	if err != nil {
		return fmt.Errorf("update calendar %d: %w", c.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := s.Calendar(ctx, c.ID); err != nil {
			return err
		}
		return fmt.Errorf("calendar %d was changed by someone else (revision %d is stale): reload it and apply your change again: %w", c.ID, c.Revision, ErrConflict)
	}
	return nil
}

// Calendar returns one calendar with its days, or ErrNotFound.
func (s *Store) Calendar(ctx context.Context, id int64) (Calendar, error) {
	var c Calendar
	if err := s.db.GetContext(ctx, &c, s.q.get(qCalendarByID), id); err != nil {
		return c, notFound(err, fmt.Sprintf("calendar %d", id))
	}
	return c, nil
}

// CalendarsOfApps lists the calendars a reader limited to apps sees (nil:
// no limit): the global ones and those of apps, without their days.
func (s *Store) CalendarsOfApps(ctx context.Context, apps []string) ([]Calendar, error) {
	q, args, err := sqlx.In(s.q.get(qCalendarList), apps == nil, orNone(apps))
	if err != nil {
		return nil, err
	}
	var out []Calendar
	if err := s.db.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("list calendars: %w", err)
	}
	return out, nil
}

// DeleteCalendar removes a calendar; ErrNotFound when there is none.
func (s *Store) DeleteCalendar(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, s.q.get(qCalendarDelete), id)
	if err != nil {
		return fmt.Errorf("delete calendar %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("calendar %d: %w", id, ErrNotFound)
	}
	return nil
}
