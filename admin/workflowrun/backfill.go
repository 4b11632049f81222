package workflowrun

import (
	"time"

	"github.com/shardjob/shardjob/admin/backfill"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// Backfill bounds (package backfill, shared with the backfill of a plain
// job).
const (
	// MaxBackfillDates is the most business dates one backfill covers.
	MaxBackfillDates = backfill.MaxDates
	// MaxBackfillParallel is the most runs of one backfill that run at once.
	MaxBackfillParallel = backfill.MaxParallel
)

// What a backfill does with one business date.
const (
	BackfillCreate    = backfill.Create    // no run of the date's key: created
	BackfillExists    = backfill.Exists    // the date's run (key date:YYYY-MM-DD) exists: kept as it is
	BackfillSucceeded = backfill.Succeeded // only missing dates: a run of the date succeeded, none created
)

// BackfillRequest asks for the runs of every business date in [From, To]
// (YYYY-MM-DD, in the workflow's zone), oldest first (or NewestFirst), at
// most Parallel at a time (default 1), only where no run of the date
// succeeded (OnlyMissing).
type BackfillRequest = backfill.Request

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
// parallel) as message codes (backfill.Dates).
func PlanBackfill(req BackfillRequest, existing []store.DateRun) ([]BackfillDate, map[string]msg.Msg) {
	dates, fields := backfill.Dates(req)
	if fields != nil {
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
	out := make([]BackfillDate, 0, len(dates))
	for _, date := range dates {
		bd := BackfillDate{Date: date, Action: BackfillCreate}
		if id, ok := succeeded[date]; ok && req.OnlyMissing {
			bd.Action, bd.RunID = BackfillSucceeded, id
		} else if id, ok := byKey[store.WorkflowRunKeyDate(date)]; ok {
			bd.Action, bd.RunID = BackfillExists, id
		}
		out = append(out, bd)
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
