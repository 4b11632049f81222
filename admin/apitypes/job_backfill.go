package apitypes

import "time"

// JobBackfill asks for the runs of a plain job for every business date in
// [From, To] (YYYY-MM-DD, in the job's zone; at most 366 dates) (POST
// /api/v1/jobs/{id}/backfill): the same request as a workflow's backfill.
// Each date's run is the job's first firing of that day (midnight when the
// schedule has none that day), keyed like any run of the job, so a date
// whose run exists keeps it. The leader starts at most Parallel (1-20,
// default 1) at a time, oldest date first or NewestFirst; OnlyMissing
// skips the dates with a succeeded run; DryRun lists what would be done and
// creates nothing. Params (a JSON object) replaces the job's params in each
// run; omitted, the runs have the job's.
type JobBackfill = WorkflowBackfill

// JobBackfillDate is what a job backfill does with one date: create (a new
// run), exists (the run of the date's instant is kept) or succeeded (only
// missing dates: a run of the date succeeded). ScheduledAt is the date's
// run instant (with the job, its run key); RunID the run created or found.
type JobBackfillDate struct {
	Date        string    `json:"date"`
	Action      string    `json:"action"`
	ScheduledAt time.Time `json:"scheduled_at"`
	RunID       int64     `json:"run_id,omitempty"`
}

// JobBackfillPlan answers a job backfill: its id (0 for a dry run), how
// many runs it created, and each date in the order the runs start.
type JobBackfillPlan struct {
	BackfillID int64             `json:"backfill_id,omitempty"`
	DryRun     bool              `json:"dry_run"`
	Created    int               `json:"created"`
	Dates      []JobBackfillDate `json:"dates"`
}

// JobBackfillView is one backfill of a job (GET
// /api/v1/jobs/{id}/backfills), with how many runs it has and how many of
// them are pending, running and succeeded.
type JobBackfillView struct {
	ID          int64     `json:"id"`
	JobID       int64     `json:"job_id"`
	From        string    `json:"from"`
	To          string    `json:"to"`
	NewestFirst bool      `json:"newest_first"`
	Parallel    int       `json:"parallel"`
	OnlyMissing bool      `json:"only_missing"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
	Runs        int       `json:"runs"`
	Pending     int       `json:"pending"`
	Running     int       `json:"running"`
	Succeeded   int       `json:"succeeded"`
}
