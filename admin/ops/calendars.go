package ops

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/names"
)

// The business calendars: everyone who may read sees the global calendars
// and those of their apps; operators manage their apps' calendars, admins
// the global ones (app ""). CalendarFor (calendar.go) reads one for a job.

// calendarObject is calendar id as the audit log names it.
func calendarObject(id int64) string { return "calendar/" + strconv.FormatInt(id, 10) }

// CalendarView is calendar c as the API returns it; its days when the row
// has them (not in lists).
func CalendarView(c store.Calendar) (apitypes.Calendar, error) {
	v := apitypes.Calendar{ID: c.ID, App: c.App, Name: c.Name, Description: c.Description, Week: c.Week,
		Holidays: c.Holidays, Workdays: c.Workdays, Version: c.Version, Revision: c.Revision,
		CreatedAt: msTime(c.CreatedAt), UpdatedAt: msTime(c.UpdatedAt), UpdatedBy: c.UpdatedBy}
	if c.Days == "" {
		return v, nil
	}
	entries, err := calendar.ParseCSV([]byte(c.Days))
	if err != nil {
		return v, fmt.Errorf("calendar %d: stored days: %w", c.ID, err)
	}
	v.Days = make([]apitypes.CalendarDay, len(entries))
	for i, e := range entries {
		v.Days[i] = apitypes.CalendarDay{Date: e.Date.String(), Kind: string(e.Kind), Name: e.Name}
	}
	return v, nil
}

// calendarSummary is v without its days (audit entries).
func calendarSummary(v apitypes.Calendar) apitypes.Calendar {
	v.Days = nil
	return v
}

// calendarRow validates spec into the row to store, changed by a, or
// refuses naming the fields in error (ErrInvalid).
func calendarRow(a Actor, spec apitypes.CalendarSpec) (store.Calendar, error) {
	fields := map[string]msg.Msg{}
	if spec.App != "" && !names.Valid(spec.App) {
		fields["app"] = msg.New(msg.CalAppRule, "rule", msg.New(msg.NameRule))
	}
	if len(spec.Description) > 1024 {
		fields["description"] = msg.New(msg.ValueMaxChars, "max", 1024)
	}
	def := calendar.Definition{Name: spec.Name}
	weekText := spec.Week
	if weekText == "" {
		weekText = calendar.MonFri.String()
	}
	week, err := calendar.ParseWeek(weekText)
	if err != nil {
		fields["week"] = msg.New(msg.CalWeekExample, "error", msg.Of(err))
	}
	def.Week = week
	switch {
	case spec.Import != nil && len(spec.Days) > 0:
		fields["import"] = msg.New(msg.CalImportBoth)
	case spec.Import != nil:
		var entries []calendar.Entry
		switch spec.Import.Format {
		case "ics":
			entries, err = calendar.ParseICS([]byte(spec.Import.Content))
		case "csv":
			entries, err = calendar.ParseCSV([]byte(spec.Import.Content))
		default:
			err = msg.New(msg.CalImportFormat, "format", strconv.Quote(spec.Import.Format))
		}
		if err != nil {
			fields["import"] = msg.Of(err) // an *ImportError: the file's line and problem as codes
		}
		def.Entries = entries
	default:
		for i, d := range spec.Days {
			date, err := calendar.ParseDate(d.Date)
			if err != nil {
				fields["days["+strconv.Itoa(i)+"].date"] = msg.New(msg.CalDayDate, "value", strconv.Quote(d.Date), "error", msg.Of(err))
				continue
			}
			def.Entries = append(def.Entries, calendar.Entry{Date: date, Kind: calendar.Kind(d.Kind), Name: d.Name})
		}
	}
	if len(fields) == 0 {
		if err := def.Validate(); err != nil {
			var ve *calendar.ValidationError
			if errors.As(err, &ve) {
				fields[ve.Field] = ve.Reason
			} else {
				fields["days"] = msg.Of(err)
			}
		}
	}
	if len(fields) > 0 {
		return store.Calendar{}, refuse(ErrInvalid, "invalid calendar", fields)
	}
	cal, err := calendar.New(def)
	if err != nil { // Validate passed: cannot happen, but never an internal error for input
		return store.Calendar{}, refuse(ErrInvalid, "invalid calendar: "+err.Error(), map[string]msg.Msg{"days": msg.Of(err)})
	}
	row := store.Calendar{App: spec.App, Name: spec.Name, Description: spec.Description, Week: week.String(),
		Days: string(cal.ExportCSV()), Version: cal.Version(), UpdatedBy: a.User.Username}
	for _, e := range def.Entries {
		if e.Kind == calendar.KindHoliday {
			row.Holidays++
		} else {
			row.Workdays++
		}
	}
	return row, nil
}

// mayManageCalendar refuses (ErrForbidden) a change by a to a calendar of
// app: a global one (app "") is for admins only.
func mayManageCalendar(a Actor, app string) error {
	u := a.User
	switch {
	case app == "" && !auth.Allows(u.Role, auth.RoleAdmin):
		return refuse(ErrForbidden, "only admins manage global calendars", map[string]msg.Msg{"app": msg.New(msg.CalGlobalAdminOnly)})
	case app != "" && !u.AppAllowed(app):
		return refuse(ErrForbidden, "you may not manage calendars of app "+app, map[string]msg.Msg{"app": msg.New(msg.NotYourApp, "apps", u.Apps)})
	}
	return nil
}

// Calendars lists the global calendars and those of the apps a may see,
// without their days.
func (s *Service) Calendars(ctx context.Context, a Actor) ([]apitypes.Calendar, error) {
	cals, err := s.st.CalendarsOfApps(ctx, a.User.AppList())
	if err != nil {
		return nil, err
	}
	out := make([]apitypes.Calendar, 0, len(cals))
	for _, cal := range cals {
		v, _ := CalendarView(cal) // no days in lists: cannot fail
		out = append(out, v)
	}
	return out, nil
}

// StoredCalendar reads calendar id for a: ErrNotFound when it does not
// exist or is of an app a may not see (a global one everyone sees).
func (s *Service) StoredCalendar(ctx context.Context, a Actor, id int64) (store.Calendar, error) {
	cal, err := s.st.Calendar(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && cal.App != "" && !a.User.AppAllowed(cal.App)) {
		return cal, notFound("calendar", id)
	}
	return cal, err
}

// Calendar returns calendar id with its days.
func (s *Service) Calendar(ctx context.Context, a Actor, id int64) (apitypes.Calendar, error) {
	cal, err := s.StoredCalendar(ctx, a, id)
	if err != nil {
		return apitypes.Calendar{}, err
	}
	return CalendarView(cal)
}

// ExportCalendar returns the name of calendar id and its days as CSV
// (date,kind,name), the format the import reads back; format is "" or
// "csv" (ErrInvalid otherwise).
func (s *Service) ExportCalendar(ctx context.Context, a Actor, id int64, format string) (name string, csv []byte, err error) {
	cal, err := s.StoredCalendar(ctx, a, id)
	if err != nil {
		return "", nil, err
	}
	if format != "" && format != "csv" {
		return "", nil, refuse(ErrInvalid, "format "+strconv.Quote(format)+": only csv is exported", nil)
	}
	return cal.Name, []byte(cal.Days), nil
}

// CreateCalendar validates spec and stores it as a new calendar. First
// what is wrong with the input (ErrInvalid), which says nothing of others'
// data; then whether a may manage it (ErrForbidden). A taken name is an
// ErrConflict naming name.
func (s *Service) CreateCalendar(ctx context.Context, a Actor, spec apitypes.CalendarSpec) (apitypes.Calendar, error) {
	row, err := calendarRow(a, spec)
	if err != nil {
		return apitypes.Calendar{}, err
	}
	if err := mayManageCalendar(a, spec.App); err != nil {
		return apitypes.Calendar{}, err
	}
	id, err := s.st.CreateCalendar(ctx, row)
	if errors.Is(err, store.ErrConflict) {
		return apitypes.Calendar{}, refuse(ErrConflict, err.Error(), map[string]msg.Msg{"name": msg.New(msg.CalNameTaken)})
	}
	if err != nil {
		return apitypes.Calendar{}, err
	}
	return s.savedCalendar(ctx, a, id, "calendar.create", nil)
}

// savedCalendar reads calendar id back, audits action with its summary
// (and before, when set) and returns it.
func (s *Service) savedCalendar(ctx context.Context, a Actor, id int64, action string, before *apitypes.Calendar) (apitypes.Calendar, error) {
	cal, err := s.st.Calendar(ctx, id)
	if err != nil {
		return apitypes.Calendar{}, err
	}
	v, err := CalendarView(cal)
	if err != nil {
		return apitypes.Calendar{}, err
	}
	var detail any = calendarSummary(v)
	if before != nil {
		detail = map[string]any{"before": before, "after": calendarSummary(v)}
	}
	s.audit(ctx, a, cal.App, action, calendarObject(id), detail)
	return v, nil
}

// UpdateCalendar replaces the days of calendar id with spec, guarded by
// the revision spec says it read (ErrConflict when it changed since). The
// app and name stay (ErrInvalid naming them otherwise; an omitted name is
// the calendar's). When the days change, the jobs on the calendar are
// planned again (replanCalendarJobs).
func (s *Service) UpdateCalendar(ctx context.Context, a Actor, id int64, spec apitypes.CalendarSpec) (apitypes.Calendar, error) {
	old, err := s.StoredCalendar(ctx, a, id)
	if err != nil {
		return apitypes.Calendar{}, err
	}
	if spec.Name == "" {
		spec.Name = old.Name
	}
	if spec.App != old.App || spec.Name != old.Name {
		return apitypes.Calendar{}, refuse(ErrInvalid, "app and name identify a calendar and cannot change",
			map[string]msg.Msg{"name": msg.New(msg.MustStay, "value", old.Name), "app": msg.New(msg.MustStay, "value", strconv.Quote(old.App))})
	}
	if err := mayManageCalendar(a, old.App); err != nil {
		return apitypes.Calendar{}, err
	}
	if spec.Revision <= 0 {
		return apitypes.Calendar{}, refuse(ErrInvalid, "revision is required",
			map[string]msg.Msg{"revision": msg.New(msg.CalRevisionRequired, "revision", old.Revision)})
	}
	row, err := calendarRow(a, spec)
	if err != nil {
		return apitypes.Calendar{}, err
	}
	row.ID, row.Revision = old.ID, spec.Revision
	err = s.st.UpdateCalendar(ctx, row)
	if errors.Is(err, store.ErrConflict) {
		return apitypes.Calendar{}, refuse(ErrConflict, err.Error(), nil)
	}
	if err != nil {
		return apitypes.Calendar{}, err
	}
	if row.Version != old.Version {
		s.replanCalendarJobs(ctx, old.ID)
	}
	old.Days = ""
	before, _ := CalendarView(old) // no days: cannot fail
	return s.savedCalendar(ctx, a, old.ID, "calendar.update", &before)
}

// DeleteCalendar deletes calendar id; one that jobs use stays
// (ErrConflict naming up to five of them: set another calendar on them, or
// none, first).
func (s *Service) DeleteCalendar(ctx context.Context, a Actor, id int64) error {
	cal, err := s.StoredCalendar(ctx, a, id)
	if err != nil {
		return err
	}
	if err := mayManageCalendar(a, cal.App); err != nil {
		return err
	}
	if err := s.calendarInUse(ctx, cal.ID); err != nil {
		return err
	}
	if err := s.st.DeleteCalendar(ctx, cal.ID); err != nil {
		return err
	}
	s.audit(ctx, a, cal.App, "calendar.delete", calendarObject(cal.ID), map[string]any{"name": cal.Name, "version": cal.Version})
	return nil
}

// calendarInUse is the ErrConflict of a calendar id that jobs use; nil
// when none does.
func (s *Service) calendarInUse(ctx context.Context, id int64) error {
	jobs, err := s.st.JobsOfCalendar(ctx, id)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		return nil
	}
	names := ""
	for i, j := range jobs {
		if i == 5 {
			names += ", …"
			break
		}
		if i > 0 {
			names += ", "
		}
		names += j.App + "/" + j.Name + " (" + strconv.FormatInt(j.ID, 10) + ")"
	}
	return refuse(ErrConflict, fmt.Sprintf("calendar %d is used by %d job(s): %s; set another calendar on them (or none) first", id, len(jobs), names), nil)
}

// replanCalendarJobs sets the next firing of the jobs on calendar id after
// an edit of its days: a firing the edit moved earlier (shift previous onto
// a new working day) or removed is planned from now on the new days. Runs
// that exist stay as they are, and a firing already due is left to the
// leader, which decides it on the new days. A job the leader moved
// meanwhile is read again (the update is guarded by the value read).
func (s *Service) replanCalendarJobs(ctx context.Context, id int64) {
	jobs, err := s.st.JobsOfCalendar(ctx, id)
	if err != nil {
		s.log.Warn("cannot read the jobs of an edited calendar to plan them again; the leader plans them at their next firing", "calendar_id", id, "err", err)
		return
	}
	now := s.cfg.Clock.Now()
	for _, j := range jobs {
		for try := 0; try < 3 && j.Enabled && !j.Paused && j.NextFireAt.Valid && j.NextFireAt.Int64 > now.UnixMilli(); try++ {
			next, err := s.NextFire(ctx, j, now)
			if err != nil {
				s.log.Warn("cannot plan a job on its edited calendar", "job_id", j.ID, "calendar_id", id, "err", err)
				break
			}
			if next == j.NextFireAt {
				break
			}
			ok, err := s.st.ReplanJob(ctx, j.ID, j.NextFireAt, next)
			if err != nil || ok {
				break
			}
			if j, err = s.st.Job(ctx, j.ID); err != nil {
				break
			}
		}
	}
	s.wake()
}
