-- Workflows (issue 22, migration 0022): definitions, their versions, runs
-- and node runs. See admin/store/workflows.go.

-- fragment: WorkflowColumns
id, app, name, description, cron_expr, time_zone, calendar, calendar_rule, calendar_shift, enabled, failure_policy, node_count,
version, next_fire_at, created_at, created_by, updated_at, updated_by

-- name: WorkflowInsert :lastid
-- in: Workflow
INSERT INTO workflow (app, name, description, cron_expr, time_zone, calendar, calendar_rule, calendar_shift, enabled, failure_policy,
                      definition, node_count, version, next_fire_at, created_at, created_by, updated_at, updated_by)
VALUES (:app, :name, :description, :cron_expr, :time_zone, :calendar, :calendar_rule, :calendar_shift, :enabled, :failure_policy,
        :definition, :node_count,
        1, :next_fire_at, {{now_ms}}, :created_by, {{now_ms}}, :updated_by) {{returning_id}};

-- name: WorkflowUpdate :exec
-- in: Workflow
-- A new definition over the version read (optimistic lock): app and name
-- stay; the version goes up by one.
UPDATE workflow SET description = :description, cron_expr = :cron_expr, time_zone = :time_zone, calendar = :calendar,
       calendar_rule = :calendar_rule, calendar_shift = :calendar_shift, enabled = :enabled, failure_policy = :failure_policy, definition = :definition, node_count = :node_count,
       next_fire_at = :next_fire_at, version = version + 1, updated_at = {{now_ms}}, updated_by = :updated_by
WHERE id = :id AND version = :version;

-- name: WorkflowVersionInsert :exec
-- in: workflow_id int64, version int64, definition string, created_by string
INSERT INTO workflow_version (workflow_id, version, definition, created_at, created_by) VALUES (?, ?, ?, {{now_ms}}, ?);

-- name: WorkflowVersionDefinition :one
-- in: workflow_id int64, version int64
-- out: definition string
SELECT definition FROM workflow_version WHERE workflow_id = ? AND version = ?;

-- name: WorkflowByID :one
-- in: id int64
-- out: Workflow
SELECT {{WorkflowColumns}}, definition FROM workflow WHERE id = ?;

-- name: WorkflowByName :one
-- in: app string, name string
-- out: Workflow
SELECT {{WorkflowColumns}}, definition FROM workflow WHERE app = ? AND name = ?;

-- The workflows one reader may see, by id after a keyset (? = no app
-- limit, or the apps in the list), without their definitions.
-- name: WorkflowList :many
-- in: id int64, all_apps bool, app []string, limit int
-- out: Workflow
SELECT {{WorkflowColumns}}, '' AS definition FROM workflow
WHERE id > ? AND (? = 1 OR app IN (?)) ORDER BY id LIMIT ?;

-- name: WorkflowDelete :exec
-- in: id int64
DELETE FROM workflow WHERE id = ?;

-- name: WorkflowActiveRuns :one
-- in: workflow_id int64
-- out: n int
SELECT COUNT(*) FROM workflow_run WHERE workflow_id = ? AND status IN ('pending', 'running');

-- fragment: WorkflowRunColumns
id, workflow_id, app, run_key, workflow_version, scheduled_at, business_date, trigger_kind, status, params, reason, reason_msg,
reruns, epoch, created_by, created_at, started_at, finished_at, backfill_id, rerun_nodes

-- name: WorkflowRunInsert :exec
-- in: workflow_id int64, app string, run_key string, workflow_version int64, scheduled_at int64, business_date string, trigger_kind string, status string, params string, reason string, reason_msg msg.Msg, epoch int64, created_by string, ended bool, backfill_id int64
-- A run created ended (skipped: a firing recorded as not run) has its end
-- time at once. A run key that exists already inserts nothing (the caller
-- reads the run that has it; on PostgreSQL a failed insert would end the
-- transaction).
{{insert_ignore}} INTO workflow_run (workflow_id, app, run_key, workflow_version, scheduled_at, business_date, trigger_kind, status, params,
                          reason, reason_msg, epoch, created_by, created_at, finished_at, backfill_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {{now_ms}}, CASE WHEN ? = 1 THEN {{now_ms}} ELSE NULL END, ?);

-- name: WorkflowRunByKey :one
-- in: workflow_id int64, run_key string
-- out: WorkflowRun
SELECT {{WorkflowRunColumns}} FROM workflow_run WHERE workflow_id = ? AND run_key = ?;

-- name: WorkflowRunByID :one
-- in: id int64
-- out: WorkflowRun
SELECT {{WorkflowRunColumns}} FROM workflow_run WHERE id = ?;

-- name: WorkflowRunList :many
-- in: workflow_id int64, id int64, limit int
-- out: WorkflowRun
-- A workflow's runs, newest first, before a keyset id.
SELECT {{WorkflowRunColumns}} FROM workflow_run WHERE workflow_id = ? AND id < ? ORDER BY id DESC LIMIT ?;

-- name: WorkflowRunsActive :many
-- in: limit int
-- out: WorkflowRun
-- The pending and running runs of every workflow, oldest first: what a
-- new leader picks up.
SELECT {{WorkflowRunColumns}} FROM workflow_run WHERE status IN ('pending', 'running') ORDER BY id LIMIT ?;

-- name: WorkflowRunTransition :exec
-- in: status string, running bool, ended bool, reason string, reason_msg msg.Msg, id int64, from_status string
-- Guarded by the status read: of two writers, one changes it. started_at is
-- set by the first move to running, finished_at by a move to an end.
UPDATE workflow_run SET status = ?,
       started_at = COALESCE(started_at, CASE WHEN ? = 1 THEN {{now_ms}} ELSE NULL END),
       finished_at = CASE WHEN ? = 1 THEN {{now_ms}} ELSE NULL END,
       reason = ?, reason_msg = ?
WHERE id = ? AND status = ?;

-- name: WorkflowRunRerun :exec
-- in: rerun_nodes string, id int64, status string, reruns int
-- Reopens a finished run for a rerun from a node, guarded by its status
-- and its reruns read: the same rerun asked twice reopens it once.
-- rerun_nodes are the nodes it runs again.
UPDATE workflow_run SET status = 'running', reruns = reruns + 1, finished_at = NULL, reason = '', reason_msg = '', rerun_nodes = ?
WHERE id = ? AND status = ? AND reruns = ?;

-- fragment: NodeRunColumns
id, workflow_run_id, node_key, rerun, status, job_run_id, reason, reason_msg, epoch, created_at, finished_at

-- name: NodeRunInsert :exec
-- in: workflow_run_id int64, node_key string, rerun int, status string, job_run_id sql.NullInt64, reason string, reason_msg msg.Msg, epoch int64, ended bool
-- (a node run that exists already inserts nothing, as WorkflowRunInsert)
{{insert_ignore}} INTO workflow_node_run (workflow_run_id, node_key, rerun, status, job_run_id, reason, reason_msg, epoch, created_at, finished_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, {{now_ms}}, CASE WHEN ? = 1 THEN {{now_ms}} ELSE NULL END);

-- name: NodeRunByKey :one
-- in: workflow_run_id int64, node_key string, rerun int
-- out: NodeRun
SELECT {{NodeRunColumns}} FROM workflow_node_run WHERE workflow_run_id = ? AND node_key = ? AND rerun = ?;

-- name: NodeRunByID :one
-- in: id int64
-- out: NodeRun
SELECT {{NodeRunColumns}} FROM workflow_node_run WHERE id = ?;

-- name: NodeRunByJobRun :one
-- in: job_run_id int64
-- out: NodeRun
SELECT {{NodeRunColumns}} FROM workflow_node_run WHERE job_run_id = ?;

-- name: NodeRunsOfRun :many
-- in: workflow_run_id int64
-- out: NodeRun
SELECT {{NodeRunColumns}} FROM workflow_node_run WHERE workflow_run_id = ? ORDER BY rerun, id;

-- name: NodeRunTransition :exec
-- in: status string, ended bool, reason string, reason_msg msg.Msg, id int64, from_status string
UPDATE workflow_node_run SET status = ?, finished_at = CASE WHEN ? = 1 THEN {{now_ms}} ELSE NULL END, reason = ?, reason_msg = ?
WHERE id = ? AND status = ?;

-- name: NodeRunLinkJobRun :exec
-- in: job_run_id int64, id int64
-- The job run a node run created, once: a second link (a leader repeating
-- the step) changes nothing.
UPDATE workflow_node_run SET job_run_id = ? WHERE id = ? AND job_run_id IS NULL;

-- name: JobIdentitiesByID :many
-- in: id []int64
-- out: JobKey
-- The ordinary jobs a node may reference (not the jobs of inline nodes).
SELECT id, app, name FROM job WHERE id IN (?) AND workflow_id IS NULL;

-- name: JobIdentitiesByName :many
-- in: app string, name []string
-- out: JobKey
SELECT id, app, name FROM job WHERE app = ? AND name IN (?) AND workflow_id IS NULL;

-- name: JobsOfWorkflow :many
-- in: workflow_id int64
-- out: Job
-- The jobs of a workflow's inline nodes.
SELECT {{JobColumns}} FROM job WHERE workflow_id = ? ORDER BY id;

-- name: JobsOfWorkflowDelete :exec
-- in: workflow_id int64
DELETE FROM job WHERE workflow_id = ?;

-- name: JobOfWorkflowNode :one
-- in: workflow_id int64, name string
-- out: id int64
-- The job of an inline node: the engine starts it.
SELECT id FROM job WHERE workflow_id = ? AND name = ?;

-- name: WorkflowRunByIDLocked :one
-- in: id int64
-- out: WorkflowRun
-- The run the engine decides on, locked for the decision's transaction.
SELECT {{WorkflowRunColumns}} FROM workflow_run WHERE id = ? {{for_update}};

-- name: JobRunStatuses :many
-- in: id []int64
-- out: JobRunStatus
-- The statuses of the job runs the running node runs created (the engine
-- reads them to end node runs).
SELECT id, app, status, error FROM job_run WHERE id IN (?);

-- name: WorkflowsDue :many
-- in: next_fire_at int64, limit int
-- out: Workflow
-- The enabled workflows whose next firing is due by ?, oldest first,
-- locked for the firing's transaction (a workflow another transaction
-- holds is passed over), without their definitions.
SELECT {{WorkflowColumns}}, '' AS definition FROM workflow
WHERE enabled = 1 AND next_fire_at IS NOT NULL AND next_fire_at <= ?
ORDER BY next_fire_at LIMIT ? {{for_update_skip_locked}};

-- name: WorkflowSetNextFire :exec
-- in: next_fire_at sql.NullInt64, id int64, version int64
-- The next firing after the ones just created, if the workflow was not
-- changed since it was read (an update computes its own).
UPDATE workflow SET next_fire_at = ? WHERE id = ? AND version = ?;

-- name: WorkflowBackfillInsert :lastid
-- in: workflow_id int64, app string, from_date string, to_date string, newest_first bool, parallel int, only_missing bool, created_by string
INSERT INTO workflow_backfill (workflow_id, app, from_date, to_date, newest_first, parallel, only_missing, created_by, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, {{now_ms}}) {{returning_id}};

-- name: WorkflowBackfillByID :one
-- in: id int64
-- out: Backfill
SELECT id, workflow_id, app, from_date, to_date, newest_first, parallel, only_missing, created_by, created_at
FROM workflow_backfill WHERE id = ?;

-- name: WorkflowBackfillRunning :one
-- in: backfill_id int64
-- out: n int
-- How many runs of a backfill are running: the leader starts the next
-- pending one only below the backfill's parallelism.
SELECT COUNT(*) FROM workflow_run WHERE backfill_id = ? AND status = 'running';

-- name: WorkflowRunsOfDates :many
-- in: workflow_id int64, from_date string, to_date string
-- out: DateRun
-- The runs of a workflow whose business date is in [from, to], with their
-- key and status: what a backfill finds already there.
SELECT id, run_key, business_date, status FROM workflow_run
WHERE workflow_id = ? AND business_date >= ? AND business_date <= ? ORDER BY id;

-- name: WorkflowsOverdue :many
-- in: grace_ms int64, limit int
-- out: OverdueWorkflow
-- The enabled workflows whose next firing is older than ? ms by the
-- database clock: nobody is firing them (the watchdog).
SELECT id, app, name, next_fire_at FROM workflow
WHERE enabled = 1 AND next_fire_at IS NOT NULL AND next_fire_at < {{now_ms}} - ?
ORDER BY next_fire_at LIMIT ?;

-- name: WorkflowsScheduled :many
-- in: id int64, limit int
-- out: Workflow
-- The enabled workflows with a schedule, after id ?, by id (the watchdog's
-- gap audit pages through them), without their definitions.
SELECT {{WorkflowColumns}}, '' AS definition FROM workflow
WHERE enabled = 1 AND cron_expr <> '' AND id > ?
ORDER BY id LIMIT ?;

-- name: WorkflowRunCountsInWindow :many
-- in: from_ms int64, to_ms int64
-- out: workflow_id int64, n int
-- Cron and catch-up workflow runs (fired or skipped) per workflow
-- scheduled in [?, ?), from idx_workflow_run_scheduled alone (migration
-- 0033; it read every workflow run before).
SELECT workflow_id, COUNT(*) AS n FROM workflow_run
WHERE scheduled_at >= ? AND scheduled_at < ? AND trigger_kind IN ('cron', 'catch_up')
GROUP BY workflow_id;

-- name: WorkflowRunPendingReason :exec
-- in: reason string, reason_msg msg.Msg, id int64
-- Why a pending run has not started (a backfill's turn), while it is
-- pending.
UPDATE workflow_run SET reason = ?, reason_msg = ? WHERE id = ? AND status = 'pending';
-- Waits of a node on other runs of the same business date (admin/workflowrun).
-- name: JobZoneByName :one
-- in: app string, name string
-- out: id int64, time_zone string
SELECT id, time_zone FROM job WHERE app = ? AND name = ?;

-- name: JobRunSucceededBetween :one
-- in: job_id int64, from_ms int64, to_ms int64
-- out: n int
-- A succeeded run of a job, scheduled in [from, to), that no workflow
-- created: its business date is its scheduled day in the job's zone.
SELECT COUNT(*) FROM (SELECT 1 AS one FROM job_run
  WHERE job_id = ? AND status = 'succeeded' AND trigger_kind <> 'workflow' AND scheduled_at >= ? AND scheduled_at < ?
  LIMIT 1) t;

-- name: JobRunSucceededOfWorkflowDate :one
-- in: job_id int64, business_date string
-- out: n int
-- A succeeded run of a job created by a workflow node of a run of that
-- business date.
SELECT COUNT(*) FROM (SELECT 1 AS one FROM job_run r
  JOIN workflow_node_run n ON n.job_run_id = r.id
  JOIN workflow_run w ON w.id = n.workflow_run_id
  WHERE r.job_id = ? AND r.trigger_kind = 'workflow' AND r.status = 'succeeded' AND w.business_date = ?
  LIMIT 1) t;

-- name: WorkflowRunSucceededOnDate :one
-- in: app string, name string, business_date string
-- out: n int
SELECT COUNT(*) FROM (SELECT 1 AS one FROM workflow_run w
  JOIN workflow f ON f.id = w.workflow_id
  WHERE f.app = ? AND f.name = ? AND w.business_date = ? AND w.status = 'succeeded'
  LIMIT 1) t;

-- name: CalendarIDByName :one
-- in: name string, app string
-- out: id int64
-- The calendar a workflow names: its app's, else the global one.
SELECT id FROM business_calendar WHERE name = ? AND (app = ? OR app = '') ORDER BY app DESC LIMIT 1;
