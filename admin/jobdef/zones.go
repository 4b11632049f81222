package jobdef

import (
	"errors"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
)

// validateZones checks the job's zone (time_zone), its zones (time_zones,
// docs/schedules.md "Several zones") and its cron expression in each of
// them into errs, and returns the schedule (nil when something is wrong).
// s has its defaults (time_zones is nil for one zone). With several zones
// time_zone is the first, there is no business calendar, and
// schedule.ParseZones takes the list: at most schedule.MaxZones distinct
// valid zones, no @every, @at or cron firing more than
// schedule.MaxZoneFiringsPerDay times a day.
func validateZones(s apitypes.JobDef, anchor time.Time, errs FieldMsgs) *schedule.MultiZone {
	_, zoneErr := schedule.ValidateZone(s.TimeZone)
	if zoneErr != nil {
		errs["time_zone"] = ScheduleReason(zoneErr) // the field names the zone already: no "time zone:" before it
	}
	if strings.TrimSpace(s.Cron) == "" {
		errs["cron"] = msg.New(msg.JobCronRequired)
		return nil
	}
	if zoneErr != nil {
		// The expression is checked on its own too, in UTC, so that one
		// answer names both mistakes.
		_, err := schedule.ParseZones(schedule.Spec{Expr: s.Cron, Zone: "UTC", JobKey: s.Key(), Anchor: anchor}, nil)
		if err != nil && !errors.Is(err, schedule.ErrNeedsCalendar) {
			errs["cron"] = msg.Of(err)
		}
		return nil
	}
	if len(s.TimeZones) > 0 {
		switch {
		case s.TimeZones[0] != s.TimeZone:
			errs["time_zone"] = msg.New(msg.ZonesFirst, "first", s.TimeZones[0])
			return nil
		case s.CalendarID != 0:
			errs["time_zones"] = msg.New(msg.ZonesCalendar)
			return nil
		}
	}
	m, err := schedule.ParseZones(schedule.Spec{Expr: s.Cron, Zone: s.TimeZone, JobKey: s.Key(), Anchor: anchor}, s.TimeZones)
	if err != nil {
		var ve *schedule.ValidationError
		if errors.As(err, &ve) && (ve.Name == "time zone" || ve.Name == "time zones") {
			errs["time_zones"] = ScheduleReason(err)
		} else {
			errs["cron"] = msg.Of(err)
		}
		return nil
	}
	return m
}
