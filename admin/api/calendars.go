package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/names"
)

// calendarRoutes registers the business calendars: everyone who may read
// sees the global calendars and those of their apps; operators manage their
// apps' calendars, admins the global ones (app "").
func (s *Server) calendarRoutes(view, op gin.IRoutes) {
	view.GET("/calendars", s.listCalendars)
	view.GET("/calendars/:id", s.getCalendar)
	view.GET("/calendars/:id/export", s.exportCalendar)
	op.POST("/calendars", s.createCalendar)
	op.PUT("/calendars/:id", s.updateCalendar)
	op.DELETE("/calendars/:id", s.deleteCalendar)
}

func calendarView(c store.Calendar) (apitypes.Calendar, error) {
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

// calendarRow validates spec into the row to store, or answers 400 with
// the fields in error (false).
func calendarRow(c *gin.Context, spec apitypes.CalendarSpec) (store.Calendar, bool) {
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
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid calendar", Fields: fields})
		return store.Calendar{}, false
	}
	cal, err := calendar.New(def)
	if err != nil { // Validate passed: cannot happen, but never a 500 for input
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid calendar: " + err.Error(), Fields: map[string]msg.Msg{"days": msg.Of(err)}})
		return store.Calendar{}, false
	}
	row := store.Calendar{App: spec.App, Name: spec.Name, Description: spec.Description, Week: week.String(),
		Days: string(cal.ExportCSV()), Version: cal.Version(), UpdatedBy: currentUser(c).Username}
	for _, e := range def.Entries {
		if e.Kind == calendar.KindHoliday {
			row.Holidays++
		} else {
			row.Workdays++
		}
	}
	return row, true
}

// mayManageCalendar says whether the user may change calendars of app (a
// global one: admins only), answering 403 otherwise.
func mayManageCalendar(c *gin.Context, app string) bool {
	u := currentUser(c)
	switch {
	case app == "" && !auth.Allows(u.Role, auth.RoleAdmin):
		c.AbortWithStatusJSON(http.StatusForbidden, errorBody{Error: "only admins manage global calendars",
			Fields: map[string]msg.Msg{"app": msg.New(msg.CalGlobalAdminOnly)}})
		return false
	case app != "" && !u.AppAllowed(app):
		c.AbortWithStatusJSON(http.StatusForbidden, errorBody{Error: "you may not manage calendars of app " + app,
			Fields: map[string]msg.Msg{"app": msg.New(msg.NotYourApp, "apps", u.Apps)}})
		return false
	}
	return true
}

func (s *Server) listCalendars(c *gin.Context) {
	cals, err := s.st.CalendarsOfApps(c.Request.Context(), currentUser(c).AppList())
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.Calendar, 0, len(cals))
	for _, cal := range cals {
		v, _ := calendarView(cal) // no days in lists: cannot fail
		out = append(out, v)
	}
	c.JSON(http.StatusOK, gin.H{"calendars": out})
}

// loadCalendar reads the calendar of the id parameter; one of an app the
// user may not see does not exist for them.
func (s *Server) loadCalendar(c *gin.Context) (store.Calendar, bool) {
	id, ok := idParam(c)
	if !ok {
		return store.Calendar{}, false
	}
	cal, err := s.st.Calendar(c.Request.Context(), id)
	return cal, s.visible(c, "calendar", err, err == nil && (cal.App == "" || currentUser(c).AppAllowed(cal.App)))
}

func (s *Server) getCalendar(c *gin.Context) {
	cal, ok := s.loadCalendar(c)
	if !ok {
		return
	}
	v, err := calendarView(cal)
	if err != nil {
		s.internal(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// exportCalendar answers the days as CSV (date,kind,name), the format the
// import reads back.
func (s *Server) exportCalendar(c *gin.Context) {
	cal, ok := s.loadCalendar(c)
	if !ok {
		return
	}
	if f := c.Query("format"); f != "" && f != "csv" {
		fail(c, http.StatusBadRequest, "format "+strconv.Quote(f)+": only csv is exported")
		return
	}
	c.Header("Content-Disposition", `attachment; filename="`+cal.Name+`.csv"`)
	c.Data(http.StatusOK, "text/csv; charset=utf-8", []byte(cal.Days))
}

func (s *Server) createCalendar(c *gin.Context) {
	var spec apitypes.CalendarSpec
	if !decode(c, &spec) {
		return
	}
	row, ok := calendarRow(c, spec) // first: what is wrong with the input says nothing of others' data
	if !ok || !mayManageCalendar(c, spec.App) {
		return
	}
	id, err := s.st.CreateCalendar(c.Request.Context(), row)
	if errors.Is(err, store.ErrConflict) {
		c.AbortWithStatusJSON(http.StatusConflict, errorBody{Error: err.Error(), Fields: map[string]msg.Msg{"name": msg.New(msg.CalNameTaken)}})
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	s.answerCalendar(c, id, http.StatusCreated, "calendar.create", nil)
}

// answerCalendar reads calendar id back, audits action with its summary
// (and before, when set) and answers it with code.
func (s *Server) answerCalendar(c *gin.Context, id int64, code int, action string, before *apitypes.Calendar) {
	cal, err := s.st.Calendar(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return
	}
	v, err := calendarView(cal)
	if err != nil {
		s.internal(c, err)
		return
	}
	answerSaved(s, c, cal.App, action, "calendar/"+strconv.FormatInt(id, 10), code, v, before, calendarSummary)
}

// calendarSummary is v without its days (audit entries).
func calendarSummary(v apitypes.Calendar) apitypes.Calendar {
	v.Days = nil
	return v
}

// answerSaved ends a create (before nil) or an update of an object: it
// audits action on object with the summary of the saved view v (and the
// summary before, for an update) and answers v with code.
func answerSaved[V any](s *Server, c *gin.Context, app, action, object string, code int, v V, before *V, summarize func(V) V) {
	detail := any(summarize(v))
	if before != nil {
		detail = map[string]any{"before": before, "after": summarize(v)}
	}
	s.audit(c, app, action, object, detail)
	c.JSON(code, v)
}

func (s *Server) updateCalendar(c *gin.Context) {
	old, ok := s.loadCalendar(c)
	if !ok {
		return
	}
	var spec apitypes.CalendarSpec
	if !decode(c, &spec) {
		return
	}
	if spec.Name == "" {
		spec.Name = old.Name
	}
	if spec.App != old.App || spec.Name != old.Name {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "app and name identify a calendar and cannot change",
			Fields: map[string]msg.Msg{"name": msg.New(msg.MustStay, "value", old.Name), "app": msg.New(msg.MustStay, "value", strconv.Quote(old.App))}})
		return
	}
	if !mayManageCalendar(c, old.App) {
		return
	}
	if spec.Revision <= 0 {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "revision is required",
			Fields: map[string]msg.Msg{"revision": msg.New(msg.CalRevisionRequired, "revision", old.Revision)}})
		return
	}
	row, ok := calendarRow(c, spec)
	if !ok {
		return
	}
	row.ID, row.Revision = old.ID, spec.Revision
	err := s.st.UpdateCalendar(c.Request.Context(), row)
	if errors.Is(err, store.ErrConflict) {
		fail(c, http.StatusConflict, err.Error())
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	if row.Version != old.Version {
		s.replanCalendarJobs(c.Request.Context(), old.ID)
	}
	before, _ := calendarView(store.Calendar{ID: old.ID, App: old.App, Name: old.Name, Description: old.Description, Week: old.Week,
		Holidays: old.Holidays, Workdays: old.Workdays, Version: old.Version, Revision: old.Revision, CreatedAt: old.CreatedAt, UpdatedAt: old.UpdatedAt, UpdatedBy: old.UpdatedBy})
	s.answerCalendar(c, old.ID, http.StatusOK, "calendar.update", &before)
}

func (s *Server) deleteCalendar(c *gin.Context) {
	cal, ok := s.loadCalendar(c)
	if !ok || !mayManageCalendar(c, cal.App) || s.refuseCalendarInUse(c, cal.ID) {
		return
	}
	if err := s.st.DeleteCalendar(c.Request.Context(), cal.ID); err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, cal.App, "calendar.delete", "calendar/"+strconv.FormatInt(cal.ID, 10), map[string]any{"name": cal.Name, "version": cal.Version})
	c.JSON(http.StatusOK, gin.H{"deleted": cal.ID})
}
