// Package backfill holds the pure logic of backfills (issue 22): the runs
// of a job or a workflow for each business date of a range. It checks a
// request's range and parallelism and orders its dates (Dates, used by both
// kinds), and plans a plain job's backfill (PlanJob): which instant is the
// run of each date (the job's first firing of that day, or midnight) and
// what the backfill does with it. No I/O: the callers read the runs found
// and write the runs created (docs/workflows.md, "Backfill" and "Backfill
// of a plain job").
package backfill

import (
	"time"

	"github.com/shardjob/shardjob/admin/msg"
)

// Bounds of a backfill.
const (
	// MaxDates is the most business dates one backfill covers.
	MaxDates = 366
	// MaxParallel is the most runs of one backfill that run at once.
	MaxParallel = 20
)

// What a backfill does with one business date.
const (
	Create    = "create"    // no run of the date's key: created
	Exists    = "exists"    // the date's run (its key) exists: kept as it is
	Succeeded = "succeeded" // only missing dates: a run of the date succeeded, none created
)

// Request asks for the runs of every business date in [From, To]
// (YYYY-MM-DD, in the zone of the job or workflow), oldest first (or
// NewestFirst), at most Parallel at a time, only where no run of the date
// succeeded (OnlyMissing).
type Request struct {
	From, To    string
	NewestFirst bool
	Parallel    int
	OnlyMissing bool
}

// Dates checks req and returns its dates (YYYY-MM-DD) in the order their
// runs start: oldest first, or newest first. The errors name the request's
// fields (from, to, parallel) as message codes: a date that is not
// YYYY-MM-DD, to before from, more than MaxDates dates, a parallelism
// outside 1..MaxParallel.
func Dates(req Request) ([]string, map[string]msg.Msg) {
	fields := map[string]msg.Msg{}
	from, ferr := time.Parse(time.DateOnly, req.From)
	if ferr != nil || from.Format(time.DateOnly) != req.From {
		fields["from"] = msg.New(msg.BackfillDate, "value", req.From)
	}
	to, terr := time.Parse(time.DateOnly, req.To)
	if terr != nil || to.Format(time.DateOnly) != req.To {
		fields["to"] = msg.New(msg.BackfillDate, "value", req.To)
	}
	if req.Parallel < 1 || req.Parallel > MaxParallel {
		fields["parallel"] = msg.New(msg.ValueBetween, "min", 1, "max", MaxParallel)
	}
	if fields["from"].IsZero() && fields["to"].IsZero() {
		switch days := int(to.Sub(from).Hours()/24) + 1; {
		case days < 1:
			fields["to"] = msg.New(msg.BackfillBackwards, "from", req.From, "to", req.To)
		case days > MaxDates:
			fields["to"] = msg.New(msg.BackfillTooLong, "days", days, "max", MaxDates)
		}
	}
	if len(fields) > 0 {
		return nil, fields
	}
	var out []string
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	if req.NewestFirst {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// Next is a schedule's first firing strictly after an instant, the zero
// Time for none (a job's schedule, on its business calendar if it has
// one).
type Next func(after time.Time) time.Time

// DayStart is the start of date (YYYY-MM-DD) in loc: its midnight, or the
// first instant of the day where a DST change skips midnight.
func DayStart(date string, loc *time.Location) (time.Time, error) {
	return time.ParseInLocation(time.DateOnly, date, loc)
}

// ScheduledAt is the instant of the run of date (YYYY-MM-DD) of a job whose
// zone is loc and whose schedule is next: its first firing on that day, or
// the start of the day when the schedule has none that day (or next is
// nil: no schedule). A date that already has its scheduled run therefore
// finds it by the run key (job, scheduled_at).
func ScheduledAt(date string, loc *time.Location, next Next) (time.Time, error) {
	day, err := DayStart(date, loc)
	if err != nil {
		return time.Time{}, err
	}
	if next == nil {
		return day, nil
	}
	end := day.AddDate(0, 0, 1)
	f := next(day.Add(-time.Second))
	for !f.IsZero() && f.Before(day) {
		f = next(f)
	}
	if !f.IsZero() && f.Before(end) {
		return f, nil
	}
	return day, nil
}

// JobRun is a run of the job found in the range: its id, instant (Unix
// ms), status, and the business date of a run a workflow node created
// (WorkflowDate; "" for the job's own runs, whose business date is their
// scheduled day in the job's zone).
type JobRun struct {
	ID           int64
	ScheduledAt  int64
	Status       string
	WorkflowDate string
}

// JobDate is what a job backfill does with one date: Action, the run's
// instant (ScheduledAt, the run key with the job), and the run found
// (RunID of an existing or succeeded run).
type JobDate struct {
	Date        string
	Action      string
	ScheduledAt time.Time
	RunID       int64
}

// succeededRun is the run whose success marks a date done for OnlyMissing.
const succeededRun = "succeeded"

// PlanJob checks req and says what a backfill of a job does with each
// date, in the order the runs start. loc is the job's zone, next its
// schedule (nil: none), runs the job's runs of the range (the job's own,
// scheduled from the start of From to the end of To in loc, and those
// workflow nodes created for dates of the range). A date's run is the one
// at ScheduledAt: kept when it exists (Exists). With OnlyMissing a date
// with a succeeded run (its scheduled day in loc, or its workflow run's
// business date, as a job's waits see it) is passed over (Succeeded).
func PlanJob(req Request, loc *time.Location, next Next, runs []JobRun) ([]JobDate, map[string]msg.Msg) {
	dates, fields := Dates(req)
	if fields != nil {
		return nil, fields
	}
	byAt := map[int64]int64{}
	succeeded := map[string]int64{}
	for _, r := range runs {
		date := r.WorkflowDate
		if date == "" {
			byAt[r.ScheduledAt] = r.ID
			date = time.UnixMilli(r.ScheduledAt).In(loc).Format(time.DateOnly)
		}
		if _, seen := succeeded[date]; !seen && r.Status == succeededRun {
			succeeded[date] = r.ID
		}
	}
	out := make([]JobDate, 0, len(dates))
	for _, date := range dates {
		at, err := ScheduledAt(date, loc, next)
		if err != nil { // checked by Dates
			return nil, map[string]msg.Msg{"from": msg.New(msg.BackfillDate, "value", date)}
		}
		d := JobDate{Date: date, Action: Create, ScheduledAt: at}
		if id, ok := succeeded[date]; ok && req.OnlyMissing {
			d.Action, d.RunID = Succeeded, id
		} else if id, ok := byAt[at.UnixMilli()]; ok {
			d.Action, d.RunID = Exists, id
		}
		out = append(out, d)
	}
	return out, nil
}
