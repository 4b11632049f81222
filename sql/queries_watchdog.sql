-- The watchdog's incremental gap audit (admin/watchdog, migration 0034):
-- a cursor per job (job_audit) and per workflow (workflow_audit), the next
-- expected instant not audited yet, NULL when there is nothing to audit.

-- name: JobAuditFrom
-- The job was created or changed now (enabled, resumed, edited): its audit
-- goes on from the change, the firings before it are not expected any more
-- (as the old schedule decided them). Also sets a cursor that is missing.
INSERT INTO job_audit (job_id, audit_next_at) VALUES (?, {{now_ms}})
{{upsert(job_id)}} audit_next_at = {{excluded(audit_next_at)}};

-- name: JobAuditDelete
DELETE FROM job_audit WHERE job_id = ?;

-- name: JobAuditDue
-- The jobs whose cursor is at or before ? (now - grace), oldest cursor
-- first, at most ?: a range of idx_job_audit_next, then the job by primary
-- key.
SELECT a.audit_next_at, {{JobColumns}}
FROM job_audit a JOIN job j ON j.id = a.job_id
WHERE a.audit_next_at <= ? ORDER BY a.audit_next_at, a.job_id LIMIT ?;

-- name: JobAuditAdvance
-- Moves a cursor on (new value, job, the value the audit read): 0 rows when
-- another replica or an edit moved it first.
UPDATE job_audit SET audit_next_at = ? WHERE job_id = ? AND audit_next_at = ?;

-- name: JobAuditOldest
-- The oldest cursor: the first entry of idx_job_audit_next.
SELECT MIN(audit_next_at) FROM job_audit;

-- name: JobAuditBehindCount
-- How many cursors are older than ?, counted up to ? (the index range).
SELECT COUNT(*) FROM (SELECT 1 FROM job_audit WHERE audit_next_at < ? LIMIT ?) behind;

-- name: RunCountsOfRanges
-- Cron and catch-up runs (fired or skipped) per job, each job counted in its
-- own range [from, to): the condition in the outer parentheses is repeated
-- once per job, joined by OR (store.CronRunCountsOf), each a range of the
-- run key (job_id, scheduled_at).
SELECT job_id AS id, COUNT(*) AS n FROM job_run
WHERE ((job_id = ? AND scheduled_at >= ? AND scheduled_at < ?)) AND trigger_kind IN ('cron', 'catch_up')
GROUP BY job_id;

-- name: WorkflowAuditFrom
-- JobAuditFrom for a workflow.
INSERT INTO workflow_audit (workflow_id, audit_next_at) VALUES (?, {{now_ms}})
{{upsert(workflow_id)}} audit_next_at = {{excluded(audit_next_at)}};

-- name: WorkflowAuditDelete
DELETE FROM workflow_audit WHERE workflow_id = ?;

-- name: WorkflowAuditDue
-- JobAuditDue for workflows, without their definitions.
SELECT a.audit_next_at, {{WorkflowColumns}}, '' AS definition
FROM workflow_audit a JOIN workflow w ON w.id = a.workflow_id
WHERE a.audit_next_at <= ? ORDER BY a.audit_next_at, a.workflow_id LIMIT ?;

-- name: WorkflowAuditAdvance
UPDATE workflow_audit SET audit_next_at = ? WHERE workflow_id = ? AND audit_next_at = ?;

-- name: WorkflowAuditOldest
SELECT MIN(audit_next_at) FROM workflow_audit;

-- name: WorkflowAuditBehindCount
SELECT COUNT(*) FROM (SELECT 1 FROM workflow_audit WHERE audit_next_at < ? LIMIT ?) behind;

-- name: WorkflowRunCountsOfRanges
-- RunCountsOfRanges for workflow runs, each range one of
-- idx_workflow_run_of_schedule (workflow_id, scheduled_at).
SELECT workflow_id AS id, COUNT(*) AS n FROM workflow_run
WHERE ((workflow_id = ? AND scheduled_at >= ? AND scheduled_at < ?)) AND trigger_kind IN ('cron', 'catch_up')
GROUP BY workflow_id;

-- name: AlarmBehindOpen
-- Whether an open watchdog_behind alarm of a dedup-key prefix (?) exists.
SELECT COUNT(*) FROM alarm_event WHERE kind = 'watchdog_behind' AND resolved_at IS NULL AND dedup_key LIKE ?;

-- name: AlarmResolveBehind
-- Resolve the open watchdog_behind alarms of a dedup-key prefix once the
-- audit has caught up: the reason, the prefix.
UPDATE alarm_event SET resolved_at = {{now_ms}}, resolved_by = 'shardjob', resolved_msg = ?,
       acked_by = CASE WHEN acked_at IS NULL THEN 'shardjob' ELSE acked_by END, acked_at = COALESCE(acked_at, {{now_ms}})
WHERE kind = 'watchdog_behind' AND resolved_at IS NULL AND dedup_key LIKE ?;
