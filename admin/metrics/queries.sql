-- Counts for the cluster gauges of admin/metrics. Portable between MySQL
-- (MariaDB) and SQLite; each reads an index range or a small table only:
-- terminal runs and attempts (the history) are never counted.

-- name: RunsActive
SELECT status, COUNT(*) FROM job_run
WHERE status IN ('pending', 'running')
GROUP BY status;

-- name: SlotsActive
SELECT status, COUNT(*) FROM slot_attempt
WHERE status IN ('assigned', 'running') AND current = 1
GROUP BY status;

-- name: ExecutorsByState
SELECT state, COUNT(*) FROM executor GROUP BY state;

-- name: LeaderEpoch
SELECT epoch FROM leader WHERE id = 1;
