-- Backfills of a plain job (docs/workflows.md, "Backfill of a plain job";
-- migration 0029: job_backfill, job_run.backfill_id).

-- name: JobBackfillInsert :lastid
-- in: job_id int64, app string, from_date string, to_date string, newest_first bool, parallel int, only_missing bool, created_by string
INSERT INTO job_backfill (job_id, app, from_date, to_date, newest_first, parallel, only_missing, created_by, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, {{now_ms}}) {{returning_id}};

-- name: JobBackfillsOfJob :many
-- in: job_id int64, id int64, id int64, limit int
-- out: JobBackfillStatus
-- The backfills of a job, newest first, with how many of their runs are in
-- each status.
SELECT b.id, b.job_id, b.app, b.from_date, b.to_date, b.newest_first, b.parallel, b.only_missing, b.created_by, b.created_at,
       COUNT(r.id) AS runs,
       COALESCE(SUM(CASE WHEN r.status = 'pending' THEN 1 ELSE 0 END), 0) AS pending,
       COALESCE(SUM(CASE WHEN r.status = 'running' THEN 1 ELSE 0 END), 0) AS running,
       COALESCE(SUM(CASE WHEN r.status = 'succeeded' THEN 1 ELSE 0 END), 0) AS succeeded
FROM job_backfill b LEFT JOIN job_run r ON r.backfill_id = b.id
WHERE b.job_id = ? AND (? = 0 OR b.id < ?)
GROUP BY b.id, b.job_id, b.app, b.from_date, b.to_date, b.newest_first, b.parallel, b.only_missing, b.created_by, b.created_at
ORDER BY b.id DESC LIMIT ?;

-- name: JobLockForBackfill :one
-- in: id int64
-- out: id int64
-- The job a backfill is created for, locked until the backfill's runs are
-- written (a delete waits; a job deleted meanwhile is not found).
SELECT id FROM job WHERE id = ? {{lock_shared}};

-- name: JobRunsScheduledBetween :many
-- in: job_id int64, from_ms int64, to_ms int64
-- out: JobDateRun
-- The runs of a job scheduled in [from, to): what a backfill finds of its
-- dates (the run keys it would create, and the runs that succeeded).
SELECT id, scheduled_at, status, '' AS workflow_date FROM job_run
WHERE job_id = ? AND scheduled_at >= ? AND scheduled_at < ? AND trigger_kind <> 'workflow' ORDER BY id;

-- name: JobRunsOfWorkflowDates :many
-- in: job_id int64, from_date string, to_date string
-- out: JobDateRun
-- The runs of a job that workflow nodes created for runs of business dates
-- in [from, to], with that date (a job's waits count them for it).
SELECT r.id, r.scheduled_at, r.status, w.business_date AS workflow_date FROM job_run r
  JOIN workflow_node_run n ON n.job_run_id = r.id
  JOIN workflow_run w ON w.id = n.workflow_run_id
WHERE r.job_id = ? AND r.trigger_kind = 'workflow' AND w.business_date >= ? AND w.business_date <= ? ORDER BY r.id;

-- name: JobBackfillTurns :many
-- in: backfill_ids []int64, scheduled_at int64
-- out: backfill_id int64, id int64, status string, parallel int
-- The runs of job backfills (IN list) that compete for their turn: the
-- running ones, and the pending ones due at ? (a later date's run does not
-- hold the others back), in id order, which is the backfill's order, with
-- the backfill's parallelism (idx_run_backfill: backfill_status is the
-- status of a backfill's run, migration 0050).
SELECT r.backfill_id, r.id, r.status, b.parallel FROM job_run r JOIN job_backfill b ON b.id = r.backfill_id
WHERE r.backfill_id IN (?) AND (r.backfill_status = 'running' OR (r.backfill_status = 'pending' AND r.scheduled_at <= ?))
ORDER BY r.backfill_id, r.id;
