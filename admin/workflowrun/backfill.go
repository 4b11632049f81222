package workflowrun

import (
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// Backfill bounds.
const (
	// MaxBackfillDates is the most business dates one backfill covers.
	MaxBackfillDates = 366
	// MaxBackfillParallel is the most runs of one backfill that run at once.
	MaxBackfillParallel = 20
)

// What a backfill does with one business date.
const (
	BackfillCreate    = "create"    // no run of the date's key: created
	BackfillExists    = "exists"    // the date's run (key date:YYYY-MM-DD) exists: kept as it is
	BackfillSucceeded = "succeeded" // only missing dates: a run of the date succeeded, none created
)

// BackfillRequest asks for the runs of every business date in [From, To]
// (YYYY-MM-DD, in the workflow's zone), oldest first (or NewestFirst), at
// most Parallel at a time (default 1), only where no run of the date
// succeeded (OnlyMissing).
type BackfillRequest struct {
	From, To    string
	NewestFirst bool
	Parallel    int
	OnlyMissing bool
}

// BackfillDate is what a backfill does with one date: Action, and the run
// it found (RunID of an existing or succeeded run).
type BackfillDate struct {
	Date   string
	Action string
	RunID  int64
}

// PlanBackfill checks req and says what a backfill does with each date, in
// the order the runs start, given the workflow's runs of those dates
// (store.RunsOfDates). Errors name the request's fields (from, to,
// parallel) as message codes.
func PlanBackfill(req BackfillRequest, existing []store.DateRun) ([]BackfillDate, map[string]msg.Msg) {
	fields := map[string]msg.Msg{}
	from, ferr := time.Parse(time.DateOnly, req.From)
	if ferr != nil || from.Format(time.DateOnly) != req.From {
		fields["from"] = msg.New(msg.BackfillDate, "value", req.From)
	}
	to, terr := time.Parse(time.DateOnly, req.To)
	if terr != nil || to.Format(time.DateOnly) != req.To {
		fields["to"] = msg.New(msg.BackfillDate, "value", req.To)
	}
	if req.Parallel < 1 || req.Parallel > MaxBackfillParallel {
		fields["parallel"] = msg.New(msg.ValueBetween, "min", 1, "max", MaxBackfillParallel)
	}
	if fields["from"].IsZero() && fields["to"].IsZero() {
		switch days := int(to.Sub(from).Hours()/24) + 1; {
		case days < 1:
			fields["to"] = msg.New(msg.BackfillBackwards, "from", req.From, "to", req.To)
		case days > MaxBackfillDates:
			fields["to"] = msg.New(msg.BackfillTooLong, "days", days, "max", MaxBackfillDates)
		}
	}
	if len(fields) > 0 {
		return nil, fields
	}
	byKey := map[string]int64{}
	succeeded := map[string]int64{}
	for _, r := range existing {
		byKey[r.RunKey] = r.ID
		if r.Status == store.RunSucceeded {
			succeeded[r.BusinessDate] = r.ID
		}
	}
	var out []BackfillDate
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		date := d.Format(time.DateOnly)
		bd := BackfillDate{Date: date, Action: BackfillCreate}
		if id, ok := succeeded[date]; ok && req.OnlyMissing {
			bd.Action, bd.RunID = BackfillSucceeded, id
		} else if id, ok := byKey[store.WorkflowRunKeyDate(date)]; ok {
			bd.Action, bd.RunID = BackfillExists, id
		}
		out = append(out, bd)
	}
	if req.NewestFirst {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// BackfillRuns are the runs a backfill of workflow w creates for plan (its
// dates to create, in order), each scheduled at the start of its business
// date in loc, the workflow's zone.
func BackfillRuns(w store.Workflow, plan []BackfillDate, loc *time.Location, params, createdBy string) []store.NewWorkflowRun {
	var out []store.NewWorkflowRun
	for _, d := range plan {
		if d.Action != BackfillCreate {
			continue
		}
		day, _ := time.ParseInLocation(time.DateOnly, d.Date, loc) // checked by PlanBackfill
		out = append(out, store.NewWorkflowRun{WorkflowID: w.ID, App: w.App, RunKey: store.WorkflowRunKeyDate(d.Date),
			WorkflowVersion: w.Version, ScheduledAt: day.UnixMilli(), BusinessDate: d.Date, TriggerKind: store.TriggerBackfill,
			Status: store.RunPending, Params: params, CreatedBy: createdBy})
	}
	return out
}
