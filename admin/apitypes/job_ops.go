package apitypes

import "time"

// CloneRequest names the copy; app defaults to the original's.
type CloneRequest struct {
	App     string `json:"app"`
	Name    string `json:"name"`
	Enabled *bool  `json:"enabled"` // default false: review the copy, then enable it
}

// Preview is one upcoming firing, or for a job on a business calendar a
// firing the calendar removes (Skipped, with the reason in Note).
type Preview struct {
	At    time.Time `json:"at"`
	Local string    `json:"local"`
	Note  string    `json:"note,omitempty"`
	// Zone is the zone of the firing: the job's, or for a job with several
	// zones the first of them that fires at At (Local is At there);
	// AlsoZones are the job's other zones that fire at the same instant
	// (it fires once).
	Zone      string   `json:"zone"`
	AlsoZones []string `json:"also_zones,omitempty"`
	// NoteCodes are Note's parts as message codes (for the console).
	NoteCodes []Message `json:"note_codes,omitempty"`
	// Skipped: the calendar removes this firing; it is recorded as a
	// skipped run keyed by At, with Note as its reason.
	Skipped bool `json:"skipped,omitempty"`
	// ShiftedFrom is the cron's instant of a firing the rule shift moved to
	// At.
	ShiftedFrom *time.Time `json:"shifted_from,omitempty"`
	// SkippedMore counts the removed firings before this one that are not
	// listed (a long stretch of non-working days of a dense schedule).
	SkippedMore int `json:"skipped_more,omitempty"`
	// StartAfter is when the firing's run may start, for a job with a
	// jitter window: At plus the firing's offset (schedule.JitterOffset).
	StartAfter *time.Time `json:"start_after,omitempty"`
}

// TriggerRequest is the optional body of POST /jobs/{id}/trigger.
type TriggerRequest struct {
	// Params overrides the job's params for this run.
	Params *string `json:"params"`
	// ScheduledAt triggers the firing of that instant (backfill); the run
	// key makes a repeat of the same request idempotent.
	ScheduledAt *time.Time `json:"scheduled_at"`
	// Priority of this run: the job's when omitted, or lower — critical,
	// high, normal, low (docs/tenancy.md, "Priorities").
	Priority string `json:"priority,omitempty"`
}

// JobList is the answer of GET /jobs.
type JobList struct {
	Jobs []Job `json:"jobs"`
	// the cursor of the next page (query parameter cursor); absent on the
	// last page
	NextCursor string `json:"next_cursor,omitempty"`
	// how many jobs match, on the first page (no cursor) when that is
	// cheap: exact when count_exact, otherwise "more than count"; absent
	// for a substring or schedule-kind search (see partial)
	Count      *int64 `json:"count,omitempty"`
	CountExact bool   `json:"count_exact"`
	// a substring or schedule-kind search examines a bounded number of
	// jobs per request: partial says it stopped before the page was full
	// and more may match after next_cursor; scanned is how many jobs this
	// request examined
	Partial bool `json:"partial"`
	Scanned int  `json:"scanned,omitempty"`
}
