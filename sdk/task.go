package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// Handler processes one slot of one run. It must return when ctx is done
// (cancel by the admin, the assignment's timeout, or Stop after
// DrainTimeout); see the package documentation for how its return value
// becomes the slot's result.
type Handler func(ctx context.Context, task *Task) error

// Task describes the slot a Handler runs, and collects what it reports.
// The exported fields are read-only; the methods are safe for concurrent use
// (a handler may process records in several goroutines).
type Task struct {
	RunID       int64     // the run (one firing of the job)
	JobID       int64     // the job
	JobName     string    // the job's name
	Handler     string    // the handler name the job names (the one running)
	ScheduledAt time.Time // the firing time the run was created for

	Slot      int    // this slot, in [0, SlotCount)
	SlotCount int    // the job's slot count, >= 1
	Params    string // the job's (run's) parameters
	SlotParam string // this slot's own parameter, if the job defines one
	Token     int64  // the fencing token of this attempt: take the shard lock and write dedup rows with it
	Attempt   int    // 1 for the first attempt of the slot, then 2, 3, …

	// Records is the records policy the job's definition imposes on
	// package records (dedup scope, uncertain-record policy, attempts per
	// record); records.Processor.Process applies it over the Processor's
	// Config. Zero: the job leaves those choices to the handler.
	Records RecordsPolicy

	// Workflow is the workflow context of a run that is a workflow node's:
	// the workflow run's id, the node's key, the business date and the
	// results of the node's direct parents (Upstream). nil for a run that
	// is no workflow node's. It is not in Params, which hold only the
	// job's params (with the workflow run's laid over them).
	Workflow *WorkflowContext

	// Logger is pre-tagged with run_id, job, slot, token and attempt.
	Logger *slog.Logger

	lastProgress atomic.Pointer[[2]int64] // done, total
	processed    atomic.Int64
	skipped      atomic.Int64
	failed       atomic.Int64
	uncertain    atomic.Int64
	result       atomic.Pointer[json.RawMessage]
}

// ErrResultTooLarge is returned by Task.SetResult for a result larger than
// protocol.MaxResultBytes (16 KiB) once encoded.
var ErrResultTooLarge = errors.New("sdk: result larger than 16 KiB")

// SetResult sets the slot's result: v encoded as JSON, sent with the slot's
// outcome when the handler returns nil, and read by the children of a
// workflow node as parameters (docs/workflows.md, results flowing
// downstream). A later call replaces an earlier one; a failed or cancelled
// slot sends none. A value that does not encode, or encodes to more than
// protocol.MaxResultBytes, is refused with the error (ErrResultTooLarge for
// the size) and the result is left as it was: a handler that returns such
// an error fails the slot, one that ignores it succeeds without that
// result. The admin refuses a result over the cap too (the slot fails), so
// an executor of another SDK cannot exceed it.
func (t *Task) SetResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sdk: result: %w", err)
	}
	if len(b) > protocol.MaxResultBytes {
		return fmt.Errorf("%w: %d bytes", ErrResultTooLarge, len(b))
	}
	r := json.RawMessage(b)
	t.result.Store(&r)
	return nil
}

// Result returns the result set by SetResult (nil: none).
func (t *Task) Result() json.RawMessage {
	if r := t.result.Load(); r != nil {
		return *r
	}
	return nil
}

// RecordsPolicy is a job's records policy for one run (see Task.Records);
// an empty field leaves that choice to the handler's records.Config. It is
// the type the admin sends (protocol.RecordsPolicy), not a copy of it: the
// scope arrives resolved for the run ("settle:2026-11-30" for a job's
// "settle:{date}").
type RecordsPolicy = protocol.RecordsPolicy

// WorkflowContext is what a workflow node's run knows of its workflow run
// (see Task.Workflow): the type the admin sends (protocol.WorkflowContext).
type WorkflowContext = protocol.WorkflowContext

// BusinessDate returns the business date of the task's workflow run
// (YYYY-MM-DD), "" for a run that is no workflow node's.
func (t *Task) BusinessDate() string {
	if t.Workflow == nil {
		return ""
	}
	return t.Workflow.BusinessDate
}

// Progress records how far the slot is: done out of total units (records,
// pages…; total may be 0 when unknown). The latest value is reported with the
// next heartbeat.
func (t *Task) Progress(done, total int64) {
	t.lastProgress.Store(&[2]int64{done, total})
}

// AddProcessed counts n records applied by this attempt.
func (t *Task) AddProcessed(n int64) { t.processed.Add(n) }

// AddSkipped counts n records skipped (for example already done according to
// the dedup table).
func (t *Task) AddSkipped(n int64) { t.skipped.Add(n) }

// AddFailed counts n records that failed.
func (t *Task) AddFailed(n int64) { t.failed.Add(n) }

// AddUncertain counts n records whose outcome is unknown (left pending by a
// crashed attempt, with an external effect).
func (t *Task) AddUncertain(n int64) { t.uncertain.Add(n) }

// Counts returns the counters recorded so far.
func (t *Task) Counts() (processed, skipped, failed, uncertain int64) {
	return t.processed.Load(), t.skipped.Load(), t.failed.Load(), t.uncertain.Load()
}

// Owns reports whether key belongs to this slot: SlotOf(key, t.SlotCount) == t.Slot.
func (t *Task) Owns(key string) bool { return SlotOf(key, t.SlotCount) == t.Slot }

// IDRange returns this slot's part of [minID, maxID]; see the function IDRange.
func (t *Task) IDRange(minID, maxID int64) (lo, hi int64) {
	return IDRange(t.Slot, t.SlotCount, minID, maxID)
}

// progress is the text reported in RunningSlot.Progress: "done/total", or
// "done" when total is unknown, or "" before the first call to Progress.
func (t *Task) progress() string {
	p := t.lastProgress.Load()
	if p == nil {
		return ""
	}
	done, total := p[0], p[1]
	if total <= 0 {
		return strconv.FormatInt(done, 10)
	}
	return strconv.FormatInt(done, 10) + "/" + strconv.FormatInt(total, 10)
}
