-- Apps as objects (issue 33): the app table, one row per app that a job or
-- an executor names.

-- name: AppList :many
-- out: App
SELECT name, description, owners, max_jobs, max_slots_per_run, max_backfill_parallel, max_running_slots, max_starts_per_second, weight, max_log_bytes_per_day, version, created_at, created_by, updated_at, updated_by FROM app ORDER BY name;

-- name: AppByName :one
-- in: name string
-- out: App
SELECT name, description, owners, max_jobs, max_slots_per_run, max_backfill_parallel, max_running_slots, max_starts_per_second, weight, max_log_bytes_per_day, version, created_at, created_by, updated_at, updated_by FROM app WHERE name = ?;

-- name: AppInsert :exec
-- in: App
INSERT INTO app (name, description, owners, max_jobs, max_slots_per_run, max_backfill_parallel, max_running_slots, max_starts_per_second, weight, max_log_bytes_per_day, version, created_at, created_by, updated_at, updated_by)
VALUES (:name, :description, :owners, :max_jobs, :max_slots_per_run, :max_backfill_parallel, :max_running_slots, :max_starts_per_second, :weight, :max_log_bytes_per_day, 1, {{now_ms}}, :created_by, {{now_ms}}, :created_by);

-- name: AppEnsure :exec
-- in: name string
-- The row of an app a job or an executor names, when it has none yet.
{{insert_ignore}} INTO app (name, created_at, updated_at) VALUES (?, {{now_ms}}, {{now_ms}});

-- name: AppUpdate :exec
-- in: App
-- A guarded edit: the version read must still be the row's.
UPDATE app SET description = :description, owners = :owners, max_jobs = :max_jobs, max_slots_per_run = :max_slots_per_run,
  max_backfill_parallel = :max_backfill_parallel, max_running_slots = :max_running_slots, max_starts_per_second = :max_starts_per_second, weight = :weight, max_log_bytes_per_day = :max_log_bytes_per_day, version = version + 1, updated_at = {{now_ms}}, updated_by = :updated_by
WHERE name = :name AND version = :version;

-- name: AppCaps :many
-- out: name string, max_running_slots int64, max_starts_per_second int64, weight int64
-- The apps with a concurrency cap, a start rate or a weight, read by the
-- leader at each start round and placing round (one row per such app).
SELECT name, COALESCE(max_running_slots, 0) AS max_running_slots, COALESCE(max_starts_per_second, 0) AS max_starts_per_second,
       COALESCE(weight, 1) AS weight
FROM app WHERE max_running_slots IS NOT NULL OR max_starts_per_second IS NOT NULL OR weight IS NOT NULL;

-- name: PlacedSlots :one
-- out: n int64
-- Every slot placed on an executor and not ended (from each executor,
-- idx_attempt_executor (executor_id, live)):
-- what the platform's shared capacity (--max-running-slots) limits.
SELECT COUNT(*) FROM executor e {{join_in_order}} slot_attempt a ON a.executor_id = e.id AND a.live = 1
WHERE a.status IN ('assigned', 'running') AND a.current = 1;

-- name: AppsPlacedSlots :many
-- in: apps []string
-- out: app string, n int64
-- The slots of apps (IN list) placed on their executors and not ended:
-- assigned, queued or running. Each executor's range of
-- idx_attempt_executor (executor_id, live): O(those slots), whatever the
-- history. An executor runs its own app's slots only.
SELECT e.app, COUNT(*) AS n
FROM executor e {{join_in_order}} slot_attempt a ON a.executor_id = e.id AND a.live = 1 AND a.status IN ('assigned', 'running') AND a.current = 1
WHERE e.app IN (?)
GROUP BY e.app;

-- name: JobsPlacedSlots :many
-- in: job_ids []int64
-- out: job_id int64, n int64
-- The slots of some jobs' (IN list) running runs placed on executors and
-- not ended, by job (idx_run_job_status, then each run's attempts by
-- uk_slot_attempt; {{join_in_order}} keeps SQLite from starting at every
-- active attempt of any job). A job with none is left out.
SELECT r.job_id, COUNT(*) AS n
FROM job_run r {{join_in_order}} slot_attempt a ON a.run_id = r.id AND a.current = 1 AND a.status IN ('assigned', 'running') AND a.executor_id IS NOT NULL
WHERE r.job_id IN (?) AND r.status = 'running'
GROUP BY r.job_id;

-- name: QueueRuns :many
-- in: now_ms int64, now_ms int64, now_ms int64, limit int
-- out: QueueRunGroup
-- What waits to start, for the queue view: the due pending runs (scheduled
-- and, when jittered or held, past their start_after and held_until: as
-- the leader reads them), at most ? of them, oldest first (idx_run_status),
-- by app, priority and the reason they show. O(the runs read).
SELECT q.app, q.priority, q.error, COUNT(*) AS runs, MIN(q.scheduled_at) AS oldest
FROM (SELECT COALESCE(NULLIF(r.app, ''), j.app, '') AS app, COALESCE(r.priority, j.priority, 1) AS priority, r.error, r.scheduled_at
      FROM job_run r LEFT JOIN job j ON j.id = r.job_id
      WHERE r.status = 'pending' AND r.scheduled_at <= ? AND r.start_after <= ? AND r.held_until <= ?
      ORDER BY r.scheduled_at LIMIT ?) q
GROUP BY q.app, q.priority, q.error;

-- name: QueueSlots :many
-- in: limit int
-- out: QueueSlotGroup
-- The slots of started runs that wait for an executor (a cap held them
-- back, or a retry waits to be placed), at most ? of them, oldest first
-- (idx_attempt_executor), by app and priority.
SELECT q.app, q.priority, COUNT(*) AS slots, MIN(q.dispatched) AS oldest
FROM (SELECT COALESCE(NULLIF(r.app, ''), j.app, '') AS app, COALESCE(r.priority, j.priority, 1) AS priority,
             COALESCE(r.started_at, r.created_at) AS dispatched
      FROM slot_attempt a JOIN job_run r ON r.id = a.run_id LEFT JOIN job j ON j.id = r.job_id
      WHERE a.executor_id IS NULL AND a.live = 1 AND a.status = 'assigned' AND a.current = 1
      ORDER BY a.id LIMIT ?) q
GROUP BY q.app, q.priority;
