package apitypes

import (
	"encoding/json"
	"time"
)

// CancelRequest is the optional body of POST /runs/{id}/cancel.
type CancelRequest struct {
	Reason string `json:"reason"`
}

// LogLineView is a stored log line as GET /runs/:id/logs returns it.
type LogLineView struct {
	Seq     int64           `json:"seq"`
	Slot    int             `json:"slot"`
	Token   int64           `json:"token"`
	Attempt int             `json:"attempt"`
	At      time.Time       `json:"at"`    // the executor's clock
	Level   string          `json:"level"` // DEBUG, INFO, WARN, ERROR (slog names, e.g. INFO+2 in between)
	Message string          `json:"message"`
	Attrs   json.RawMessage `json:"attrs,omitempty"`
}

// RunLogsView is the answer of GET /runs/:id/logs.
type RunLogsView struct {
	RunID     int64         `json:"run_id"`
	RunStatus string        `json:"run_status"`
	Lines     []LogLineView `json:"lines"`
	// NextAfterSeq is the after_seq of the next request: every matching
	// line up to it has been returned.
	NextAfterSeq int64 `json:"next_after_seq"`
	// HasMore: the page is full; ask again at once for the rest.
	HasMore     bool  `json:"has_more"`
	StoredLines int64 `json:"stored_lines"` // lines of the run stored, all slots
	// Dropped counts the run's lines that were not stored: by the executors
	// (their buffer was full while no admin answered) and by the admin
	// (over the run's cap, or over its app's daily quota of log bytes).
	Dropped struct {
		Executor int64 `json:"executor"`
		Cap      int64 `json:"cap"`
		Quota    int64 `json:"quota"`
	} `json:"dropped"`
}
