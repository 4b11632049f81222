-- The watchdog's incremental gap audit (admin/watchdog, migration 0035):
-- a cursor per job (job_audit) and per workflow (workflow_audit), the next
-- expected instant not audited yet, NULL when there is nothing to audit.

-- name: JobAuditFrom :exec
-- in: job_id int64
-- The job was created or changed now (enabled, resumed, edited): its audit
-- goes on from the change, the firings before it are not expected any more
-- (as the old schedule decided them). Also sets a cursor that is missing.
INSERT INTO job_audit (job_id, audit_next_at) VALUES (?, {{now_ms}})
{{upsert(job_id)}} audit_next_at = {{excluded(audit_next_at)}};

-- name: JobAuditDelete :exec
-- in: job_id int64
DELETE FROM job_audit WHERE job_id = ?;

-- name: JobAuditDue :many
-- in: audit_next_at int64, limit int
-- out: JobAudit
-- The jobs whose cursor is at or before ? (now - grace), oldest cursor
-- first, at most ?: a range of idx_job_audit_next, then the job by primary
-- key.
SELECT a.audit_next_at, {{JobColumns}}
FROM job_audit a JOIN job j ON j.id = a.job_id
WHERE a.audit_next_at <= ? ORDER BY a.audit_next_at, a.job_id LIMIT ?;

-- name: JobAuditLock :many
-- in: job_ids []int64
-- out: id int64, audit_next_at sql.NullInt64
-- The cursors of a batch, locked until the transaction that moves them on
-- ends: the audit moves only those that still hold the value it read.
SELECT job_id AS id, audit_next_at FROM job_audit WHERE job_id IN (?) ORDER BY job_id {{for_update}};

-- name: JobAuditAdvance
-- Untyped: a "set by key" update sized at run time (execByKey).
-- The cursors of a batch moved on, each its own value ("set by key").
UPDATE job_audit SET audit_next_at = CASE job_id WHEN ? THEN ? END WHERE job_id IN (?);

-- name: JobAuditOldest :one
-- out: audit_next_at sql.NullInt64
-- The oldest cursor: the first entry of idx_job_audit_next.
SELECT MIN(audit_next_at) FROM job_audit;

-- name: JobAuditBehindCount :one
-- in: audit_next_at int64, limit int
-- out: n int
-- How many cursors are older than ?, counted up to ? (the index range).
SELECT COUNT(*) FROM (SELECT 1 FROM job_audit WHERE audit_next_at < ? LIMIT ?) behind;

-- name: RunsOfRanges :many
-- in: job_ids []int64, from_ms int64, to_ms int64
-- out: id int64, scheduled_at int64
-- The cron and catch-up runs (fired or skipped) of the jobs of a batch (IN
-- list) scheduled in [?, ?), the union of their ranges: a range of the run
-- key (job_id, scheduled_at) per job. store.CronRunCountsOf counts each
-- job's in its own range. (One OR-ed range per job would read exactly those,
-- but MariaDB's range optimizer takes a second over 500 of them.)
SELECT job_id AS id, scheduled_at FROM job_run
WHERE job_id IN (?) AND scheduled_at >= ? AND scheduled_at < ? AND trigger_kind IN ('cron', 'catch_up');

-- name: WorkflowAuditFrom :exec
-- in: workflow_id int64
-- JobAuditFrom for a workflow.
INSERT INTO workflow_audit (workflow_id, audit_next_at) VALUES (?, {{now_ms}})
{{upsert(workflow_id)}} audit_next_at = {{excluded(audit_next_at)}};

-- name: WorkflowAuditDelete :exec
-- in: workflow_id int64
DELETE FROM workflow_audit WHERE workflow_id = ?;

-- name: WorkflowAuditDue :many
-- in: audit_next_at int64, limit int
-- out: WorkflowAudit
-- JobAuditDue for workflows, without their definitions.
SELECT a.audit_next_at, {{WorkflowColumns}}, '' AS definition
FROM workflow_audit a JOIN workflow w ON w.id = a.workflow_id
WHERE a.audit_next_at <= ? ORDER BY a.audit_next_at, a.workflow_id LIMIT ?;

-- name: WorkflowAuditLock :many
-- in: workflow_ids []int64
-- out: id int64, audit_next_at sql.NullInt64
SELECT workflow_id AS id, audit_next_at FROM workflow_audit WHERE workflow_id IN (?) ORDER BY workflow_id {{for_update}};

-- name: WorkflowAuditAdvance
-- Untyped: a "set by key" update sized at run time (execByKey).
UPDATE workflow_audit SET audit_next_at = CASE workflow_id WHEN ? THEN ? END WHERE workflow_id IN (?);

-- name: WorkflowAuditOldest :one
-- out: audit_next_at sql.NullInt64
SELECT MIN(audit_next_at) FROM workflow_audit;

-- name: WorkflowAuditBehindCount :one
-- in: audit_next_at int64, limit int
-- out: n int
SELECT COUNT(*) FROM (SELECT 1 FROM workflow_audit WHERE audit_next_at < ? LIMIT ?) behind;

-- name: WorkflowRunsOfRanges :many
-- in: workflow_ids []int64, from_ms int64, to_ms int64
-- out: id int64, scheduled_at int64
-- RunsOfRanges for workflow runs, a range of idx_workflow_run_of_schedule
-- (workflow_id, scheduled_at) per workflow.
SELECT workflow_id AS id, scheduled_at FROM workflow_run
WHERE workflow_id IN (?) AND scheduled_at >= ? AND scheduled_at < ? AND trigger_kind IN ('cron', 'catch_up');

-- name: AlarmBehindOpen :one
-- in: dedup_key string
-- out: n int
-- Whether an open watchdog_behind alarm of a dedup-key prefix (?) exists.
SELECT COUNT(*) FROM alarm_event WHERE kind = 'watchdog_behind' AND resolved_at IS NULL AND dedup_key LIKE ?;

-- name: AlarmResolveBehind :exec
-- in: resolved_msg msg.Msg, dedup_key string
-- Resolve the open watchdog_behind alarms of a dedup-key prefix once the
-- audit has caught up: the reason, the prefix.
UPDATE alarm_event SET resolved_at = {{now_ms}}, resolved_by = 'shardjob', resolved_msg = ?,
       acked_by = CASE WHEN acked_at IS NULL THEN 'shardjob' ELSE acked_by END, acked_at = COALESCE(acked_at, {{now_ms}})
WHERE kind = 'watchdog_behind' AND resolved_at IS NULL AND dedup_key LIKE ?;
