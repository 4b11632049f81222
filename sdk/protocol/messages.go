package protocol

import (
	"encoding/json"
	"time"
)

// Paths of the executor-facing admin API and of the executor's own API.
const (
	PathHeartbeat  = "/api/v1/executor/heartbeat"
	PathResults    = "/api/v1/executor/results"
	PathDeregister = "/api/v1/executor/deregister"
	PathLogs       = "/api/v1/executor/logs"

	PathAssign  = "/shardjob/v1/assign"
	PathCancel  = "/shardjob/v1/cancel"
	PathRelease = "/shardjob/v1/release"
	PathHealth  = "/shardjob/v1/health"
)

// Slot attempt states reported by executors.
const (
	SlotSucceeded = "succeeded"
	SlotFailed    = "failed"
	SlotCancelled = "cancelled"
)

// HeartbeatRequest registers an executor and renews the leases of the tokens
// it is running. It is idempotent: the first heartbeat registers.
type HeartbeatRequest struct {
	InstanceID string            `json:"instance_id"` // stable per process, e.g. host-pid-random
	App        string            `json:"app"`         // the app whose jobs it runs
	Address    string            `json:"address"`     // base URL the admin pushes to, e.g. http://10.0.0.5:9090
	Capacity   int               `json:"capacity"`    // slots it runs at once
	Version    string            `json:"version"`
	Handlers   []string          `json:"handlers"` // handler names it can run
	Labels     map[string]string `json:"labels,omitempty"`
	Draining   bool              `json:"draining,omitempty"`
	Running    []RunningSlot     `json:"running,omitempty"`
	// Released lists tokens the executor gave back unstarted (ReleaseRequest)
	// that the admin has not yet confirmed as moved: the admin moves any of
	// them that are still current on this executor, and lists them in the
	// response's Cancel once they are not, so the executor forgets them.
	Released []int64 `json:"released,omitempty"`
	// Incarnation is random and new each time the executor process starts.
	// When it changes for an instance id the admin knows, the instance
	// restarted: the slots its previous process held are lost at once,
	// except Running, Released and Unsent.
	Incarnation string `json:"incarnation,omitempty"`
	// Unsent lists finished tokens whose results no admin has acknowledged
	// yet (restored from the results journal after a restart, or waiting
	// to be delivered): they are not lost.
	Unsent []int64 `json:"unsent,omitempty"`
	// AcceptSeq counts the assignment batches this process has accepted
	// (pushes and heartbeat responses), as of the moment this heartbeat was
	// built. Every token accepted in batch AcceptSeq or earlier is in
	// Running, Released or Unsent unless its result was acknowledged or it
	// was cancelled: the admin treats any other token it recorded as
	// accepted at or before AcceptSeq as lost at once (reconciliation). 0
	// (executors built before it) turns reconciliation off.
	AcceptSeq int64 `json:"accept_seq,omitempty"`
}

// ProgressQueued is the Progress of a token the executor accepted but has
// not started (it waits for capacity); the admin may move it elsewhere.
const ProgressQueued = "queued"

// RunningSlot is a token the executor is executing right now.
type RunningSlot struct {
	Token    int64  `json:"token"`
	Progress string `json:"progress,omitempty"`
}

// HeartbeatResponse tells the executor what to run and what to stop.
type HeartbeatResponse struct {
	ExecutorID  int64           `json:"executor_id"`
	IntervalMS  int64           `json:"interval_ms"`
	Assignments []RunAssignment `json:"assignments,omitempty"`
	Cancel      []int64         `json:"cancel,omitempty"`
	Admins      []string        `json:"admins,omitempty"` // other admin replicas the executor may fail over to
	// LostAfterMS is the heartbeat silence after which the admins declare
	// the executor lost: an executor asks another admin too when one is
	// slow to answer a heartbeat for a fraction of it. 0 (admins built
	// before it): three heartbeat intervals.
	LostAfterMS int64 `json:"lost_after_ms,omitempty"`
	// AssignmentsValidUntilMS bounds when Assignments may be taken, as
	// AssignRequest.ValidUntilMS does: a response read late (the executor
	// froze in between) is not acted on. 0: no bound.
	AssignmentsValidUntilMS int64 `json:"assignments_valid_until_ms,omitempty"`
}

// RunAssignment is the work of one run for one executor: the attempts of
// its slots placed on that executor.
type RunAssignment struct {
	RunID       int64  `json:"run_id"`
	JobID       int64  `json:"job_id"`
	JobName     string `json:"job_name"`
	Handler     string `json:"handler"`
	ScheduledAt int64  `json:"scheduled_at_ms"`
	Params      string `json:"params,omitempty"`
	// SlotCount is how many slots the run has (slots 0 … SlotCount-1);
	// "total" on the wire.
	SlotCount int            `json:"total"`
	TimeoutMS int64          `json:"timeout_ms,omitempty"`
	Records   *RecordsPolicy `json:"records,omitempty"` // nil: the job sets no records policy
	// Workflow is the workflow context of a run that is a workflow node's
	// (nil for any other run): kept apart from Params, which hold only the
	// job's (and the workflow run's) params, so that a handler that
	// decodes its params strictly (the built-in http, sql and shell) is not
	// handed fields it does not know.
	Workflow *WorkflowContext `json:"workflow,omitempty"`
	// Priority is the run's priority by name (ParsePriority); "" for
	// normal. An executor at capacity starts its queued slots by priority
	// as they age (Priority.Aged), then in arrival order.
	Priority string `json:"priority,omitempty"`
	// Attempts are the attempts of this run's slots that the executor is
	// to run, one per slot; "slots" on the wire.
	Attempts []SlotAttempt `json:"slots"`
}

// WorkflowContext is what a workflow node's run knows of its workflow run:
// which run and node it is, the run's business date and the results of the
// node's direct parents that succeeded with one (docs/workflows.md,
// "Results").
type WorkflowContext struct {
	RunID        int64  `json:"run_id"`        // the workflow run
	Node         string `json:"node"`          // the node's key in the workflow
	BusinessDate string `json:"business_date"` // YYYY-MM-DD, in the workflow's time zone
	// Upstream holds each direct parent's result by parent key (a run's
	// result: one slot's value, or an object of values by slot number).
	Upstream map[string]json.RawMessage `json:"upstream,omitempty"`
}

// RecordsPolicy is what the job's definition imposes on the sdk/records
// Processor of its handler; an empty field leaves that choice to the
// handler's Config.
type RecordsPolicy struct {
	// Scope is the dedup scope of this run: "run", "job", or a name (with
	// the job's placeholders already replaced, e.g. "settle:2026-11-30").
	Scope string `json:"scope,omitempty"`
	// Uncertain is "retry" or "skip".
	Uncertain string `json:"uncertain,omitempty"`
	// MaxAttempts is how many times a record may be handed to the handler.
	MaxAttempts int `json:"max_attempts,omitempty"`
}

// SlotAttempt is one attempt of one slot (a row of the admin's slot_attempt
// table). Token is the attempt's id: larger for every later attempt of the
// slot, it is also the fencing token the executor reports results under.
type SlotAttempt struct {
	Slot    int    `json:"slot"`
	Token   int64  `json:"token"`
	Attempt int    `json:"attempt"`
	Param   string `json:"param,omitempty"`
}

// AssignRequest is pushed by the admin to an executor.
type AssignRequest struct {
	Assignments []RunAssignment `json:"assignments"`
	// ValidUntilMS bounds when the push may be taken (Unix ms, the admin's
	// clock, a fraction of the loss threshold after it was sent). An
	// executor that reads it later — it was frozen while the request
	// waited in its socket, and the admin may have moved the slots since —
	// refuses it whole (410) and starts none of it. 0: no bound.
	ValidUntilMS int64 `json:"valid_until_ms,omitempty"`
}

// Expired reports whether an assignment bounded by validUntilMS (0: no
// bound) may no longer be taken at now.
func Expired(validUntilMS int64, now time.Time) bool {
	return validUntilMS > 0 && now.UnixMilli() > validUntilMS
}

// AssignResponse lists the tokens the executor accepted.
type AssignResponse struct {
	Accepted []int64 `json:"accepted"`
	// Started lists the accepted tokens that are not waiting in the
	// executor's queue: started at once (or already running or finished).
	// The admin records them as running; the other accepted tokens are
	// queued there and may be moved to an idle executor (ReleaseRequest).
	// An executor that leaves it out has every accepted token counted as
	// queued until its next heartbeat reports progress.
	Started []int64 `json:"started,omitempty"`
	// AcceptSeq numbers this accepted batch in the executor process (see
	// HeartbeatRequest.AcceptSeq); 0 from executors built before it.
	AcceptSeq int64 `json:"accept_seq,omitempty"`
}

// CancelRequest asks an executor to stop tokens.
type CancelRequest struct {
	Tokens []int64 `json:"tokens"`
	Reason string  `json:"reason,omitempty"`
}

// ReleaseRequest asks an executor to give back tokens it has queued but not
// started, so that the admin can run them on an idle executor (work
// stealing). The executor decides atomically: a token it has started is
// kept and runs to its end here.
type ReleaseRequest struct {
	Tokens []int64 `json:"tokens"`
	Reason string  `json:"reason,omitempty"`
}

// ReleaseResponse lists the tokens given back: the executor will never start
// them. Only these may be moved; the others stay where they are.
type ReleaseResponse struct {
	Released []int64 `json:"released"`
}

// SlotResult is the outcome of one slot attempt.
type SlotResult struct {
	Token      int64  `json:"token"`
	Status     string `json:"status"` // SlotSucceeded, SlotFailed or SlotCancelled
	Error      string `json:"error,omitempty"`
	StartedAt  int64  `json:"started_at_ms"`
	FinishedAt int64  `json:"finished_at_ms"`
	Processed  int64  `json:"processed,omitempty"`
	Skipped    int64  `json:"skipped,omitempty"`
	Failed     int64  `json:"failed,omitempty"`
	Uncertain  int64  `json:"uncertain,omitempty"`
	// Result is the small JSON value a succeeded slot's handler returned
	// (Task.SetResult; docs/workflows.md, results flowing downstream), at
	// most MaxResultBytes; absent when it returned none, and from executors
	// older than results. The admin fails a slot whose result is not JSON
	// or is larger than MaxResultBytes.
	Result json.RawMessage `json:"result,omitempty"`
	// ErrorClass is how a failed slot failed (ClassPermanent, ClassRetryable,
	// ClassTimeout; docs/failures.md). Empty, as from executors older than
	// error classes, and any value the admin does not know mean
	// ClassRetryable: the slot is retried as the job's retry policy allows.
	ErrorClass string `json:"error_class,omitempty"`
	// RetryAfterMS asks the admin not to retry the failed slot earlier than
	// this many milliseconds after it finished (sdk.RetryAfter, an HTTP
	// Retry-After). The admin waits max(its backoff, RetryAfterMS), with
	// RetryAfterMS capped at MaxRetryAfter; 0 or absent: its backoff only.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
}

// The error classes of an attempt that did not succeed (docs/failures.md).
// Executors report the first three; the admin records the others itself.
const (
	// ClassPermanent: the slot fails without retry (sdk.Permanent, an HTTP
	// 400, an SQL syntax error…).
	ClassPermanent = "permanent"
	// ClassRetryable: retried up to the job's retry_max, after its backoff.
	ClassRetryable = "retryable"
	// ClassTimeout: the slot ran out of time (its job's timeout); retried
	// like ClassRetryable.
	ClassTimeout = "timeout"
	// ClassLost: the attempt was lost with its executor and tried again
	// elsewhere (does not use up a retry). Recorded by the admin.
	ClassLost = "lost"
	// ClassCancelled: the attempt was cancelled (by an operator, a run
	// deadline, the job's deletion); never retried by itself. Recorded by
	// the admin from the slot's status.
	ClassCancelled = "cancelled"
)

// MaxRetryAfter caps the delay a failed slot may ask for before its retry
// (SlotResult.RetryAfterMS): one hour. A longer wish is cut to it.
const MaxRetryAfter = time.Hour

// MaxResultBytes caps SlotResult.Result: 16 KiB of JSON per slot attempt.
const MaxResultBytes = 16 << 10

// ResultsRequest delivers a batch of results.
type ResultsRequest struct {
	InstanceID string       `json:"instance_id"`
	Results    []SlotResult `json:"results"`
}

// ResultsResponse acknowledges results. Accepted and Rejected are both final:
// the executor forgets them. Rejected tokens were stale (superseded or unknown).
type ResultsResponse struct {
	Accepted []int64 `json:"accepted"`
	Rejected []int64 `json:"rejected,omitempty"`
}

// DeregisterRequest removes an executor from the registry.
type DeregisterRequest struct {
	InstanceID string `json:"instance_id"`
}

// Error is the JSON body of every non-2xx response.
type Error struct {
	Error string `json:"error"`
}

// CancelResponse lists the tokens an executor found (queued or running) and
// cancelled. Tokens it does not hold (unknown or already finished) are left
// out; their results, if any, are on their way.
type CancelResponse struct {
	Cancelled []int64 `json:"cancelled"`
}

// HealthResponse is the body of GET PathHealth. The endpoint is not signed
// (load balancers and probes call it), so it tells nothing sensitive.
type HealthResponse struct {
	Status     string `json:"status"` // HealthOK or HealthDraining
	InstanceID string `json:"instance_id"`
}

// Health states.
const (
	HealthOK       = "ok"
	HealthDraining = "draining"
)

// LogLine is one record a handler logged through Task.Logger (or the SDK
// logged about the slot), shipped to the admin in a LogsRequest.
type LogLine struct {
	Token   int64  `json:"token"`   // the slot attempt that logged it
	AtMS    int64  `json:"at_ms"`   // the executor's clock, Unix ms
	Level   int    `json:"level"`   // slog level: -4 debug, 0 info, 4 warn, 8 error
	Message string `json:"message"` // truncated by the executor to its line cap
	// Attrs is a JSON object of the record's attributes (without the
	// run_id, job, slot, token and attempt every line of a slot carries),
	// or empty.
	Attrs string `json:"attrs,omitempty"`
}

// LogDrop counts lines of a token the executor dropped before shipping them
// (its log buffer was full).
type LogDrop struct {
	Token int64 `json:"token"`
	Lines int64 `json:"lines"`
}

// LogsRequest delivers a batch of log lines. Delivery is best effort: a
// batch no admin accepts is retried while the executor's buffer has room.
type LogsRequest struct {
	InstanceID string    `json:"instance_id"`
	Lines      []LogLine `json:"lines"`
	Dropped    []LogDrop `json:"dropped,omitempty"`
}

// LogsResponse acknowledges a LogsRequest: the executor forgets the whole
// batch. Stored lines were kept; the others were over the run's cap
// (counted as dropped on the run) or of tokens not held by this executor
// (listed in RejectedTokens, not stored).
type LogsResponse struct {
	Stored         int     `json:"stored"`
	Dropped        int     `json:"dropped,omitempty"`
	RejectedTokens []int64 `json:"rejected_tokens,omitempty"`
}
