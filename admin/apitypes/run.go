package apitypes

import (
	"encoding/json"
	"time"
)

// Message is a message for people as a code with named arguments (each a
// string or a nested Message), the form the console translates; the English
// text travels next to it.
type Message struct {
	Code string         `json:"code"`
	Args map[string]any `json:"args,omitempty"`
}

// Run is a run as the API returns it (GET /api/v1/runs, /api/v1/runs/{id}).
type Run struct {
	ID      int64  `json:"id"`
	JobID   int64  `json:"job_id"`
	JobName string `json:"job_name"`
	App     string `json:"app"`
	// JobDeleted: the run's job was deleted; JobName and App are still the
	// names it had (the run keeps them).
	JobDeleted     bool      `json:"job_deleted,omitempty"`
	ScheduledAt    time.Time `json:"scheduled_at"`
	Trigger        string    `json:"trigger"`
	Status         string    `json:"status"`
	Params         string    `json:"params"`
	SlotCount      int       `json:"slots"`
	SlotsSucceeded int       `json:"slots_succeeded"`
	SlotsFailed    int       `json:"slots_failed"`
	Epoch          int64     `json:"epoch"`
	CreatedAt      time.Time `json:"created_at"`
	// StartedAt is when the run was assigned to executors;
	// FirstSlotStartedAt when its first slot started running on one (the
	// wait users feel: scheduled_at → first_slot_started_at).
	StartedAt          *time.Time `json:"started_at"`
	FirstSlotStartedAt *time.Time `json:"first_slot_started_at,omitempty"`
	FinishedAt         *time.Time `json:"finished_at"`
	Error              string     `json:"error,omitempty"`
	// ErrorCode and ErrorArgs are Error as a code with named arguments (an
	// argument is a string or a nested {code, args}), for clients that show
	// it in another language (docs/operations.md, "Messages"); absent for
	// runs written before codes existed.
	ErrorCode   string         `json:"error_code,omitempty"`
	ErrorArgs   map[string]any `json:"error_args,omitempty"`
	ParentRunID *int64         `json:"parent_run_id,omitempty"`
	// PredictedMS is the makespan the placement predicted from measured slot
	// costs; ActualMS is finished − started. Both absent until known.
	PredictedMS *int64 `json:"predicted_ms,omitempty"`
	ActualMS    *int64 `json:"actual_ms,omitempty"`
	// StartDeadlineAt and FinishDeadlineAt are the run's deadlines, from its
	// job's start_deadline and finish_deadline when the run was created;
	// DeadlineAction what a missed finish deadline does (alarm, cancel).
	// The start deadline is met when first_slot_started_at is not after it,
	// the finish deadline when finished_at is not after it. Absent for none.
	StartDeadlineAt  *time.Time `json:"start_deadline_at,omitempty"`
	FinishDeadlineAt *time.Time `json:"finish_deadline_at,omitempty"`
	DeadlineAction   string     `json:"deadline_action,omitempty"`
	// CalendarID and CalendarVersion are the business calendar the run was
	// decided with (its job's calendar and that calendar's version when the
	// run was created); absent for none. A later edit of the calendar does
	// not change a run that exists.
	CalendarID      int64  `json:"calendar_id,omitempty"`
	CalendarVersion string `json:"calendar_version,omitempty"`
	// ShiftedFrom is the instant the cron expression gave for a firing the
	// calendar rule shift moved to another working day; scheduled_at (the
	// run key) is the moved instant. Absent for a firing not moved.
	ShiftedFrom *time.Time `json:"shifted_from,omitempty"`
	// TimeZone is the zone of the firing (IANA name): the job's zone when
	// the run was created, or for a job with several zones the first of
	// them that fires at scheduled_at (docs/schedules.md, "Several zones").
	// The executor reads the run's dates ({date} in a dedup scope) there.
	TimeZone string `json:"time_zone,omitempty"`
	// StartAfter is the instant before which the admin does not start a
	// scheduled run of a job with a jitter_window: scheduled_at (the run
	// key) plus the firing's offset in [0, jitter_window). Absent for a run
	// that may start at its scheduled time.
	StartAfter *time.Time `json:"start_after,omitempty"`
	// Workflow is the workflow context of a workflow node's run, as its
	// executor receives it next to Params (protocol.WorkflowContext:
	// run_id, node, business_date, upstream); absent for any other run,
	// and in run lists.
	Workflow json.RawMessage `json:"workflow,omitempty"`
}

// Attempt is one attempt of one slot of a run; Token is its fencing token.
type Attempt struct {
	Token      int64  `json:"token"`
	Slot       int    `json:"slot"`
	Attempt    int    `json:"attempt"`
	ExecutorID *int64 `json:"executor_id"`
	// Executor is the instance id of the executor ExecutorID (its name in
	// the console and the CLI); absent when none.
	Executor string `json:"executor,omitempty"`
	// Status is the slot state: pending, assigned, queued, running,
	// succeeded, failed, cancelled, lost or moved (admin/store.SlotState).
	Status     string     `json:"status"`
	Current    bool       `json:"current"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Processed  int64      `json:"processed"`
	Skipped    int64      `json:"skipped"`
	Failed     int64      `json:"failed"`
	Uncertain  int64      `json:"uncertain"`
	Error      string     `json:"error,omitempty"`
	// ErrorCode and ErrorArgs: Error as a code when the admin ended the
	// attempt (as on Run); absent for a handler's own error text.
	ErrorCode string         `json:"error_code,omitempty"`
	ErrorArgs map[string]any `json:"error_args,omitempty"`
	// ErrorClass is how an attempt that did not succeed ended
	// (docs/failures.md): permanent (not retried), retryable, timeout,
	// lost or cancelled; absent for a succeeded, unfinished or moved
	// attempt and for attempts recorded before error classes.
	ErrorClass string `json:"error_class,omitempty"`
}

// RunDetail is the answer of GET /api/v1/runs/{id}: the run and every
// attempt of its slots.
type RunDetail struct {
	Run      Run       `json:"run"`
	Attempts []Attempt `json:"attempts"`
	// Result is the run's result (docs/workflows.md, "Results"): the JSON
	// value its one slot's handler returned, or an object of the slots'
	// values by slot number ("0", "1", …) when the run has several slots;
	// absent when no succeeded slot returned one.
	Result json.RawMessage `json:"result,omitempty"`
}

// Slot is one slot of a run with its current attempt (GET
// /api/v1/runs/{id}/slots).
type Slot struct {
	Slot     int     `json:"slot"`
	Attempts int     `json:"attempts"` // attempts made so far (moved and lost ones included)
	Current  Attempt `json:"current"`
}

// RunStatusPhrase says where a run of status stands, as the rest of a
// sentence about it ("run 15 " + …): "is pending", "is running", "has
// already succeeded", "has already failed", "has already partially
// failed", "was cancelled", "was skipped"; another status as "is <status>".
func RunStatusPhrase(status string) string {
	switch status {
	case "succeeded", "failed":
		return "has already " + status
	case "partially_failed":
		return "has already partially failed"
	case "cancelled", "skipped":
		return "was " + status
	default:
		return "is " + status
	}
}
