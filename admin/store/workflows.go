package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/shardjob/shardjob/admin/msg"
)

// Workflow is a stored workflow (issue 22; admin/workflow holds its rules).
// Definition is the JSON of its admin/workflow.Definition with the defaults
// applied: nodes, edges and failure policy, validated as a whole by the API
// before it is stored. The columns beside it are what the scheduler selects
// on and the lists show; FailurePolicy and NodeCount repeat the
// definition's. Version goes up by one at every update (the optimistic lock
// of edits, and the key of WorkflowDefinition).
type Workflow struct {
	ID          int64  `db:"id"`
	App         string `db:"app"`
	Name        string `db:"name"`
	Description string `db:"description"`
	CronExpr    string `db:"cron_expr"` // "": triggered by hand or API only
	TimeZone    string `db:"time_zone"`
	Calendar    string `db:"calendar"` // a business calendar's name, "" for none
	// CalendarRule and CalendarShift are a job's (JobCalendar), for the
	// calendar named: "" without one.
	CalendarRule  string        `db:"calendar_rule"`
	CalendarShift string        `db:"calendar_shift"`
	Enabled       bool          `db:"enabled"`
	FailurePolicy string        `db:"failure_policy"`
	Definition    string        `db:"definition"` // "" in lists (WorkflowsOfApps)
	NodeCount     int           `db:"node_count"`
	Version       int64         `db:"version"`
	NextFireAt    sql.NullInt64 `db:"next_fire_at"`
	CreatedAt     int64         `db:"created_at"`
	CreatedBy     string        `db:"created_by"`
	UpdatedAt     int64         `db:"updated_at"`
	UpdatedBy     string        `db:"updated_by"`
	// Inline are the jobs of the definition's inline nodes, written with
	// it by CreateWorkflow and UpdateWorkflow (SyncInlineJobs); not read
	// back (WorkflowJobs).
	Inline []InlineJob `db:"-"`
}

// InlineJob is the job an inline node runs through: Job holds its
// definition (handler, params, slots and the job defaults); its app, name,
// owner and enabled flag are set by the store.
type InlineJob struct {
	Node string
	Job  Job
}

// InlineJobName is the name of the job of inline node key of workflow id:
// "@<id>/<key>". '@' and '/' are outside the name rule of jobs, so it
// never clashes with an ordinary job's name.
func InlineJobName(workflowID int64, key string) string {
	return fmt.Sprintf("@%d/%s", workflowID, key)
}

// syncInlineJobs makes the jobs workflow w.ID owns those of w.Inline: each
// created or replaced (its version bumped), those of nodes no longer
// inline deleted. In the transaction that writes the definition.
func (s *Store) syncInlineJobs(ctx context.Context, tx *sqlx.Tx, w Workflow) error {
	have, err := s.q.JobsOfWorkflow(ctx, tx, w.ID)
	if err != nil {
		return fmt.Errorf("jobs of workflow %d: %w", w.ID, err)
	}
	byName := make(map[string]Job, len(have))
	for _, j := range have {
		byName[j.Name] = j
	}
	for _, in := range w.Inline {
		j := in.Job
		j.App, j.Name, j.Enabled = w.App, InlineJobName(w.ID, in.Node), true
		j.WorkflowID = sql.NullInt64{Int64: w.ID, Valid: true}
		j.CronExpr, j.ChildJobIDs, j.NextFireAt = "", "", sql.NullInt64{}
		old, ok := byName[j.Name]
		delete(byName, j.Name)
		if !ok {
			id, err := s.q.JobInsert(ctx, tx, j)
			if err != nil {
				return fmt.Errorf("workflow %d: job of inline node %s: %w", w.ID, in.Node, err)
			}
			if err := s.fillPartition(ctx, tx, id); err != nil {
				return fmt.Errorf("workflow %d: job of inline node %s: %w", w.ID, in.Node, err)
			}
			continue
		}
		j.ID, j.Version = old.ID, old.Version
		if _, err := s.q.JobUpdate(ctx, tx, j); err != nil {
			return fmt.Errorf("workflow %d: job of inline node %s: %w", w.ID, in.Node, err)
		}
	}
	for _, j := range byName {
		if _, err := s.q.JobDelete(ctx, tx, j.ID); err != nil {
			return fmt.Errorf("workflow %d: delete job %s of a node no longer inline: %w", w.ID, j.Name, err)
		}
	}
	return nil
}

// WorkflowJobs returns the jobs of workflow id's inline nodes, by id.
func (s *Store) WorkflowJobs(ctx context.Context, id int64) ([]Job, error) {
	out, err := s.q.JobsOfWorkflow(ctx, s.db, id)
	if err != nil {
		return nil, fmt.Errorf("jobs of workflow %d: %w", id, err)
	}
	return out, nil
}

// CreateWorkflow inserts w with version 1, and that version's definition
// (WorkflowDefinition), in one transaction, and returns its id. A taken
// (app, name) is ErrConflict. UpdatedBy defaults to CreatedBy.
func (s *Store) CreateWorkflow(ctx context.Context, w Workflow) (int64, error) {
	if w.UpdatedBy == "" {
		w.UpdatedBy = w.CreatedBy
	}
	var id int64
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		id, err = s.q.WorkflowInsert(ctx, tx, w)
		if isDuplicate(err) {
			return conflictf("workflow %s/%s already exists", w.App, w.Name)
		}
		if err != nil {
			return fmt.Errorf("create workflow %s/%s: %w", w.App, w.Name, err)
		}
		w.ID = id
		if _, err := s.q.AppEnsure(ctx, tx, w.App); err != nil {
			return fmt.Errorf("ensure app %s: %w", w.App, err)
		}
		if err := s.syncInlineJobs(ctx, tx, w); err != nil {
			return err
		}
		if err := s.auditFrom(ctx, tx, AuditWorkflows, id); err != nil {
			return err
		}
		return s.insertWorkflowVersion(ctx, tx, id, 1, w.Definition, w.CreatedBy)
	})
	return id, err
}

func (s *Store) insertWorkflowVersion(ctx context.Context, tx *sqlx.Tx, id, version int64, definition, by string) error {
	if _, err := s.q.WorkflowVersionInsert(ctx, tx, workflowVersionInsertParams{WorkflowID: id, Version: version, Definition: definition, CreatedBy: by}); err != nil {
		return fmt.Errorf("workflow %d: record version %d: %w", id, version, err)
	}
	return nil
}

// UpdateWorkflow replaces the definition, schedule and description of
// workflow w.ID if its version is still w.Version (optimistic lock), bumps
// the version and records the new one's definition, in one transaction.
// A stale version is ErrConflict, a missing workflow ErrNotFound. App,
// name and the creation stay.
func (s *Store) UpdateWorkflow(ctx context.Context, w Workflow) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		n, err := s.q.WorkflowUpdate(ctx, tx, w)
		if err != nil {
			return fmt.Errorf("update workflow %d: %w", w.ID, err)
		}
		if n == 0 {
			cur, err := s.q.WorkflowByID(ctx, tx, w.ID)
			if err != nil {
				return notFound(err, fmt.Sprintf("workflow %d", w.ID))
			}
			return conflictf("workflow %d was changed by someone else (version %d is stale, it is at %d): reload it and apply your change again", w.ID, w.Version, cur.Version)
		}
		cur, err := s.q.WorkflowByID(ctx, tx, w.ID) // app and name stay: the jobs are named after them
		if err != nil {
			return fmt.Errorf("workflow %d: %w", w.ID, err)
		}
		w.App = cur.App
		if err := s.syncInlineJobs(ctx, tx, w); err != nil {
			return err
		}
		if err := s.auditFrom(ctx, tx, AuditWorkflows, w.ID); err != nil {
			return err
		}
		return s.insertWorkflowVersion(ctx, tx, w.ID, w.Version+1, w.Definition, w.UpdatedBy)
	})
}

// Workflow returns one workflow with its definition, or ErrNotFound.
func (s *Store) Workflow(ctx context.Context, id int64) (Workflow, error) {
	w, err := s.q.WorkflowByID(ctx, s.db, id)
	if err != nil {
		return w, notFound(err, fmt.Sprintf("workflow %d", id))
	}
	return w, nil
}

// WorkflowByName returns the workflow name of app with its definition, or
// ErrNotFound.
func (s *Store) WorkflowByName(ctx context.Context, app, name string) (Workflow, error) {
	w, err := s.q.WorkflowByName(ctx, s.db, workflowByNameParams{App: app, Name: name})
	if err != nil {
		return w, notFound(err, fmt.Sprintf("workflow %s/%s", app, name))
	}
	return w, nil
}

// WorkflowsOfApps lists up to limit workflows with id > afterID, by id
// (keyset paging), of apps (nil: every app; empty: none), without their
// definitions.
func (s *Store) WorkflowsOfApps(ctx context.Context, afterID int64, limit int, apps []string) ([]Workflow, error) {
	if apps != nil && len(apps) == 0 {
		return nil, nil
	}
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	out, err := s.q.WorkflowList(ctx, s.db, workflowListParams{ID: afterID, AllApps: apps == nil, App: orNone(apps), Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	return out, nil
}

// WorkflowDefinition returns the definition of version version of workflow
// id: the graph a run of that version decides on, whatever was saved since
// (and after the workflow was deleted). ErrNotFound when there is none.
func (s *Store) WorkflowDefinition(ctx context.Context, id, version int64) (string, error) {
	def, err := s.q.WorkflowVersionDefinition(ctx, s.db, workflowVersionDefinitionParams{WorkflowID: id, Version: version})
	if err != nil {
		return "", notFound(err, fmt.Sprintf("workflow %d version %d", id, version))
	}
	return def, nil
}

// DeleteWorkflow removes a workflow and the jobs of its inline nodes; its
// runs, node runs and versions stay
// (history, as job runs stay when their job is deleted). A workflow with a
// pending or running run is not deleted: ErrConflict (cancel the run
// first). ErrNotFound when there is none.
func (s *Store) DeleteWorkflow(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		active, err := s.q.WorkflowActiveRuns(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("active runs of workflow %d: %w", id, err)
		}
		if active == 1 {
			return conflictf("workflow %d has a pending or running run: cancel it or let it finish first", id)
		}
		if active > 1 {
			return conflictf("workflow %d has %d pending or running runs: cancel them or let them finish first", id, active)
		}
		n, err := s.q.WorkflowDelete(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("delete workflow %d: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("workflow %d: %w", id, ErrNotFound)
		}
		if _, err := s.q.JobsOfWorkflowDelete(ctx, tx, id); err != nil {
			return fmt.Errorf("delete the inline jobs of workflow %d: %w", id, err)
		}
		if _, err := s.q.WorkflowAuditDelete(ctx, tx, id); err != nil {
			return fmt.Errorf("audit cursor of workflow %d: %w", id, err)
		}
		return nil
	})
}

// JobKey names a job: its id, app and name.
type JobKey struct {
	ID   int64  `db:"id"`
	App  string `db:"app"`
	Name string `db:"name"`
}

// JobKeys returns the jobs that exist among those with the ids and those
// named (app, name) by byName (ID ignored): one query per 1,000 ids and per
// app, whatever the number of references (a workflow's nodes). A job
// matched twice is returned twice; a missing one is absent.
func (s *Store) JobKeys(ctx context.Context, ids []int64, byName []JobKey) ([]JobKey, error) {
	var out []JobKey
	for start := 0; start < len(ids); start += 1000 {
		rows, err := s.q.JobIdentitiesByID(ctx, s.db, ids[start:min(start+1000, len(ids))])
		if err != nil {
			return nil, fmt.Errorf("jobs by id: %w", err)
		}
		out = append(out, rows...)
	}
	names := map[string][]string{}
	var apps []string
	for _, k := range byName {
		if _, seen := names[k.App]; !seen {
			apps = append(apps, k.App)
		}
		names[k.App] = append(names[k.App], k.Name)
	}
	for _, app := range apps {
		list := names[app]
		for start := 0; start < len(list); start += 1000 {
			rows, err := s.q.JobIdentitiesByName(ctx, s.db, jobIdentitiesByNameParams{App: app, Name: list[start:min(start+1000, len(list))]})
			if err != nil {
				return nil, fmt.Errorf("jobs of app %s by name: %w", app, err)
			}
			out = append(out, rows...)
		}
	}
	return out, nil
}

// TriggerBackfill is the trigger kind of a workflow run, or of a job run,
// created by a backfill over a date range (workflow_backfill,
// job_backfill). The other kinds and the statuses of workflow
// runs and node runs are the job runs' (TriggerCron, TriggerManual,
// TriggerAPI, TriggerCatchUp; RunPending, RunRunning, and the ended
// RunSucceeded, RunPartiallyFailed, RunFailed, RunCancelled, RunSkipped).
const TriggerBackfill = "backfill"

// WorkflowRunKeyAt is the run key of a firing at the instant atMS (Unix
// ms): the instant in UTC, RFC 3339 with milliseconds, so that keys sort as
// instants do.
func WorkflowRunKeyAt(atMS int64) string {
	return time.UnixMilli(atMS).UTC().Format("2006-01-02T15:04:05.000Z")
}

// WorkflowRunKeyDate is the run key of the run for a business date
// (YYYY-MM-DD) as a whole, a backfill's: "date:2026-03-02".
func WorkflowRunKeyDate(date string) string { return "date:" + date }

// MaxRunKeyLen bounds a workflow run key.
const MaxRunKeyLen = 64

// WorkflowRun is one run of a workflow, keyed (WorkflowID, RunKey).
type WorkflowRun struct {
	ID         int64  `db:"id"`
	WorkflowID int64  `db:"workflow_id"`
	App        string `db:"app"`
	RunKey     string `db:"run_key"`
	// WorkflowVersion is the version of the definition the run decides on
	// (WorkflowDefinition).
	WorkflowVersion int64  `db:"workflow_version"`
	ScheduledAt     int64  `db:"scheduled_at"`
	BusinessDate    string `db:"business_date"` // YYYY-MM-DD in the workflow's zone
	TriggerKind     string `db:"trigger_kind"`
	Status          string `db:"status"`
	Params          string `db:"params"`
	// Reason says why the run ended so (or was skipped): English, and as a
	// code (ReasonMsg), as a job run's error and error_msg.
	Reason    string  `db:"reason"`
	ReasonMsg msg.Msg `db:"reason_msg"`
	// Reruns counts the reruns from a node; the node runs of rerun n are
	// keyed by n.
	Reruns     int           `db:"reruns"`
	Epoch      int64         `db:"epoch"`
	CreatedBy  string        `db:"created_by"`
	CreatedAt  int64         `db:"created_at"`
	StartedAt  sql.NullInt64 `db:"started_at"`
	FinishedAt sql.NullInt64 `db:"finished_at"`
	// BackfillID is the backfill the run belongs to (0: none).
	BackfillID int64 `db:"backfill_id"`
	// RerunNodes are the nodes the latest rerun (Reruns) runs again, a JSON
	// array of node keys; not valid before the first rerun.
	RerunNodes sql.NullString `db:"rerun_nodes"`
}

// NewWorkflowRun is a workflow run to create.
type NewWorkflowRun struct {
	WorkflowID      int64
	App             string // the workflow's app
	RunKey          string // WorkflowRunKeyAt, WorkflowRunKeyDate, or a caller's key (at most MaxRunKeyLen)
	WorkflowVersion int64
	ScheduledAt     int64
	BusinessDate    string
	TriggerKind     string
	Status          string // RunPending, or RunSkipped for a firing recorded as not run
	Params          string
	Reason          msg.Msg
	CreatedBy       string // the user of a manual or API trigger
	BackfillID      int64  // the backfill that creates it (0: none)
}

func (r NewWorkflowRun) check() error {
	switch {
	case r.WorkflowID <= 0:
		return errors.New("workflow run: no workflow id")
	case r.RunKey == "" || len(r.RunKey) > MaxRunKeyLen:
		return fmt.Errorf("workflow run key %q: 1-%d bytes", r.RunKey, MaxRunKeyLen)
	case r.Status == "":
		return errors.New("workflow run: no status")
	}
	return nil
}

// CreateWorkflowRun creates run r unless its key (WorkflowID, RunKey)
// exists, and returns the run of that key with created false when it
// existed already: a second creation — by a leader after failover, a
// retried transaction, a second click — finds the first and creates
// nothing. Concurrent creations of one key create one row. epoch is the
// leader epoch recorded with it (the caller fences with Tx.CheckEpoch when
// it must).
func (s *Store) CreateWorkflowRun(ctx context.Context, epoch int64, r NewWorkflowRun) (WorkflowRun, bool, error) {
	return s.createWorkflowRun(ctx, s.db, epoch, r)
}

// CreateWorkflowRun is Store.CreateWorkflowRun inside the transaction.
func (t *Tx) CreateWorkflowRun(ctx context.Context, epoch int64, r NewWorkflowRun) (WorkflowRun, bool, error) {
	return t.s.createWorkflowRun(ctx, t.tx, epoch, r)
}

func (s *Store) createWorkflowRun(ctx context.Context, q sqlx.ExtContext, epoch int64, r NewWorkflowRun) (WorkflowRun, bool, error) {
	var run WorkflowRun
	if err := r.check(); err != nil {
		return run, false, err
	}
	n, err := s.q.WorkflowRunInsert(ctx, q, workflowRunInsertParams{
		WorkflowID: r.WorkflowID, App: r.App, RunKey: r.RunKey, WorkflowVersion: r.WorkflowVersion, ScheduledAt: r.ScheduledAt,
		BusinessDate: r.BusinessDate, TriggerKind: r.TriggerKind, Status: r.Status, Params: r.Params,
		Reason: truncate(r.Reason.String(), 2000), ReasonMsg: r.Reason, Epoch: epoch, CreatedBy: r.CreatedBy,
		Ended: runEnded(r.Status), BackfillID: r.BackfillID,
	})
	if err != nil {
		return run, false, fmt.Errorf("create run %s of workflow %d: %w", r.RunKey, r.WorkflowID, err)
	}
	created := n == 1
	run, err = s.q.WorkflowRunByKey(ctx, q, workflowRunByKeyParams{WorkflowID: r.WorkflowID, RunKey: r.RunKey})
	if err != nil {
		return run, false, notFound(err, fmt.Sprintf("run %s of workflow %d", r.RunKey, r.WorkflowID))
	}
	return run, created, nil
}

// RunEnded says whether a run, workflow run or node run status is final.
func RunEnded(status string) bool { return runEnded(status) }

// runEnded says whether a run or node run status is final.
func runEnded(status string) bool {
	switch status {
	case RunSucceeded, RunFailed, RunPartiallyFailed, RunCancelled, RunSkipped:
		return true
	}
	return false
}

// WorkflowRun returns one workflow run, or ErrNotFound.
func (s *Store) WorkflowRun(ctx context.Context, id int64) (WorkflowRun, error) {
	r, err := s.q.WorkflowRunByID(ctx, s.db, id)
	if err != nil {
		return r, notFound(err, fmt.Sprintf("workflow run %d", id))
	}
	return r, nil
}

// WorkflowRuns lists the runs of workflow id, newest first, with id <
// beforeID (0: from the newest), at most limit (1-1000, default 100).
func (s *Store) WorkflowRuns(ctx context.Context, workflowID, beforeID int64, limit int) ([]WorkflowRun, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	out, err := s.q.WorkflowRunList(ctx, s.db, workflowRunListParams{WorkflowID: workflowID, ID: beforeID, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("runs of workflow %d: %w", workflowID, err)
	}
	return out, nil
}

// ActiveWorkflowRuns returns up to limit pending and running workflow runs,
// oldest first: what a new leader drives on.
func (t *Tx) ActiveWorkflowRuns(ctx context.Context, limit int) ([]WorkflowRun, error) {
	out, err := t.s.q.WorkflowRunsActive(ctx, t.tx, limit)
	if err != nil {
		return nil, fmt.Errorf("active workflow runs: %w", err)
	}
	return out, nil
}

// StatusTransition is one guarded change of a workflow run's or node run's
// status: it happens only while the status is still From, so that of two
// writers (two leaders across a failover, the leader and a cancel) one
// changes it. Reason replaces the row's reason (zero: none).
type StatusTransition struct {
	ID       int64
	From, To string
	Reason   msg.Msg
}

// TransitionWorkflowRun applies t and reports whether it did (false: the
// run was not in t.From any more, or does not exist). The first move to
// running sets started_at; a move to an ended status sets finished_at.
func (s *Store) TransitionWorkflowRun(ctx context.Context, t StatusTransition) (bool, error) {
	return s.transitionWorkflowRun(ctx, s.db, t)
}

// TransitionWorkflowRun is Store.TransitionWorkflowRun inside the transaction.
func (t *Tx) TransitionWorkflowRun(ctx context.Context, tr StatusTransition) (bool, error) {
	return t.s.transitionWorkflowRun(ctx, t.tx, tr)
}

func (s *Store) transitionWorkflowRun(ctx context.Context, db sqlx.ExtContext, t StatusTransition) (bool, error) {
	n, err := s.q.WorkflowRunTransition(ctx, db, workflowRunTransitionParams{Status: t.To, Running: t.To == RunRunning, Ended: runEnded(t.To),
		Reason: truncate(t.Reason.String(), 2000), ReasonMsg: t.Reason, ID: t.ID, FromStatus: t.From})
	if err != nil {
		return false, fmt.Errorf("workflow run %d %s → %s: %w", t.ID, t.From, t.To, err)
	}
	return n == 1, nil
}

// RerunWorkflowRun reopens finished run id (in status from, with reruns
// reruns, as read) for a rerun from a node: running again, reruns + 1 (the
// rerun of the new node runs), nodes the node keys it runs again. It
// reports whether it did: a second request for the same rerun (the same
// reruns read) finds it reopened and changes nothing.
func (s *Store) RerunWorkflowRun(ctx context.Context, id int64, from string, reruns int, nodes []string) (bool, error) {
	return s.rerunWorkflowRun(ctx, s.db, id, from, reruns, nodes)
}

// RerunWorkflowRun is Store.RerunWorkflowRun inside the transaction.
func (t *Tx) RerunWorkflowRun(ctx context.Context, id int64, from string, reruns int, nodes []string) (bool, error) {
	return t.s.rerunWorkflowRun(ctx, t.tx, id, from, reruns, nodes)
}

func (s *Store) rerunWorkflowRun(ctx context.Context, db sqlx.ExtContext, id int64, from string, reruns int, nodes []string) (bool, error) {
	if !runEnded(from) {
		return false, fmt.Errorf("rerun of workflow run %d: status %s is not an end", id, from)
	}
	keys, err := json.Marshal(nodes)
	if err != nil {
		return false, err
	}
	n, err := s.q.WorkflowRunRerun(ctx, db, workflowRunRerunParams{RerunNodes: string(keys), ID: id, Status: from, Reruns: reruns})
	if err != nil {
		return false, fmt.Errorf("rerun of workflow run %d: %w", id, err)
	}
	return n == 1, nil
}

// NodeRun is the run of one node in one workflow run, keyed
// (WorkflowRunID, NodeKey, Rerun). Its status is a node state of
// admin/workflow but pending (a node without a node run is pending):
// running, succeeded, failed, cancelled or skipped.
type NodeRun struct {
	ID            int64  `db:"id"`
	WorkflowRunID int64  `db:"workflow_run_id"`
	NodeKey       string `db:"node_key"`
	Rerun         int    `db:"rerun"`
	Status        string `db:"status"`
	// JobRunID is the job run the node run created; NULL for a skipped
	// node, or until the job run exists (LinkNodeRunJobRun).
	JobRunID   sql.NullInt64 `db:"job_run_id"`
	Reason     string        `db:"reason"`
	ReasonMsg  msg.Msg       `db:"reason_msg"`
	Epoch      int64         `db:"epoch"`
	CreatedAt  int64         `db:"created_at"`
	FinishedAt sql.NullInt64 `db:"finished_at"`
}

// NewNodeRun is a node run to create.
type NewNodeRun struct {
	WorkflowRunID int64
	NodeKey       string
	Rerun         int    // the workflow run's Reruns when it is created
	Status        string // RunRunning (its start rule met) or RunSkipped
	JobRunID      int64  // 0: none yet
	Reason        msg.Msg
}

// CreateNodeRun creates node run r unless its key (WorkflowRunID, NodeKey,
// Rerun) exists, and returns the node run of that key with created false
// when it existed already: a decision applied twice creates each node run
// once. Concurrent creations of one key create one row.
func (s *Store) CreateNodeRun(ctx context.Context, epoch int64, r NewNodeRun) (NodeRun, bool, error) {
	return s.createNodeRun(ctx, s.db, epoch, r)
}

// CreateNodeRun is Store.CreateNodeRun inside the transaction.
func (t *Tx) CreateNodeRun(ctx context.Context, epoch int64, r NewNodeRun) (NodeRun, bool, error) {
	return t.s.createNodeRun(ctx, t.tx, epoch, r)
}

func (s *Store) createNodeRun(ctx context.Context, q sqlx.ExtContext, epoch int64, r NewNodeRun) (NodeRun, bool, error) {
	var nr NodeRun
	if r.WorkflowRunID <= 0 || r.NodeKey == "" || r.Status == "" || r.Rerun < 0 {
		return nr, false, fmt.Errorf("node run %+v: workflow run, node key and status are required", r)
	}
	jobRun := sql.NullInt64{Int64: r.JobRunID, Valid: r.JobRunID > 0}
	n, err := s.q.NodeRunInsert(ctx, q, nodeRunInsertParams{WorkflowRunID: r.WorkflowRunID, NodeKey: r.NodeKey, Rerun: r.Rerun, Status: r.Status,
		JobRunID: jobRun, Reason: truncate(r.Reason.String(), 2000), ReasonMsg: r.Reason, Epoch: epoch, Ended: runEnded(r.Status)})
	if err != nil {
		return nr, false, fmt.Errorf("create node run %s of workflow run %d: %w", r.NodeKey, r.WorkflowRunID, err)
	}
	created := n == 1
	nr, err = s.q.NodeRunByKey(ctx, q, nodeRunByKeyParams{WorkflowRunID: r.WorkflowRunID, NodeKey: r.NodeKey, Rerun: r.Rerun})
	if err != nil {
		return nr, false, notFound(err, fmt.Sprintf("node run %s/%d of workflow run %d", r.NodeKey, r.Rerun, r.WorkflowRunID))
	}
	return nr, created, nil
}

// NodeRun returns one node run, or ErrNotFound.
func (s *Store) NodeRun(ctx context.Context, id int64) (NodeRun, error) {
	nr, err := s.q.NodeRunByID(ctx, s.db, id)
	if err != nil {
		return nr, notFound(err, fmt.Sprintf("node run %d", id))
	}
	return nr, nil
}

// NodeRunOfJobRun returns the node run that created job run id, or
// ErrNotFound (a job run of no workflow).
func (s *Store) NodeRunOfJobRun(ctx context.Context, jobRunID int64) (NodeRun, error) {
	nr, err := s.q.NodeRunByJobRun(ctx, s.db, jobRunID)
	if err != nil {
		return nr, notFound(err, fmt.Sprintf("node run of job run %d", jobRunID))
	}
	return nr, nil
}

// NodeRuns returns every node run of workflow run id, by rerun then
// creation.
func (s *Store) NodeRuns(ctx context.Context, workflowRunID int64) ([]NodeRun, error) {
	return s.nodeRuns(ctx, s.db, workflowRunID)
}

// NodeRuns is Store.NodeRuns inside the transaction.
func (t *Tx) NodeRuns(ctx context.Context, workflowRunID int64) ([]NodeRun, error) {
	return t.s.nodeRuns(ctx, t.tx, workflowRunID)
}

func (s *Store) nodeRuns(ctx context.Context, db sqlx.ExtContext, workflowRunID int64) ([]NodeRun, error) {
	out, err := s.q.NodeRunsOfRun(ctx, db, workflowRunID)
	if err != nil {
		return nil, fmt.Errorf("node runs of workflow run %d: %w", workflowRunID, err)
	}
	return out, nil
}

// LatestNodeRuns keeps, of node runs (NodeRuns), the latest of each node:
// the one of the highest rerun. Their statuses are the node states a
// decision reads (admin/workflow.Graph.Decide); a node absent is pending.
func LatestNodeRuns(runs []NodeRun) map[string]NodeRun {
	out := make(map[string]NodeRun, len(runs))
	for _, r := range runs {
		if cur, ok := out[r.NodeKey]; !ok || r.Rerun > cur.Rerun {
			out[r.NodeKey] = r
		}
	}
	return out
}

// TransitionNodeRun applies t to a node run and reports whether it did
// (false: not in t.From any more, or no such node run). A move to an ended
// status sets finished_at.
func (s *Store) TransitionNodeRun(ctx context.Context, t StatusTransition) (bool, error) {
	return s.transitionNodeRun(ctx, s.db, t)
}

// TransitionNodeRun is Store.TransitionNodeRun inside the transaction.
func (t *Tx) TransitionNodeRun(ctx context.Context, tr StatusTransition) (bool, error) {
	return t.s.transitionNodeRun(ctx, t.tx, tr)
}

func (s *Store) transitionNodeRun(ctx context.Context, db sqlx.ExtContext, t StatusTransition) (bool, error) {
	n, err := s.q.NodeRunTransition(ctx, db, nodeRunTransitionParams{Status: t.To, Ended: runEnded(t.To),
		Reason: truncate(t.Reason.String(), 2000), ReasonMsg: t.Reason, ID: t.ID, FromStatus: t.From})
	if err != nil {
		return false, fmt.Errorf("node run %d %s → %s: %w", t.ID, t.From, t.To, err)
	}
	return n == 1, nil
}

// LinkNodeRunJobRun records job run jobRunID as the one node run id
// created, once: it reports false when the node run has a job run already
// (a leader repeating the step; read the node run for which) or does not
// exist.
func (s *Store) LinkNodeRunJobRun(ctx context.Context, id, jobRunID int64) (bool, error) {
	return s.linkNodeRunJobRun(ctx, s.db, id, jobRunID)
}

// LinkNodeRunJobRun is Store.LinkNodeRunJobRun inside the transaction.
func (t *Tx) LinkNodeRunJobRun(ctx context.Context, id, jobRunID int64) (bool, error) {
	return t.s.linkNodeRunJobRun(ctx, t.tx, id, jobRunID)
}

func (s *Store) linkNodeRunJobRun(ctx context.Context, db sqlx.ExtContext, id, jobRunID int64) (bool, error) {
	n, err := s.q.NodeRunLinkJobRun(ctx, db, nodeRunLinkJobRunParams{JobRunID: jobRunID, ID: id})
	if err != nil {
		return false, fmt.Errorf("node run %d: link job run %d: %w", id, jobRunID, err)
	}
	return n == 1, nil
}
