package apitypes

import (
	"encoding/json"
	"time"
)

// A workflow (issue 22, docs/workflows.md) is written in three layers, as
// a job is:
//
//	WorkflowDef   the definition: what a workflow file states
//	WorkflowSpec  WorkflowDef + version: what a client sends (create, update)
//	Workflow      WorkflowSpec + what the admin keeps: what the API returns
//
// The nodes and edges are those of admin/workflow.Definition, whose rules
// (start rules, failure policies, limits) the admin applies.

// WorkflowJobRef references an existing job: by id, or by name in app
// (default: the workflow's app).
type WorkflowJobRef struct {
	ID   int64  `json:"id,omitempty"`
	App  string `json:"app,omitempty"`
	Name string `json:"name,omitempty"`
}

// WorkflowNode is one step of a workflow: a job (Job), or an inline
// handler with its params and slots.
type WorkflowNode struct {
	// Key names the node in its workflow; edges refer to it.
	Key       string          `json:"key"`
	Job       *WorkflowJobRef `json:"job,omitempty"`
	Handler   string          `json:"handler,omitempty"`
	Params    string          `json:"params,omitempty"`
	SlotCount int             `json:"slots,omitempty"` // inline nodes: default 1
	// RetryMax (0-100), RetryBackoffMS and TimeoutMS: an inline node's
	// retries and timeout, as a job's; a job node has its job's.
	RetryMax       int   `json:"retry_max,omitempty"`
	RetryBackoffMS int64 `json:"retry_backoff_ms,omitempty"`
	TimeoutMS      int64 `json:"timeout_ms,omitempty"`
	// Start is the start rule: all_success (default), all_done or
	// one_success.
	Start string `json:"start,omitempty"`
	// WaitFor are runs of the same business date, of other jobs or
	// workflows, that must have succeeded before the node starts.
	WaitFor []WorkflowWait `json:"wait_for,omitempty"`
	// WaitTimeout bounds the wait (a duration such as 2h30m; default 24h
	// when WaitFor is set, at most 168h); OnTimeout is fail (default) or
	// skip. Only with WaitFor.
	WaitTimeout string `json:"wait_timeout,omitempty"`
	OnTimeout   string `json:"on_timeout,omitempty"`
}

// WorkflowWait names what a workflow node or a job (JobDef.WaitFor) waits
// for: the run of the same business date of a job or of a workflow (one of
// the two), by name in app (default: the workflow's or the job's app).
type WorkflowWait struct {
	Job      *WorkflowNameRef `json:"job,omitempty"`
	Workflow *WorkflowNameRef `json:"workflow,omitempty"`
}

// WorkflowNameRef names a job or a workflow in app (default: the
// workflow's or the waiting job's app).
type WorkflowNameRef struct {
	App  string `json:"app,omitempty"`
	Name string `json:"name"`
}

// WorkflowEdge says that To waits for From (per To's start rule).
type WorkflowEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// WorkflowDef is a workflow's definition. App and name identify it.
type WorkflowDef struct {
	App         string `json:"app"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Cron fires the workflow on a schedule (the syntax of a job's cron);
	// "" for a workflow triggered by hand or through the API only.
	Cron string `json:"cron,omitempty"`
	// TimeZone of the schedule and of the business date of each run
	// (default UTC).
	TimeZone string `json:"time_zone,omitempty"`
	// Calendar names a business calendar of the app, or a global one; the
	// cron's firings follow it per CalendarRule (a job's rules:
	// business_days_only, the default with a calendar, skip_holidays or
	// shift) and CalendarShift (with shift: next, the default, or
	// previous).
	Calendar      string `json:"calendar,omitempty"`
	CalendarRule  string `json:"calendar_rule,omitempty"`
	CalendarShift string `json:"calendar_shift,omitempty"`
	// Enabled defaults to true; a disabled workflow does not fire.
	Enabled *bool `json:"enabled,omitempty"`
	// FailurePolicy is stop (default) or continue.
	FailurePolicy string         `json:"failure_policy,omitempty"`
	Nodes         []WorkflowNode `json:"nodes,omitempty"`
	Edges         []WorkflowEdge `json:"edges,omitempty"`
}

// Key is "app/name".
func (d WorkflowDef) Key() string { return d.App + "/" + d.Name }

// State is what the workflow does now, in a job's words (Workflow.State):
// JobScheduled (it fires; Enabled omitted means enabled) or JobDisabled. A
// workflow is neither paused nor completed.
func (d WorkflowDef) State() string {
	if d.Enabled != nil && !*d.Enabled {
		return JobDisabled
	}
	return JobScheduled
}

// WithDefaults returns d with the admin's defaults in place of omitted
// fields (the time zone UTC, enabled, the failure policy stop, the
// calendar rule business_days_only with a calendar and the shift next with
// the rule shift, each node's
// start rule all_success, an inline node's slots 1, a waiting node's
// timeout 24h and on_timeout fail), so that a definition
// compares equal to the one the admin stores for it. The slices are copied.
func (d WorkflowDef) WithDefaults() WorkflowDef {
	if d.TimeZone == "" {
		d.TimeZone = "UTC"
	}
	if d.Enabled == nil {
		on := true
		d.Enabled = &on
	} else {
		on := *d.Enabled
		d.Enabled = &on
	}
	if d.FailurePolicy == "" {
		d.FailurePolicy = "stop"
	}
	if d.Calendar != "" && d.CalendarRule == "" {
		d.CalendarRule = "business_days_only"
	}
	if d.CalendarRule == "shift" && d.CalendarShift == "" {
		d.CalendarShift = DefaultCalendarShift
	}
	nodes := make([]WorkflowNode, len(d.Nodes))
	for i, n := range d.Nodes {
		if n.Start == "" {
			n.Start = "all_success"
		}
		if n.Job == nil && n.SlotCount == 0 {
			n.SlotCount = 1
		}
		if n.Job != nil {
			ref := *n.Job
			n.Job = &ref
		}
		if len(n.WaitFor) > 0 {
			n.WaitFor = append([]WorkflowWait(nil), n.WaitFor...)
			if n.WaitTimeout == "" {
				n.WaitTimeout = DefaultWaitTimeout
			}
			if n.OnTimeout == "" {
				n.OnTimeout = DefaultOnTimeout
			}
		} else {
			n.WaitFor = nil
		}
		nodes[i] = n
	}
	d.Nodes = nodes
	if len(d.Edges) > 0 {
		d.Edges = append([]WorkflowEdge(nil), d.Edges...)
	} else {
		d.Edges = nil
	}
	return d
}

// WorkflowSpec creates or replaces a workflow (POST /api/v1/workflows, PUT
// /api/v1/workflows/{id}). Version is required when replacing: the version
// read (optimistic lock).
type WorkflowSpec struct {
	WorkflowDef
	Version int64 `json:"version,omitempty"`
}

// Workflow is a workflow as the API returns it; Nodes and Edges only from
// GET /api/v1/workflows/{id} and the answers of a create or an update.
type Workflow struct {
	WorkflowSpec
	ID        int64 `json:"id"`
	NodeCount int   `json:"node_count"`
	// State is WorkflowDef.State: scheduled or disabled, the words of a
	// job's state; answered, never read.
	State      string     `json:"state"`
	NextFireAt *time.Time `json:"next_fire_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	CreatedBy  string     `json:"created_by"`
	UpdatedAt  time.Time  `json:"updated_at"`
	UpdatedBy  string     `json:"updated_by"`
}

// WorkflowRun is one run of a workflow (GET /api/v1/workflows/{id}/runs),
// keyed by its workflow and RunKey: the scheduled instant of a firing, or
// "date:" and the business date of a backfill.
type WorkflowRun struct {
	ID              int64     `json:"id"`
	WorkflowID      int64     `json:"workflow_id"`
	App             string    `json:"app"`
	RunKey          string    `json:"run_key"`
	WorkflowVersion int64     `json:"workflow_version"`
	ScheduledAt     time.Time `json:"scheduled_at"`
	// BusinessDate is the run's day in the workflow's zone (YYYY-MM-DD),
	// passed to every node.
	BusinessDate string `json:"business_date"`
	Trigger      string `json:"trigger"`
	Status       string `json:"status"`
	Params       string `json:"params"`
	// Reason says why the run ended so; ReasonCode and ReasonArgs say it as
	// a code with arguments, for the console's languages.
	Reason     string         `json:"reason,omitempty"`
	ReasonCode string         `json:"reason_code,omitempty"`
	ReasonArgs map[string]any `json:"reason_args,omitempty"`
	Reruns     int            `json:"reruns"`
	CreatedBy  string         `json:"created_by,omitempty"`
	CreatedAt  time.Time      `json:"created_at"`
	StartedAt  *time.Time     `json:"started_at,omitempty"`
	FinishedAt *time.Time     `json:"finished_at,omitempty"`
}

// WorkflowTrigger starts a run of a workflow by hand or by API (POST
// /api/v1/workflows/{id}/trigger); every field is optional.
type WorkflowTrigger struct {
	// RunKey makes the request idempotent: a second trigger with the same
	// key answers the run the first created (at most 64 bytes; default the
	// instant of the request, so that two requests make two runs).
	RunKey string `json:"run_key,omitempty"`
	// BusinessDate (YYYY-MM-DD) is passed to every node; default today in
	// the workflow's zone.
	BusinessDate string `json:"business_date,omitempty"`
	// Params, a JSON object, is laid over each node job's params (JSON
	// objects) for this run; at most 64 KiB.
	Params string `json:"params,omitempty"`
}

// WorkflowNodeRun is the run of one node in a workflow run, with the
// status of the job run it created.
type WorkflowNodeRun struct {
	ID      int64  `json:"id"`
	NodeKey string `json:"node_key"`
	Rerun   int    `json:"rerun"`
	Status  string `json:"status"`
	// JobRunID is the job run the node created (absent for a skipped node
	// or one that failed without a job run); JobRunStatus its status.
	JobRunID     int64          `json:"job_run_id,omitempty"`
	JobRunStatus string         `json:"job_run_status,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	ReasonCode   string         `json:"reason_code,omitempty"`
	ReasonArgs   map[string]any `json:"reason_args,omitempty"`
	CreatedAt    time.Time      `json:"created_at"`
	FinishedAt   *time.Time     `json:"finished_at,omitempty"`
	// Result is the result of the node's job run (RunDetail.Result), which
	// its children receive under upstream in their params; absent when it
	// has none, or when the job run is of an app the reader may not see
	// (ResultHidden says so).
	Result json.RawMessage `json:"result,omitempty"`
	// ResultHidden says why Result is absent when the node ran a job of
	// another app that the reader may not see; empty otherwise.
	ResultHidden string `json:"result_hidden,omitempty"`
}

// WorkflowRunDetail is one workflow run with its node runs (GET
// /api/v1/workflow-runs/{id}), every rerun's, by rerun then creation.
type WorkflowRunDetail struct {
	Run   WorkflowRun       `json:"run"`
	Nodes []WorkflowNodeRun `json:"nodes"`
}

// WorkflowBackfill asks for the runs of every business date in [From, To]
// (YYYY-MM-DD, in the workflow's zone; at most 366 dates) (POST
// /api/v1/workflows/{id}/backfill). Each is keyed date:YYYY-MM-DD, so a date
// that has a run keeps it. The leader starts at most Parallel (1-20,
// default 1) at a time, oldest date first or NewestFirst; OnlyMissing skips
// the dates with a succeeded run; DryRun lists what would be done and
// creates nothing. Params is laid over each node job's params, as for a
// trigger.
type WorkflowBackfill struct {
	From        string `json:"from"`
	To          string `json:"to"`
	NewestFirst bool   `json:"newest_first,omitempty"`
	Parallel    int    `json:"parallel,omitempty"`
	OnlyMissing bool   `json:"only_missing,omitempty"`
	DryRun      bool   `json:"dry_run,omitempty"`
	Params      string `json:"params,omitempty"`
	// Priority of the runs of a job backfill: the job's when omitted, or
	// lower (docs/tenancy.md, "Priorities"); a workflow backfill refuses it.
	Priority string `json:"priority,omitempty"`
}

// WorkflowBackfillDate is what a backfill does with one date: create (a
// new run), exists (the date's run is kept) or succeeded (only missing
// dates: a run of the date succeeded). RunID is the run created or found.
type WorkflowBackfillDate struct {
	Date   string `json:"date"`
	Action string `json:"action"`
	RunID  int64  `json:"run_id,omitempty"`
}

// WorkflowBackfillPlan answers a backfill: its id (0 for a dry run), and
// each date in the order the runs start.
type WorkflowBackfillPlan struct {
	BackfillID int64                  `json:"backfill_id,omitempty"`
	DryRun     bool                   `json:"dry_run"`
	Created    int                    `json:"created"`
	Dates      []WorkflowBackfillDate `json:"dates"`
}

// WorkflowRerun asks to run a finished workflow run again from the nodes
// From (POST /api/v1/workflow-runs/{id}/rerun): they and everything
// downstream of them, and the nodes the failure policy stop skipped, run
// again; the other nodes keep their state.
type WorkflowRerun struct {
	From []string `json:"from"`
}

// WorkflowRerunDone answers a rerun: the run, running again, and the nodes
// that run again.
type WorkflowRerunDone struct {
	Run   WorkflowRun `json:"run"`
	Nodes []string    `json:"nodes"`
}

// WorkflowCancelled answers the cancel of a workflow run (POST
// /api/v1/workflow-runs/{id}/cancel): the run, cancelled, and the job runs
// of its nodes that were cancelled with it.
type WorkflowCancelled struct {
	Run     WorkflowRun `json:"run"`
	JobRuns []int64     `json:"job_runs"`
}
