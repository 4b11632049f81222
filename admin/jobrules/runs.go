package jobrules

import (
	"database/sql"
	"time"

	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
)

// NewRun returns a run of job j scheduled at at (Unix ms), with the job's
// params, slot count, time zone, records policy and deadlines (a skipped
// run has none). A scheduled run (cron or catch-up) of a job with a jitter
// window starts after its scheduled time plus the firing's offset
// (schedule.JitterOffset), and its duration deadlines count from then.
func NewRun(j store.Job, at int64, kind, status string) store.NewRun {
	r := store.NewRun{
		JobID: j.ID, App: j.App, JobName: j.Name, ScheduledAt: at, TriggerKind: kind, Status: status, Params: j.Params, SlotCount: j.SlotCount,
		TimeZone: j.TimeZone, RecordsPolicy: j.RecordsPolicy,
	}
	if status == store.RunSkipped {
		return r
	}
	start := at
	if kind == store.TriggerCron || kind == store.TriggerCatchUp {
		if w, err := schedule.ParseJitterWindow(j.JitterWindow); err == nil && w > 0 {
			r.StartAfter = at + schedule.JitterOffset(j.App+"/"+j.Name, time.UnixMilli(at), w).Milliseconds()
			start = r.StartAfter
		}
	}
	r.Deadlines = RunDeadlinesStartingAt(j.JobDeadlines, j.TimeZone, at, start)
	return r
}

// RunDeadlines returns the deadlines d of a job as the instants of its run
// scheduled at atMS (Unix ms) in time zone zone. Deadlines that do not
// parse (the job was validated when saved) and a zone that does not load
// (read as UTC) give what they can.
func RunDeadlines(d store.JobDeadlines, zone string, atMS int64) store.RunDeadlines {
	return RunDeadlinesStartingAt(d, zone, atMS, atMS)
}

// RunDeadlinesStartingAt is RunDeadlines for a run that may not start
// before startMS (a jittered run: Run.StartAfter): a deadline stated as a
// duration counts from startMS, so that the jitter never makes a run late;
// a finish deadline stated as a local time is the first after the
// scheduled time.
func RunDeadlinesStartingAt(d store.JobDeadlines, zone string, atMS, startMS int64) store.RunDeadlines {
	loc, err := schedule.ValidateZone(zone)
	if err != nil {
		loc = time.UTC
	}
	at, start := time.UnixMilli(atMS), time.UnixMilli(startMS)
	var startDL, finishMS int64
	if sd, err := schedule.ParseStartDeadline(d.StartDeadline); err == nil && !sd.IsZero() {
		startDL = sd.At(start, loc).UnixMilli()
	}
	if fd, err := schedule.ParseFinishDeadline(d.FinishDeadline); err == nil && !fd.IsZero() {
		from := start
		if fd.Clock {
			from = at
		}
		finishMS = fd.At(from, loc).UnixMilli()
	}
	action := d.DeadlineAction
	if action == "" {
		action = store.DeadlineAlarm
	}
	return DeadlinesAt(startDL, finishMS, action)
}

// DeadlinesAt returns the deadlines of a run from its instants (0: none),
// with the first to check.
func DeadlinesAt(startAtMS, finishAtMS int64, action string) store.RunDeadlines {
	d := store.RunDeadlines{
		StartDeadlineAt:  sql.NullInt64{Int64: startAtMS, Valid: startAtMS != 0},
		FinishDeadlineAt: sql.NullInt64{Int64: finishAtMS, Valid: finishAtMS != 0},
		DeadlineAction:   action,
	}
	switch {
	case d.StartDeadlineAt.Valid && (!d.FinishDeadlineAt.Valid || startAtMS <= finishAtMS):
		d.DeadlineCheckAt = d.StartDeadlineAt
	case d.FinishDeadlineAt.Valid:
		d.DeadlineCheckAt = d.FinishDeadlineAt
	}
	if !d.DeadlineCheckAt.Valid {
		d.DeadlineAction = ""
	}
	return d
}
