package apitypes

import (
	"encoding/json"
	"time"
)

// DeadLetter is a dead slot as the API returns it (GET /api/v1/dead): a
// slot whose attempt failed permanently or used up its retries, with what
// it ran with, and its latest replay (docs/failures.md, "Dead letters").
type DeadLetter struct {
	ID      int64  `json:"id"`
	App     string `json:"app"`
	JobID   int64  `json:"job_id"`
	JobName string `json:"job_name"`
	Handler string `json:"handler"`
	RunID   int64  `json:"run_id"`
	// ScheduledAt is the run's scheduled time: with job_id, its run key.
	ScheduledAt time.Time `json:"scheduled_at"`
	Slot        int       `json:"slot"`
	// Token is the dead attempt's fencing token, Attempt its number in the
	// slot (every attempt counts, retries and moves).
	Token   int64 `json:"token"`
	Attempt int   `json:"attempt"`
	// Params are the params the attempt ran with; SlotParam the slot's
	// param (the job's slot_params), "" when none.
	Params    string `json:"params"`
	SlotParam string `json:"slot_param,omitempty"`
	Error     string `json:"error,omitempty"`
	// ErrorCode and ErrorArgs: Error as a code when the admin ended the
	// attempt (as on Attempt).
	ErrorCode  string         `json:"error_code,omitempty"`
	ErrorArgs  map[string]any `json:"error_args,omitempty"`
	ErrorClass string         `json:"error_class"`
	// The attempt's record counters (0 when it reported none).
	Processed int64     `json:"processed"`
	Skipped   int64     `json:"skipped"`
	Failed    int64     `json:"failed"`
	Uncertain int64     `json:"uncertain"`
	DiedAt    time.Time `json:"died_at"`
	// ReplayedAt, ReplayedBy and ReplayToken are of the latest replay
	// (absent before the first); Replays counts the replays.
	ReplayedAt  *time.Time `json:"replayed_at,omitempty"`
	ReplayedBy  string     `json:"replayed_by,omitempty"`
	ReplayToken *int64     `json:"replay_token,omitempty"`
	Replays     int        `json:"replays"`
}

// DeadList is the answer of GET /api/v1/dead, newest first.
type DeadList struct {
	Dead []DeadLetter `json:"dead"`
	// NextCursor asks for the next page (the cursor query parameter);
	// absent on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
	// Count is how many letters match (first page only, unless count=0),
	// up to a cap: CountExact is false when more match.
	Count      *int64 `json:"count,omitempty"`
	CountExact *bool  `json:"count_exact,omitempty"`
}

// ReplayRequest is the body of POST /api/v1/dead/replay.
type ReplayRequest struct {
	// IDs are the dead letters to replay, 1 to 1,000.
	IDs []int64 `json:"ids"`
	// Params, a JSON object, replace the params of the replayed slots (the
	// run's or an earlier replay's); absent: they run with what they ran.
	Params json.RawMessage `json:"params,omitempty"`
	// Force replays letters that were replayed already.
	Force bool `json:"force,omitempty"`
}

// ReplayAnswer is the answer of POST /api/v1/dead/replay: the letters as
// marked, each with its new attempt's token (replay_token).
type ReplayAnswer struct {
	Replayed []DeadLetter `json:"replayed"`
}
