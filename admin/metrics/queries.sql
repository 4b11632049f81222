-- Counts for the cluster gauges of admin/metrics. Portable between MySQL
-- (MariaDB) and SQLite; each reads an index range or a small table only:
-- terminal runs and attempts (the history) are never counted.

-- name: RunsActive
SELECT status, COUNT(*) FROM job_run
WHERE status IN ('pending', 'running')
GROUP BY status;

-- name: SlotsActive
-- The attempts that are not ended (live, migration 0051): each executor's
-- (idx_attempt_executor, for the executors' ids), and the ones that wait
-- for an executor (executor_id NULL).
SELECT status, COUNT(*) FROM (
  SELECT a.status FROM slot_attempt a
  WHERE a.executor_id IN (SELECT id FROM executor) AND a.live = 1 AND a.status IN ('assigned', 'running') AND a.current = 1
  UNION ALL
  SELECT a.status FROM slot_attempt a
  WHERE a.executor_id IS NULL AND a.live = 1 AND a.status IN ('assigned', 'running') AND a.current = 1) s
GROUP BY status;

-- name: ExecutorsByState
SELECT state, COUNT(*) FROM executor GROUP BY state;

-- name: LeaderEpoch
SELECT epoch FROM leader WHERE id = 1;

-- name: QueueDepth
-- Due pending runs by app and priority (0 low … 3 critical), the oldest
-- 100,000 at most (idx_run_status): O(what waits), never the history. The
-- argument is now (Unix ms).
SELECT q.app, q.priority, COUNT(*) FROM
  (SELECT COALESCE(NULLIF(r.app, ''), j.app, '') AS app, COALESCE(r.priority, j.priority, 1) AS priority
   FROM job_run r LEFT JOIN job j ON j.id = r.job_id
   WHERE r.status = 'pending' AND r.scheduled_at <= ?
   ORDER BY r.scheduled_at LIMIT 100000) q
GROUP BY q.app, q.priority;

-- name: BreakerStates
-- The circuit breakers with a state (job_breaker holds only those: open,
-- probing, or closed with failures counted): O(such jobs), never O(jobs).
SELECT b.app, COALESCE(j.name, ''), b.state FROM job_breaker b LEFT JOIN job j ON j.id = b.job_id;
