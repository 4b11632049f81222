package jobrules

import (
	"time"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// ScheduleOf parses the schedule of a stored job in each of its zones
// (one for most jobs; Primary is the schedule in its time_zone).
func ScheduleOf(j store.Job) (*schedule.MultiZone, error) {
	return schedule.ParseZones(schedule.Spec{Expr: j.CronExpr, Zone: j.TimeZone, JobKey: j.App + "/" + j.Name, Anchor: time.UnixMilli(j.CreatedAt)}, j.Zones())
}

// CalendarPolicy returns the calendar rule of a job.
func CalendarPolicy(c store.JobCalendar) calendar.Policy {
	return calendar.Policy{Rule: calendar.Rule(c.CalendarRule), Shift: calendar.Direction(c.CalendarShift)}
}

// CalendarSkipReason is why the calendar named calName removed the
// candidate d (d.Fire false): the reason of its skipped run and of the
// preview's skipped entry. business is the expression's business day (BD3)
// for ReasonNoSuchBusinessDay.
func CalendarSkipReason(d calendar.Decision, calName string, business calendar.BusinessDay) msg.Msg {
	date := d.Date.String()
	switch d.Reason {
	case calendar.ReasonHoliday:
		if d.Holiday != "" {
			return msg.New(msg.RunSkippedHolidayName, "date", date, "holiday", d.Holiday, "calendar", calName)
		}
		return msg.New(msg.RunSkippedHoliday, "date", date, "calendar", calName)
	case calendar.ReasonDuplicate:
		return msg.New(msg.RunSkippedShiftDup, "at", d.At.Format("2006-01-02 15:04:05 MST"), "calendar", calName)
	case calendar.ReasonNoWorkday:
		return msg.New(msg.RunSkippedNoWorkday, "date", date, "calendar", calName)
	case calendar.ReasonNoSuchBusinessDay:
		return msg.New(msg.RunSkippedNoBizDay, "month", date[:7], "business_day", business.String(), "calendar", calName)
	}
	return msg.New(msg.RunSkippedNonWorking, "date", date, "weekday", d.Date.Weekday().String()[:3], "calendar", calName)
}
