-- Named queries of the job and run lists (GET /api/v1/jobs, /api/v1/runs):
-- server-side search, filters, sort and keyset paging (see JobPage and
-- ListRuns in admin/store, migration 0036). {{filters}} is "WHERE" and the
-- conditions of the request (always "no workflow_id" for jobs: a
-- workflow's inline node is not listed), each a range of an index in the
-- page's order: idx_job_name (name), uk_job_app_name (app, name),
-- idx_job_state_name (state, name), idx_job_app_state_name (app, state,
-- name), idx_job_next (next_fire_at), the primary key (id),
-- idx_job_handler (handler, id).

-- name: JobPageByName
SELECT {{JobColumns}} FROM job {{filters}} ORDER BY name, id LIMIT ?;

-- name: JobPageByID
SELECT {{JobColumns}} FROM job {{filters}} ORDER BY id LIMIT ?;

-- name: JobPageByNext
-- Jobs with a next firing first, soonest first; then those without one
-- (disabled, completed) by id: the caller asks for each part in turn.
SELECT {{JobColumns}} FROM job {{filters}} ORDER BY next_fire_at, id LIMIT ?;

-- name: JobScanByName
-- A bounded search window (a substring of the name, a schedule kind): the
-- next ? jobs in the list's order with what the search tests; the caller
-- keeps the matches and reads them whole (JobsByIDs).
SELECT id, name, next_fire_at, cron_expr FROM job {{filters}} ORDER BY name, id LIMIT ?;

-- name: JobScanByID
SELECT id, name, next_fire_at, cron_expr FROM job {{filters}} ORDER BY id LIMIT ?;

-- name: JobScanByNext
SELECT id, name, next_fire_at, cron_expr FROM job {{filters}} ORDER BY next_fire_at, id LIMIT ?;

-- name: JobsByIDs :many
-- in: ids []int64
-- out: Job
SELECT {{JobColumns}} FROM job WHERE id IN (?);

-- name: JobCountCapped
-- How many jobs match, counting at most ? (the caller asks for its cap + 1
-- and says "more than cap" when it gets it).
SELECT COUNT(*) FROM (SELECT 1 FROM job {{filters}} LIMIT ?) c;

-- name: AppJobCountSum
-- Untyped: {{filters}} is built per call.
-- The exact number of ordinary jobs of the apps the filters name (or of
-- every app), from app_job_count (migration 0033).
SELECT COALESCE(SUM(jobs), 0) FROM app_job_count {{filters}};

-- name: RunCountCapped
-- How many runs match RunList's filters, counting at most ?.
SELECT COUNT(*) FROM (SELECT 1 FROM job_run r {{filters}} LIMIT ?) c;
