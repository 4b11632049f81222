package scheduler

import (
	"context"
	"database/sql"
	"time"

	"github.com/shardjob/shardjob/admin/calendar"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// Jobs on a business calendar (docs/schedules.md, "A job on a business
// calendar") fire through schedule.CalendarSchedule: their next_fire_at is
// the next instant the leader has something to write (jobdef.NextEvent), a
// firing or a candidate the calendar removes, which is recorded as a
// skipped run keyed by its scheduled time with the reason as a message
// code. A shifted firing is a pending run keyed by the moved instant that
// keeps the cron's instant in shifted_from. Each run keeps the calendar's
// id and version. Jobs without a calendar do not come here.

// cachedCalendar is a calendar as the leader last read it.
type cachedCalendar struct {
	version string
	cal     *calendar.Calendar
}

// cachedCalSchedule is a job's schedule on its calendar, valid while the
// job's version and the calendar's version are those.
type cachedCalSchedule struct {
	jobVersion int64
	calVersion string
	cs         *schedule.CalendarSchedule
}

// calendarsOf returns the calendars of the jobs on one (by id): one query
// reads their versions, and a calendar's days are read again only when its
// version is not the cached one. A calendar that no longer exists is
// missing from the map.
func (s *Scheduler) calendarsOf(ctx context.Context, tx *store.Tx, jobs []store.Job) (map[int64]cachedCalendar, error) {
	var ids []int64
	seen := map[int64]bool{}
	for _, j := range jobs {
		if j.HasCalendar() && !seen[j.CalendarID] {
			seen[j.CalendarID] = true
			ids = append(ids, j.CalendarID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	versions, err := tx.CalendarVersions(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]cachedCalendar, len(versions))
	for id, v := range versions {
		s.mu.Lock()
		c, ok := s.cals[id]
		s.mu.Unlock()
		if !ok || c.version != v {
			row, err := tx.Calendar(ctx, id)
			if err != nil {
				return nil, err
			}
			cal, err := row.Build()
			if err != nil {
				s.log.Error("stored calendar does not load; its jobs do not fire", "calendar_id", id, "err", err)
				continue
			}
			c = cachedCalendar{version: row.Version, cal: cal}
			s.mu.Lock()
			s.cals[id] = c
			s.mu.Unlock()
		}
		out[id] = c
	}
	return out, nil
}

// calendarScheduleOf returns job j's schedule on its calendar c.
func (s *Scheduler) calendarScheduleOf(j store.Job, c cachedCalendar) (*schedule.CalendarSchedule, error) {
	cached, ok := s.calScheds.Get(j.ID)
	if ok && cached.jobVersion == j.Version && cached.calVersion == c.version {
		return cached.cs, nil
	}
	sc, err := s.scheduleOf(j)
	if err != nil {
		return nil, err
	}
	cs, err := schedule.WithCalendar(sc.Primary(), c.cal, jobrules.CalendarPolicy(j.JobCalendar))
	if err != nil {
		return nil, err
	}
	s.calScheds.Add(j.ID, cachedCalSchedule{jobVersion: j.Version, calVersion: c.version, cs: cs})
	return cs, nil
}

// calendarOutcome is what the leader writes for one due job on a calendar.
type calendarOutcome struct {
	runs           []store.NewRun
	next           sql.NullInt64
	fired, skipped int64
	unlisted       int  // removed or late firings counted but not recorded one by one
	broken         bool // the calendar is gone or the schedule does not build on it: the job stops firing (not completed)
}

// planCalendarJob decides due job j on its calendar schedule cs (calendar
// version version): due is its next_fire_at, now the instant planned for
// (later of the clock and due, as for other jobs), busy whether a run of
// the job is active (overlap policy).
//
// The due firings are the calendar's from due on (the first one,
// cs.Next(due-1ms), may come after due when due is a removed candidate or
// the calendar changed since due was planned), planned by
// schedule.PlanCalendar with the job's misfire policy. Every candidate the
// calendar removed up to now is recorded as a skipped run keyed by its
// scheduled time; those removed later wait for their own time (next is
// the earliest of them and the next firing).
func planCalendarJob(j store.Job, cs *schedule.CalendarSchedule, version string, due, now time.Time, busy bool) calendarOutcome {
	var out calendarOutcome
	first, err := cs.Next(due.Add(-time.Millisecond))
	if err != nil {
		return out // nothing fires within about five years: next NULL
	}
	p := schedule.PlanCalendar(cs, first.At, now, schedule.MisfireConfig{
		Policy:     schedule.MisfirePolicy(j.MisfirePolicy),
		Threshold:  time.Duration(j.MisfireMS) * time.Millisecond,
		MaxCatchUp: j.MaxCatchUp,
	})
	name, bd := cs.Calendar().Name(), cs.Schedule().BusinessDay()
	withCalendar := func(r store.NewRun) store.NewRun {
		r.CalendarID, r.CalendarVersion = j.CalendarID, version
		return r
	}

	// Removed candidates from due up to now, each once (the lists overlap
	// when a firing's look-back reaches candidates another list has; those
	// before due were recorded when they were due).
	recorded := map[int64]bool{}
	removed := func(ds []calendar.Decision, more int) {
		out.unlisted += more
		for _, d := range ds {
			at := d.Scheduled.UnixMilli()
			// A duplicate of a firing that is due is decided with it: with
			// shift previous its own time comes after the firing's.
			decided := !d.Scheduled.After(now) || d.Reason == calendar.ReasonDuplicate && !d.At.After(now)
			if d.Scheduled.Before(due) || !decided || recorded[at] {
				continue
			}
			recorded[at] = true
			r := withCalendar(jobrules.NewRun(j, at, store.TriggerCron, store.RunSkipped))
			r.Reason = jobrules.CalendarSkipReason(d, name, bd)
			out.runs = append(out.runs, r)
			out.skipped++
		}
	}
	removed(first.Skipped, first.SkippedCount-len(first.Skipped))
	removed(p.CalendarSkipped, p.CalendarSkippedCount-len(p.CalendarSkipped))
	removed(p.NextFiring.Skipped, 0)

	kind := store.TriggerCron
	if p.Misfired && j.MisfirePolicy == string(schedule.MisfireCatchUp) {
		kind = store.TriggerCatchUp
	}
	for _, at := range p.Fire {
		r := withCalendar(jobrules.NewRun(j, at.UnixMilli(), kind, store.RunPending))
		d := first.Decision
		if !at.Equal(first.At) {
			if f, err := cs.Next(at.Add(-time.Millisecond)); err == nil {
				d = f.Decision
			}
		}
		if d.Shifted {
			r.ShiftedFrom = d.Scheduled.UnixMilli()
		}
		switch schedule.DecideOverlap(schedule.OverlapPolicy(j.OverlapPolicy), busy) {
		case schedule.ActionSkip:
			r.Status, r.Reason = store.RunSkipped, msg.New(msg.RunSkippedOverlap)
			out.skipped++
		default:
			out.fired++
		}
		busy = busy || r.Status == store.RunPending
		out.runs = append(out.runs, r)
	}
	for _, at := range p.Skipped {
		r := withCalendar(jobrules.NewRun(j, at.UnixMilli(), kind, store.RunSkipped))
		r.Reason = msg.New(msg.RunSkippedMisfire, "policy", j.MisfirePolicy, "threshold_ms", j.MisfireMS)
		out.runs = append(out.runs, r)
		out.skipped++
	}
	out.unlisted += p.SkippedCount - len(p.Skipped)

	if !p.NextFiring.At.IsZero() {
		next := p.NextFiring.At
		for _, d := range p.NextFiring.Skipped {
			if d.Scheduled.After(now) {
				if d.Scheduled.Before(next) {
					next = d.Scheduled
				}
				break
			}
		}
		out.next = sql.NullInt64{Int64: next.UnixMilli(), Valid: true}
	}
	return out
}

// fireCalendarJob is planCalendarJob for a claimed job, with its calendar
// from cals; a job whose calendar is gone or whose schedule no longer
// builds stops firing (next NULL), with an error in the log.
func (s *Scheduler) fireCalendarJob(j store.Job, cals map[int64]cachedCalendar, due, now time.Time, busy bool) calendarOutcome {
	c, ok := cals[j.CalendarID]
	if !ok {
		s.log.Error("job's calendar does not exist; disabling its firing", "job_id", j.ID, "job", j.App+"/"+j.Name, "calendar_id", j.CalendarID)
		return calendarOutcome{broken: true}
	}
	cs, err := s.calendarScheduleOf(j, c)
	if err != nil {
		s.log.Error("job schedule is invalid on its calendar; disabling its firing", "job_id", j.ID, "job", j.App+"/"+j.Name, "err", err)
		return calendarOutcome{broken: true}
	}
	out := planCalendarJob(j, cs, c.version, due, now, busy)
	if out.unlisted > 0 {
		s.log.Warn("calendar job: more skipped firings than are recorded one by one", "job_id", j.ID, "unrecorded", out.unlisted)
	}
	return out
}

// PlanCalendar is planCalendarJob for a caller that fires something other
// than a job's runs on a business calendar the way jobs do (a workflow's
// schedule, admin/workflowrun): j carries the schedule's app, name, zone
// and misfire policy, cs the schedule on its calendar, due the
// next_fire_at reached. It returns the runs to record — the firings
// (pending, keyed by their possibly shifted instant, ShiftedFrom the
// cron's), the misfired ones and the candidates the calendar removed
// (skipped, with the reason) — and the next instant to come back.
func PlanCalendar(j store.Job, cs *schedule.CalendarSchedule, due, now time.Time) ([]store.NewRun, sql.NullInt64) {
	out := planCalendarJob(j, cs, "", due, now, false)
	return out.runs, out.next
}
