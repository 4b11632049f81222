package apitypes

import "time"

// JobDef is the definition of a job: every field a client states, without
// its child jobs and version. It is what a jobs file manages (shardjobctl
// apply). App and Name identify a job; omitted (zero) fields take the
// admin's defaults (WithDefaults).
//
// The JobSpec and Job schemas of docs/openapi.yaml and the list of fields
// in docs/cli.md are generated from these types (go generate, see
// schemagen): a field's doc comment is its description there, and its
// openapi tag the schema's constraints in a request (YAML, in a flow
// mapping).
type JobDef struct {
	App         string `json:"app" openapi:"pattern: \"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$\""`
	Name        string `json:"name" openapi:"pattern: \"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$\""`
	Description string `json:"description" openapi:"maxLength: 1024"`
	Handler     string `json:"handler" openapi:"maxLength: 128"`
	// 5 or 6 fields, @hourly-style, @every, Jenkins H
	Cron string `json:"cron"`
	// IANA zone name; with time_zones, the first of them
	TimeZone string `json:"time_zone" openapi:"default: UTC"`
	// several IANA zones (docs/schedules.md, "Several zones"): the job
	// fires at the union of the cron's instants in each zone, each firing
	// tagged with the first zone that produces it; instants that coincide
	// fire once. At most 8 distinct zones, the first being time_zone (which
	// may then be omitted); not with @every, @at, a business calendar or a
	// cron that fires more than 24 times a day. Omitted (or one zone) for a
	// job with one zone, time_zone
	TimeZones  []string `json:"time_zones,omitempty" openapi:"maxItems: 8"`
	SlotCount  int      `json:"slots" openapi:"minimum: 1, maximum: 1024, default: 1"`
	SlotParams string   `json:"slot_params" openapi:"example: \"0=Beijing,1=Shanghai\""`
	Params     string   `json:"params" openapi:"maxLength: 65536"`
	// what happens to a firing later than misfire_threshold_ms
	MisfirePolicy string `json:"misfire_policy" openapi:"enum: [run_once, skip, catch_up], default: run_once"`
	// how late a firing may start before the misfire policy decides what
	// happens to it
	MisfireThresholdMS int64  `json:"misfire_threshold_ms" openapi:"minimum: 1000, maximum: 604800000, default: 60000"`
	MaxCatchUp         int    `json:"max_catch_up" openapi:"minimum: 1, maximum: 1000, default: 10"`
	OverlapPolicy      string `json:"overlap_policy" openapi:"enum: [allow, skip, queue, replace], default: allow"`
	TimeoutMS          int64  `json:"timeout_ms" openapi:"minimum: 0, default: 0"`
	RetryMax           int    `json:"retry_max" openapi:"minimum: 0, maximum: 100, default: 0"`
	RetryBackoffMS     int64  `json:"retry_backoff_ms" openapi:"minimum: 1, default: 1000"`
	// Retry budgets and circuit breakers (docs/failures.md, "Retry budgets
	// and circuit breakers").
	//
	// the most the full-jitter backoff between two attempts of a slot
	// grows to, a duration from 1ms to 24h such as "5m"; "" for the admin's
	// --retry-backoff-cap (10m by default)
	RetryBackoffMax string `json:"retry_backoff_max" openapi:"default: \"\", example: 5m"`
	// retries of the job's slots may be at most this percentage of its
	// first attempts over retry_budget_window; a retry beyond it is not
	// made (the slot fails, saying the budget was spent). 0 for no budget
	RetryBudgetPercent int `json:"retry_budget_percent" openapi:"minimum: 0, maximum: 1000, default: 0"`
	// only with retry_budget_percent: the window the budget counts over, a
	// duration from 1m to 24h; default 10m
	RetryBudgetWindow string `json:"retry_budget_window,omitempty" openapi:"example: 1h"`
	// the circuit breaker: this many consecutive failures of the job's
	// slots that are retryable, timeouts or lost (not permanent ones) open
	// it, which holds the job's new runs and retries until a probe
	// succeeds. 0 for no breaker
	BreakerThreshold int `json:"breaker_threshold" openapi:"minimum: 0, maximum: 1000, default: 0"`
	// only with breaker_threshold: how long the breaker stays open before
	// one probe attempt goes, a duration from 1s to 24h; default 1m
	BreakerCooldown string `json:"breaker_cooldown,omitempty" openapi:"example: 5m"`
	// The records policy (sdk/records) imposed on the handler's Processor
	// (validated in admin/jobdef records.go; the store keeps it as one
	// store.RecordsPolicy).
	//
	// dedup scope: "" leaves it to the handler; "run" (each run handles each
	// record once), "job" (once per job), or a scope name of letters, digits
	// and . _ : / = - where {date}, {month} and {year} become the run's
	// scheduled time in the job's time zone (e.g. "settle:{date}"); at most
	// 128 bytes once replaced; must not start with "run:"
	DedupScope string `json:"dedup_scope" openapi:"default: \"\""`
	// records left pending by a dead attempt: "retry" (at least once),
	// "skip" (at most once, alarmed); "" leaves it to the handler
	UncertainPolicy string `json:"uncertain_policy" openapi:"enum: [\"\", retry, skip], default: \"\""`
	// times a record may be handed to the handler; 0 leaves it to the
	// handler
	RecordMaxAttempts int `json:"record_max_attempts" openapi:"minimum: 0, maximum: 100, default: 0"`
	// Deadlines (docs/schedules.md, "Deadlines"); each run keeps the
	// instants they give when it is created.
	//
	// how long after its scheduled time a run's first slot may take to
	// start before a run_late_start alarm: a duration from 1s to 168h such
	// as "15m"; "" for none
	StartDeadline string `json:"start_deadline" openapi:"default: \"\", example: 15m"`
	// when a run must have finished, else a run_deadline_missed alarm: a
	// duration after its scheduled time from 1s to 168h ("2h"), or a local
	// time of day HH:MM in the job's time zone ("06:00": the first such
	// time after the scheduled time); "" for none
	FinishDeadline string `json:"finish_deadline" openapi:"default: \"\", example: \"06:00\""`
	// what a missed finish deadline does besides the alarm: "alarm"
	// (nothing more) or "cancel" (cancel the run)
	DeadlineAction string `json:"deadline_action" openapi:"enum: [alarm, cancel], default: alarm"`
	// A business calendar (docs/schedules.md, "A job on a business
	// calendar"); each run keeps the calendar's id and version.
	//
	// the id of a business calendar (GET /api/v1/calendars): a global one
	// or one of the job's app; 0 for none. Required by a business day in
	// the day of month (BD3, BDL, BD-2)
	CalendarID int64 `json:"calendar_id" openapi:"minimum: 0, default: 0"`
	// what the calendar does to the cron's firings, required with a
	// calendar: "business_days_only" (fire on working days only),
	// "skip_holidays" (fire except on holidays) or "shift" (a firing on a
	// non-working day moves to the next or previous working day at the same
	// local time); a removed firing is recorded as a skipped run with its
	// reason
	CalendarRule string `json:"calendar_rule" openapi:"enum: [\"\", business_days_only, skip_holidays, shift], default: \"\""`
	// where the rule shift moves a firing: "next" (the default) or
	// "previous" working day; only with the rule shift
	CalendarShift string `json:"calendar_shift" openapi:"enum: [\"\", next, previous], default: \"\""`
	// The window of a job (docs/schedules.md, "Windows and one-offs"): a
	// job that will not fire again because of it is completed (Job.State).
	//
	// no firing before this instant (RFC 3339); null for none
	StartAt *time.Time `json:"start_at" openapi:"example: \"2026-12-01T00:00:00Z\""`
	// no firing after this instant (RFC 3339), which must be after
	// start_at; null for none. After it the job is completed
	EndAt *time.Time `json:"end_at" openapi:"example: \"2026-12-31T23:59:59+08:00\""`
	// the job completes after this many successful scheduled runs (cron
	// and catch-up runs; a firing while runs that could reach the number
	// are still active is skipped); 0 for no limit
	MaxRuns int `json:"max_runs" openapi:"minimum: 0, default: 0"`
	// a flexible window (docs/schedules.md, "Jitter window"): each
	// scheduled run starts at its scheduled time plus an offset in [0,
	// window) that depends only on the job's key (app/name) and the scheduled time (the
	// run key stays the scheduled time; start_after on the run). A duration
	// up to 12h and up to the shortest gap between two firings, such as
	// "10m"; "" or "0" for none
	JitterWindow string `json:"jitter_window" openapi:"default: \"\", example: 10m"`
	// a concurrency cap (docs/tenancy.md, "Concurrency caps"): the most
	// slots of the job's runs placed on executors at once (assigned,
	// queued or running); the others wait unplaced, or the run waits
	// pending, until slots end. 0 for no cap; the app's cap applies too
	MaxRunningSlots int `json:"max_running_slots" openapi:"minimum: 0, maximum: 1000000, default: 0"`
	// how urgent the job's runs are (docs/tenancy.md, "Priorities"): where
	// slots wait — for room under a cap, in an executor's queue — more
	// urgent ones start first, and waiting raises a run one level per
	// aging interval (5 minutes by default). A trigger or a backfill may
	// lower it for its runs, never raise it
	Priority string `json:"priority" openapi:"enum: [critical, high, normal, low], default: normal"`
	// Waits (docs/workflows.md, "Waits of a plain job"): a run starts only
	// once the runs of its business date that it waits for have succeeded.
	//
	// runs of the same business date (the run's scheduled day in its time
	// zone) of other jobs ({"job": {"app", "name"}}) or workflows
	// ({"workflow": {"app", "name"}}), app defaulting to the job's, that
	// must have succeeded before a run of this job starts; meanwhile the run
	// stays pending, held with the reason. At most 20; omitted for none. Not
	// for the runs a workflow node creates (the node has its own waits)
	WaitFor []WorkflowWait `json:"wait_for,omitempty" openapi:"maxItems: 20"`
	// only with wait_for: how long after its start time a run waits, a
	// duration from 1ms to 168h such as "2h"; default 24h
	WaitTimeout string `json:"wait_timeout,omitempty" openapi:"example: 2h"`
	// only with wait_for: what a run whose waits timed out does, with a
	// run_wait_timeout alarm: "fail" (the default) or "skip"
	OnTimeout string `json:"on_timeout,omitempty" openapi:"enum: [fail, skip]"`
	// omitted means true; the admin always answers it
	Enabled *bool `json:"enabled" openapi:"default: true"`
}

// Key is "app/name", the identity of a job.
func (d JobDef) Key() string { return d.App + "/" + d.Name }

// JobSpec is a job as clients send it: POST /api/v1/jobs (create), PUT
// /api/v1/jobs/{id} (update), POST /api/v1/jobs/validate.
type JobSpec struct {
	JobDef
	// the jobs triggered once each time a run of this job succeeds
	ChildJobIDs []int64 `json:"child_job_ids" openapi:"maxItems: 20"`
	// required on update: the version read (optimistic lock)
	Version int64 `json:"version"`
}

// Job is a job as the API returns it: its spec and what the admin keeps
// about it.
type Job struct {
	ID int64 `json:"id"`
	JobSpec
	Paused bool `json:"paused"`
	// a pause that ends by itself: the admin resumes the job at this
	// instant, and its misfire policy decides the firings the pause missed
	// (POST /api/v1/jobs/{id}/pause with {"until": ...}); null otherwise
	PausedUntil *time.Time `json:"paused_until"`
	// what the job does now: "scheduled" (it fires), "paused", "disabled",
	// or "completed" (it will not fire again: past its end_at, its
	// max_runs reached, or its one-time @at schedule fired; editing the
	// job plans it again)
	State string `json:"state" openapi:"enum: [scheduled, paused, disabled, completed]"`
	// when the job was completed; null unless state is completed
	CompletedAt *time.Time `json:"completed_at"`
	// why the job was completed (English); "" unless state is completed
	CompletedReason string `json:"completed_reason,omitempty"`
	// CompletedReasonCode is CompletedReason as a message code (for
	// clients that show it in another language; see Run.ErrorCode)
	CompletedReasonCode *Message `json:"completed_reason_code,omitempty"`
	// the workflow whose inline node the job runs: such a job is not
	// listed with the others and changes only with its workflow; absent
	// for an ordinary job
	WorkflowID int64 `json:"workflow_id,omitempty"`
	// the job's circuit breaker when it is open or probing, or has counted
	// failures (docs/failures.md); absent while it is closed with none
	Breaker    *Breaker   `json:"breaker,omitempty"`
	NextFireAt *time.Time `json:"next_fire_at"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	// In the answers of create, update, clone and read of one job (GET
	// /jobs/{id}, not lists), never a refusal - e.g. no executor of the app
	// has shown the job's handler yet (its runs would wait, then fail after
	// --unplaceable-timeout); gone once one has.
	Warnings []string `json:"warnings,omitempty"`
	// WarningCodes are Warnings as message codes, in the same order (for
	// clients that show them in another language; see Run.ErrorCode).
	WarningCodes []Message `json:"warning_codes,omitempty"`
}

// The admin's defaults for the omitted fields of a JobDef.
const (
	DefaultTimeZone           = "UTC"
	DefaultSlots              = 1
	DefaultMisfirePolicy      = "run_once"
	DefaultOverlapPolicy      = "allow"
	DefaultMisfireThresholdMS = 60_000
	DefaultMaxCatchUp         = 10
	DefaultRetryBackoffMS     = 1000
	DefaultRetryBudgetWindow  = "10m" // with retry_budget_percent
	DefaultBreakerCooldown    = "1m"  // with breaker_threshold
	DefaultDeadlineAction     = "alarm"
	DefaultPriority           = "normal"
	DefaultCalendarShift      = "next" // with the calendar rule shift
	DefaultWaitTimeout        = "24h"  // with wait_for (admin/waits.DefaultTimeout)
	DefaultOnTimeout          = "fail" // with wait_for
)

// The states of a job (Job.State).
const (
	JobScheduled = "scheduled"
	JobPaused    = "paused"
	JobDisabled  = "disabled"
	JobCompleted = "completed"
)

// WithDefaults returns d with the defaults in place of omitted (zero)
// fields. Policies keep their spelling (the admin parses them).
func (d JobDef) WithDefaults() JobDef {
	if d.TimeZone == "" && len(d.TimeZones) > 0 {
		d.TimeZone = d.TimeZones[0]
	}
	if len(d.TimeZones) == 1 && d.TimeZones[0] == d.TimeZone {
		d.TimeZones = nil // one zone is time_zone alone
	}
	if d.TimeZone == "" {
		d.TimeZone = DefaultTimeZone
	}
	if d.SlotCount == 0 {
		d.SlotCount = DefaultSlots
	}
	if d.MisfirePolicy == "" {
		d.MisfirePolicy = DefaultMisfirePolicy
	}
	if d.OverlapPolicy == "" {
		d.OverlapPolicy = DefaultOverlapPolicy
	}
	if d.MisfireThresholdMS == 0 {
		d.MisfireThresholdMS = DefaultMisfireThresholdMS
	}
	if d.MaxCatchUp == 0 {
		d.MaxCatchUp = DefaultMaxCatchUp
	}
	if d.RetryBackoffMS == 0 {
		d.RetryBackoffMS = DefaultRetryBackoffMS
	}
	if d.RetryBudgetPercent > 0 && d.RetryBudgetWindow == "" {
		d.RetryBudgetWindow = DefaultRetryBudgetWindow
	}
	if d.BreakerThreshold > 0 && d.BreakerCooldown == "" {
		d.BreakerCooldown = DefaultBreakerCooldown
	}
	if d.DeadlineAction == "" {
		d.DeadlineAction = DefaultDeadlineAction
	}
	if d.Priority == "" {
		d.Priority = DefaultPriority
	}
	if d.CalendarRule == "shift" && d.CalendarShift == "" {
		d.CalendarShift = DefaultCalendarShift
	}
	if len(d.WaitFor) > 0 {
		d.WaitFor = append([]WorkflowWait(nil), d.WaitFor...)
		if d.WaitTimeout == "" {
			d.WaitTimeout = DefaultWaitTimeout
		}
		if d.OnTimeout == "" {
			d.OnTimeout = DefaultOnTimeout
		}
	} else {
		d.WaitFor = nil
	}
	if d.Enabled == nil {
		t := true
		d.Enabled = &t
	}
	return d
}

// The states of a job's circuit breaker (Breaker.State).
const (
	BreakerClosed  = "closed"
	BreakerOpen    = "open"
	BreakerProbing = "probing"
)

// Breaker is the state of a job's circuit breaker (docs/failures.md,
// "Retry budgets and circuit breakers").
type Breaker struct {
	// "closed" (failures are counted), "open" (the job's new runs and
	// retries are held until probe_at) or "probing" (one attempt, the
	// probe, runs; its success closes the breaker, its failure opens it
	// again)
	State string `json:"state" openapi:"enum: [closed, open, probing]"`
	// consecutive retryable, timeout or lost failures counted
	Failures int `json:"failures"`
	// when it opened; null while closed
	OpenedAt *time.Time `json:"opened_at"`
	// why it opened (English); "" while closed
	Reason string `json:"reason,omitempty"`
	// Reason as a message code (see Run.ErrorCode)
	ReasonCode *Message `json:"reason_code,omitempty"`
	// when the probe goes (open), null otherwise
	ProbeAt *time.Time `json:"probe_at"`
	// the probe attempt's token while probing, 0 otherwise
	ProbeToken int64 `json:"probe_token,omitempty"`
}
