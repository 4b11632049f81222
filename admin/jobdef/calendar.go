package jobdef

import (
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// placeholder is an empty calendar (Mon-Fri, no special day): Validate
// checks a job's calendar rule against its schedule with it, as the
// calendar's days do not change what WithCalendar accepts. The API then
// builds the job's schedule on the real calendar (WithCalendar).
var placeholder = func() *calendar.Calendar {
	c, err := calendar.New(calendar.Definition{Name: "placeholder"})
	if err != nil {
		panic(err)
	}
	return c
}()

// validateCalendar checks a job's calendar fields into errs: calendar_id 0
// (none) or an id, calendar_rule required with a calendar and only with
// one, calendar_shift only with the rule shift, and the rule against the
// schedule sched (nil when the cron is invalid): a business day (BD3) needs
// a calendar, shift is for schedules that fire at most
// schedule.MaxShiftPerDay times a day. Whether the calendar exists and the
// job's app may use it is the caller's check (it needs the database).
func validateCalendar(s apitypes.JobDef, sched *schedule.Schedule, errs FieldMsgs) {
	p := calendar.Policy{Rule: calendar.Rule(s.CalendarRule), Shift: calendar.Direction(s.CalendarShift)}
	n := len(errs)
	switch {
	case s.CalendarID < 0:
		errs["calendar_id"] = msg.New(msg.JobCalendarID)
	case s.CalendarID == 0 && s.CalendarRule != "":
		errs["calendar_rule"] = msg.New(msg.JobCalendarRuleAlone, "rule", strconv.Quote(s.CalendarRule))
	case s.CalendarID == 0 && s.CalendarShift != "":
		errs["calendar_shift"] = msg.New(msg.JobCalendarShiftAlone)
	case s.CalendarID > 0 && s.CalendarRule == "":
		errs["calendar_rule"] = msg.New(msg.JobCalendarRuleNeeded)
	}
	if len(errs) > n {
		return
	}
	if err := p.Validate(); err != nil {
		var ve *calendar.ValidationError
		switch {
		case !errors.As(err, &ve):
			errs["calendar_rule"] = msg.Of(err)
		case ve.Field == "shift" && p.Rule != calendar.RuleShift:
			errs["calendar_shift"] = msg.New(msg.JobCalendarShiftRule, "rule", strconv.Quote(string(p.Rule)))
		case ve.Field == "shift":
			errs["calendar_shift"] = reasonOf(ve)
		default:
			errs["calendar_rule"] = reasonOf(ve)
		}
		return
	}
	if sched == nil {
		return
	}
	if s.CalendarID == 0 {
		if sched.NeedsCalendar() {
			errs["cron"] = msg.New(msg.JobBusinessDay, "bd", sched.BusinessDay())
		}
		return
	}
	if _, err := schedule.WithCalendar(sched, placeholder, p); err != nil {
		errs[calendarField(err)] = ScheduleReason(err)
	}
}

// calendarField names the job field a schedule.WithCalendar error is about.
func calendarField(err error) string {
	var ve *schedule.ValidationError
	if errors.As(err, &ve) {
		switch ve.Name {
		case "calendar rule":
			return "calendar_rule"
		case "calendar shift":
			return "calendar_shift"
		}
	}
	return "cron"
}

// ScheduleReason is a schedule error without its field prefix ("time
// zone: …" says the zone twice under a field named time_zone).
func ScheduleReason(err error) msg.Msg {
	var ve *schedule.ValidationError
	if errors.As(err, &ve) && ve.Field == 0 && !ve.Reason.IsZero() {
		return ve.Reason
	}
	return msg.Of(err)
}

// reasonOf is a calendar error without its field prefix.
func reasonOf(ve *calendar.ValidationError) msg.Msg {
	if ve.Reason.IsZero() {
		return msg.New(msg.Text, "text", ve.Msg)
	}
	return ve.Reason
}

// WithCalendar returns the schedule of v's job on cal, its calendar (the
// one calendar_id names, as stored now), and sets v.Job.NextFireAt from
// now (NextEvent) when the job is enabled. A rule the calendar cannot take
// is FieldErrors.
func WithCalendar(v Validated, cal *calendar.Calendar, now time.Time) (Validated, *schedule.CalendarSchedule, error) {
	cs, err := schedule.WithCalendar(v.Schedule, cal, jobrules.CalendarPolicy(v.Job.JobCalendar))
	if err != nil {
		return v, nil, FieldMsgs{calendarField(err): ScheduleReason(err)}
	}
	if v.Job.Enabled {
		planWindow(&v.Job, NextEvent(cs, FiringsFrom(v.Job.JobWindow, now)), now)
	}
	return v, cs, nil
}

// CalendarScheduleOf returns the schedule of stored job j on its calendar
// cal.
func CalendarScheduleOf(j store.Job, cal *calendar.Calendar) (*schedule.CalendarSchedule, error) {
	sc, err := jobrules.ScheduleOf(j)
	if err != nil {
		return nil, err
	}
	return schedule.WithCalendar(sc.Primary(), cal, jobrules.CalendarPolicy(j.JobCalendar))
}

// NextEvent is the next_fire_at of a job on a calendar: the first instant
// strictly after now at which the leader has something to write, a firing
// (CalendarFiring.At) or a candidate the calendar removes (recorded as a
// skipped run at its scheduled time), whichever comes first. NULL when
// nothing fires within about five years.
func NextEvent(cs *schedule.CalendarSchedule, now time.Time) sql.NullInt64 {
	f, err := cs.Next(now)
	if err != nil {
		return sql.NullInt64{}
	}
	at := f.At
	for _, d := range f.Skipped {
		if d.Scheduled.After(now) {
			if d.Scheduled.Before(at) {
				at = d.Scheduled
			}
			break // oldest first
		}
	}
	return sql.NullInt64{Int64: at.UnixMilli(), Valid: true}
}

// ShiftNote is the preview's note of a firing the rule shift moved (d.Shifted).
func ShiftNote(d calendar.Decision, calName string) msg.Msg {
	from, to, date := d.Scheduled.Format("2006-01-02 15:04 MST"), d.At.Format("2006-01-02 15:04 MST"), d.Date.String()
	if d.Reason == calendar.ReasonHoliday {
		if d.Holiday != "" {
			return msg.New(msg.CalShiftedHolidayName, "from", from, "to", to, "date", date, "holiday", d.Holiday, "calendar", calName)
		}
		return msg.New(msg.CalShiftedHoliday, "from", from, "to", to, "date", date, "calendar", calName)
	}
	return msg.New(msg.CalShiftedNonWorking, "from", from, "to", to, "date", date, "weekday", d.Date.Weekday().String()[:3], "calendar", calName)
}

// CheckCalendar checks the calendar rule and shift of a schedule sched
// (nil when its cron is invalid or absent) on a calendar (hasCalendar) or
// none, with a job's rules (validateCalendar): what a workflow's schedule
// uses. The keys are a job's: calendar_rule, calendar_shift, cron.
func CheckCalendar(hasCalendar bool, rule, shift string, sched *schedule.Schedule) FieldMsgs {
	s := apitypes.JobDef{CalendarRule: rule, CalendarShift: shift}
	if hasCalendar {
		s.CalendarID = 1 // any calendar: the rule does not depend on its days
	}
	errs := FieldMsgs{}
	validateCalendar(s, sched, errs)
	return errs
}
