package store

import (
	"database/sql"
	"slices"
	"strings"

	"github.com/shardjob/shardjob/admin/msg"
)

// Run statuses. Transitions are guarded by the expected current status
// (see TransitionRun), so concurrent writers cannot overwrite each other:
//
//	pending → running → succeeded | failed | partially_failed | cancelled
//	pending → cancelled | skipped
const (
	RunPending         = "pending"
	RunRunning         = "running"
	RunSucceeded       = "succeeded"
	RunFailed          = "failed"
	RunPartiallyFailed = "partially_failed"
	RunCancelled       = "cancelled"
	RunSkipped         = "skipped"
)

// Trigger kinds of a run.
const (
	TriggerCron    = "cron"
	TriggerManual  = "manual"
	TriggerCatchUp = "catch_up"
	TriggerRetry   = "retry"
	TriggerChild   = "child"
	TriggerAPI     = "api"
)

// Slot attempt statuses.
const (
	AttemptAssigned  = "assigned"
	AttemptRunning   = "running"
	AttemptSucceeded = "succeeded"
	AttemptFailed    = "failed"
	AttemptCancelled = "cancelled"
	AttemptLost      = "lost"  // superseded: its executor stopped heartbeating
	AttemptMoved     = "moved" // superseded before it started: given to an idle executor
)

// Slot states: the one vocabulary the API, the console and the CLI use for
// an attempt (apitypes.Attempt.Status). An attempt stored as assigned is one of
// three states, by how far it got; the others are its stored status.
//
//	pending    waiting for an executor (not placed yet, or placed again)
//	assigned   placed on an executor and sent, not acknowledged yet
//	queued     the executor has it and waits for free capacity to start it
//	running, succeeded, failed, cancelled
//	lost       its executor went silent or no longer had it; a new attempt replaced it
//	moved      given to an idle executor before it started; a new attempt replaced it
const (
	SlotPending = "pending"
	SlotQueued  = "queued"
)

// SlotState is the slot state (see SlotPending) of attempt a.
func SlotState(a Attempt) string {
	switch {
	case a.Status != AttemptAssigned:
		return a.Status
	case !a.ExecutorID.Valid:
		return SlotPending
	case a.Acked:
		return SlotQueued
	}
	return AttemptAssigned
}

// Executor states.
const (
	ExecutorOnline   = "online"
	ExecutorDraining = "draining"
	ExecutorLost     = "lost"
	ExecutorGone     = "gone"
)

// Roles of console users.
const (
	RoleAdmin    = "admin"
	RoleOperator = "operator"
	RoleViewer   = "viewer"
)

// Job is a job definition.
type Job struct {
	ID          int64  `db:"id"`
	App         string `db:"app"`
	Name        string `db:"name"`
	Description string `db:"description"`
	Handler     string `db:"handler"`
	CronExpr    string `db:"cron_expr"`
	TimeZone    string `db:"time_zone"`
	// TimeZones is the job's zones, comma-separated in list order, when it
	// has more than one (TimeZone is then the first); "" otherwise
	// (docs/schedules.md, "Several zones").
	TimeZones      string `db:"time_zones"`
	MisfirePolicy  string `db:"misfire_policy"`
	OverlapPolicy  string `db:"overlap_policy"`
	MisfireMS      int64  `db:"misfire_threshold_ms"`
	MaxCatchUp     int    `db:"max_catch_up"`
	SlotCount      int    `db:"slot_count"`
	SlotParams     string `db:"slot_params"`
	Params         string `db:"params"`
	TimeoutMS      int64  `db:"timeout_ms"`
	RetryMax       int    `db:"retry_max"`
	RetryBackoffMS int64  `db:"retry_backoff_ms"`
	RecordsPolicy
	JobBreaker
	JobDeadlines
	JobCalendar
	JobWindow
	JobWaits
	// JitterWindow is the job's jitter window as it states it
	// (schedule.ParseJitterWindow): "" for none. Each scheduled run starts
	// no earlier than its scheduled time plus schedule.JitterOffset
	// (jobrules.NewRun sets the run's StartAfter).
	JitterWindow string `db:"jitter_window"`
	// MaxRunningSlots caps the slots of the job's runs placed on executors
	// at once (assigned, queued or running); NULL: no cap
	// (docs/tenancy.md, "Concurrency caps").
	MaxRunningSlots sql.NullInt64 `db:"max_running_slots"`
	// Priority is the job's priority (a protocol.Priority; normal by
	// default): its runs' unless a trigger lowered one.
	Priority    int           `db:"priority"`
	Enabled     bool          `db:"enabled"`
	Paused      bool          `db:"paused"`
	PauseUntil  sql.NullInt64 `db:"pause_until"`   // a pause that ends by itself then (Unix ms); NULL otherwise
	ChildJobIDs string        `db:"child_job_ids"` // comma-separated ids of jobs triggered when a run succeeds
	NextFireAt  sql.NullInt64 `db:"next_fire_at"`
	CreatedAt   int64         `db:"created_at"`
	UpdatedAt   int64         `db:"updated_at"`
	Version     int64         `db:"version"`
	// WorkflowID is the workflow whose inline node the job runs (NULL: an
	// ordinary job). Such a job is written with its workflow's definition
	// (SyncInlineJobs), not listed with the ordinary jobs, not referenced
	// by other nodes or as a child, and deleted with its workflow.
	WorkflowID sql.NullInt64 `db:"workflow_id"`
}

// RecordsPolicy is the records policy (sdk/records) a job imposes on its
// handler: empty / 0 fields leave that choice to the handler's Config. A job
// keeps it (Job), each of its runs keeps a copy made when the run is created
// (NewRun, the columns of job_run), and the attempts sent to executors
// carry the run's (DispatchSlot), which admin/dispatch turns into the wire's
// protocol.RecordsPolicy. The one type of these rows (sqlx reads an
// embedded struct's columns as the outer struct's); the fields and columns
// have the names of the API's (apitypes.JobDef).
type RecordsPolicy struct {
	DedupScope        string `db:"dedup_scope"`         // "run", "job" or a scope name with placeholders ("settle:{date}")
	UncertainPolicy   string `db:"uncertain_policy"`    // "retry" or "skip"
	RecordMaxAttempts int    `db:"record_max_attempts"` // how many times a record may be handed to the handler
}

// IsZero reports whether p leaves every choice to the handler.
func (p RecordsPolicy) IsZero() bool { return p == RecordsPolicy{} }

// Run is one firing of a job.
type Run struct {
	ID             int64         `db:"id"`
	JobID          int64         `db:"job_id"`
	JobName        string        `db:"job_name"`
	App            string        `db:"app"`
	ScheduledAt    int64         `db:"scheduled_at"`
	TriggerKind    string        `db:"trigger_kind"`
	Status         string        `db:"status"`
	Params         string        `db:"params"`
	SlotCount      int           `db:"slot_count"`
	SlotsSucceeded int           `db:"slots_succeeded"`
	SlotsFailed    int           `db:"slots_failed"`
	Epoch          int64         `db:"epoch"`
	CreatedAt      int64         `db:"created_at"`
	StartedAt      sql.NullInt64 `db:"started_at"`
	FinishedAt     sql.NullInt64 `db:"finished_at"`
	Error          string        `db:"error"`         // in English
	ErrorMsg       msg.Msg       `db:"error_msg"`     // the same as a code (zero for older rows)
	ParentRunID    sql.NullInt64 `db:"parent_run_id"` // set on runs triggered as a child job
	PredictedMS    sql.NullInt64 `db:"predicted_ms"`  // makespan the placement predicted
	// FirstStartedAt is when the first slot started on an executor (read by
	// Run and Runs only); StartedAt is when the run was assigned.
	FirstStartedAt sql.NullInt64 `db:"first_started_at"`
	RunDeadlines
	// The calendar the run was decided with (0 and "": none): its id and
	// version (Calendar.Version) when the run was created.
	CalendarID      int64  `db:"calendar_id"`
	CalendarVersion string `db:"calendar_version"`
	// ShiftedFrom is the instant (Unix ms) the cron expression gave for a
	// firing the calendar rule shift moved to another day (ScheduledAt, the
	// run key, is the moved instant); NULL otherwise.
	ShiftedFrom sql.NullInt64 `db:"shifted_from"`
	// TimeZone is the zone of the firing: the job's zone, or for a job
	// with several zones the first of them that fires at ScheduledAt.
	TimeZone string `db:"time_zone"`
	// StartAfter is the instant (Unix ms) before which the leader does not
	// start the run: its scheduled time plus its job's jitter offset (see
	// Job.JitterWindow); 0 for a run that may start at its scheduled time.
	StartAfter int64 `db:"start_after"`
	// Workflow is the workflow context of a workflow node's run
	// (NewRun.Workflow); read by Run only, NULL otherwise.
	Workflow sql.NullString `db:"workflow"`
	// JobDeleted: the run's job was deleted (Run, Runs); JobName and
	// App are the names it had.
	JobDeleted bool `db:"job_deleted"`
}

// Zones is the job's zones in list order: TimeZones split, or TimeZone
// alone.
func (j Job) Zones() []string {
	if j.TimeZones == "" {
		return []string{j.TimeZone}
	}
	return strings.Split(j.TimeZones, ",")
}

// StartsAt is the instant (Unix ms) the run may start: StartAfter, or the
// scheduled time for a run without jitter.
func (r Run) StartsAt() int64 { return max(r.StartAfter, r.ScheduledAt) }

// JobCalendar is a job's business calendar (docs/schedules.md): the
// calendar's id (0: none) and the rule (calendar.Rule) with its direction
// (calendar.Direction, only with the rule shift).
type JobCalendar struct {
	CalendarID    int64  `db:"calendar_id"`
	CalendarRule  string `db:"calendar_rule"`
	CalendarShift string `db:"calendar_shift"`
}

// JobWindow is when a job may fire (docs/schedules.md, "Windows and
// one-offs"): no firing before StartAt or after EndAt (Unix ms, NULL for
// none), none after MaxRuns successful scheduled runs (0: no limit). A job
// that will not fire again for one of these reasons, or because its @at
// firing is past, is completed: CompletedAt is when that was found and
// CompletedMsg why; an edit plans the job again (and may complete it).
type JobWindow struct {
	StartAt      sql.NullInt64 `db:"start_at"`
	EndAt        sql.NullInt64 `db:"end_at"`
	MaxRuns      int           `db:"max_runs"`
	CompletedAt  sql.NullInt64 `db:"completed_at"`
	CompletedMsg msg.Msg       `db:"completed_msg"`
}

// Completed reports whether the job is completed.
func (w JobWindow) Completed() bool { return w.CompletedAt.Valid }

// HasCalendar reports whether the job fires by a business calendar.
func (c JobCalendar) HasCalendar() bool { return c.CalendarID != 0 }

// JobWaits are a job's waits for other jobs' and workflows' runs of each
// run's business date (docs/workflows.md, "Waits of a plain job"; the
// scheduler holds a run until they succeeded, admin/scheduler
// start_waits.go).
type JobWaits struct {
	// WaitFor is a JSON array of admin/waits.Ref (the shape of a workflow
	// node's wait_for); NULL for none.
	WaitFor sql.NullString `db:"wait_for"`
	// WaitTimeout (a duration) and OnTimeout (fail or skip), as the spec
	// states them with its defaults; "" without waits.
	WaitTimeout string `db:"wait_timeout"`
	OnTimeout   string `db:"on_timeout"`
}

// JobBreaker is a job's retry budget and circuit breaker as it states them
// (durations as written, "" for the default; docs/failures.md, "Retry
// budgets and circuit breakers"): admin/jobrules reads them.
type JobBreaker struct {
	RetryBackoffMax    string `db:"retry_backoff_max"`
	RetryBudgetPercent int    `db:"retry_budget_percent"`
	RetryBudgetWindow  string `db:"retry_budget_window"`
	BreakerThreshold   int    `db:"breaker_threshold"`
	BreakerCooldown    string `db:"breaker_cooldown"`
}

// JobDeadlines are a job's deadlines as it states them
// (schedule.ParseStartDeadline, ParseFinishDeadline): "" for none; the action
// is DeadlineAlarm or DeadlineCancel. Each run keeps the instants they give
// (RunDeadlines, computed by admin/jobrules).
type JobDeadlines struct {
	StartDeadline  string `db:"start_deadline"`
	FinishDeadline string `db:"finish_deadline"`
	DeadlineAction string `db:"deadline_action"`
}

// Deadline actions of a job (and its runs).
const (
	DeadlineAlarm  = "alarm"  // a missed finish deadline raises run_deadline_missed
	DeadlineCancel = "cancel" // and cancels the run
)

// RunDeadlines are the deadlines a run keeps, as instants (Unix ms) computed
// from its job's deadlines when it is created (jobrules.NewRun,
// jobrules.RunDeadlines), with the job's deadline action. DeadlineCheckAt is the earliest deadline the leader has
// not checked yet (NULL once both are checked, or for a run without
// deadlines): the leader's check reads runs by it (idx_run_deadline_check).
type RunDeadlines struct {
	StartDeadlineAt  sql.NullInt64 `db:"start_deadline_at"`
	FinishDeadlineAt sql.NullInt64 `db:"finish_deadline_at"`
	DeadlineAction   string        `db:"deadline_action"`
	DeadlineCheckAt  sql.NullInt64 `db:"deadline_check_at"`
}

// Attempt is one attempt of one slot; its ID is the fencing token.
type Attempt struct {
	Token        int64         `db:"id"` // the attempt's id, its fencing token
	RunID        int64         `db:"run_id"`
	Slot         int           `db:"slot"`
	Attempt      int           `db:"attempt"`
	ExecutorID   sql.NullInt64 `db:"executor_id"`
	Status       string        `db:"status"`
	Current      bool          `db:"current"`
	Acked        bool          `db:"acked"`
	DispatchedAt sql.NullInt64 `db:"dispatched_at"`
	LeaseUntil   sql.NullInt64 `db:"lease_until"`
	StartedAt    sql.NullInt64 `db:"started_at"`
	FinishedAt   sql.NullInt64 `db:"finished_at"`
	Processed    int64         `db:"processed"`
	Skipped      int64         `db:"skipped"`
	Failed       int64         `db:"failed"`
	Uncertain    int64         `db:"uncertain"`
	Error        string        `db:"error"`     // in English, or the handler's own text
	ErrorMsg     msg.Msg       `db:"error_msg"` // an admin's reason as a code (zero for a handler's error)
	// Failures counts the failed attempts of the slot before this one (since
	// the run started or was last retried by hand); lost and moved attempts
	// do not count.
	Failures int `db:"failures"`
	// ErrorClass is how the attempt ended when it did not succeed
	// (protocol.ClassPermanent, …; docs/failures.md); '' for a succeeded,
	// unfinished or moved attempt and for attempts older than the column.
	// Read by Store.Attempts (the run's page) only.
	ErrorClass string `db:"error_class"`
	// ExecutorInstance is the instance id of ExecutorID, read by
	// Store.Attempts (the run's page) only.
	ExecutorInstance string `db:"executor_instance"`
}

// Executor is a registered executor instance.
type Executor struct {
	ID            int64   `db:"id"`
	InstanceID    string  `db:"instance_id"`
	App           string  `db:"app"`
	Address       string  `db:"address"`
	Capacity      int     `db:"capacity"`
	Speed         float64 `db:"speed"` // measured: 1 = as fast as the cost model, 0.5 = half as fast
	Version       string  `db:"version"`
	Handlers      string  `db:"handlers"`
	State         string  `db:"state"`
	RegisteredAt  int64   `db:"registered_at"`
	LastHeartbeat int64   `db:"last_heartbeat"`
	// DrainRequested: an operator asked that it get no new slots and give
	// back its queued ones (SetDrain).
	DrainRequested bool `db:"drain_requested"`
	// Protocol is how the admin talks to it: ProtocolShardjob or
	// ProtocolXXLJob (an unchanged XXL-JOB executor, admin/xxljob).
	Protocol string `db:"protocol"`
	// Incarnation identifies the process behind the instance, new at each
	// start ("" before its first heartbeat that carried one). Only
	// ExecutorByInstance reads it.
	Incarnation string `db:"incarnation"`
}

// User is a console user.
type User struct {
	ID           int64  `db:"id"`
	Username     string `db:"username"`
	PasswordHash string `db:"password_hash"`
	Role         string `db:"role"`
	// Apps limits the user to these apps, comma separated ("" = every app;
	// see AppAllowed). Admins always have every app.
	Apps      string `db:"apps"`
	CreatedAt int64  `db:"created_at"`
	// Source is where the user signs in: "local" (a password here),
	// "oidc" or "ldap" (admin/sso).
	Source string `db:"source"`
	// Subject is the directory's lasting id of a directory user (the OIDC
	// sub, the LDAP DN); empty for local users.
	Subject string `db:"subject"`
	Email   string `db:"email"`
	// CheckedAt is when the directory last answered for the user (Unix
	// ms; 0 for local users), RecheckAt when an admin last began to ask.
	CheckedAt int64 `db:"checked_at"`
	RecheckAt int64 `db:"recheck_at"`
	// Refused says why a directory user may no longer sign in or use their
	// sessions and API keys ("" = not refused); a sign-in that maps them
	// again clears it.
	Refused string `db:"refused"`
}

// AppList returns the apps the user is limited to (nil: every app).
func (u User) AppList() []string {
	if u.Apps == "" || u.Role == "admin" {
		return nil
	}
	return strings.Split(u.Apps, ",")
}

// AppAllowed reports whether the user may see and act on objects of app.
func (u User) AppAllowed(app string) bool {
	list := u.AppList()
	return list == nil || slices.Contains(list, app)
}
