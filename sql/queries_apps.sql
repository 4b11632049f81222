-- Apps as objects (issue 33): the app table, one row per app that a job or
-- an executor names.

-- name: AppList
SELECT name, description, owners, max_jobs, max_slots_per_run, max_backfill_parallel, version, created_at, created_by, updated_at, updated_by FROM app ORDER BY name;

-- name: AppByName
SELECT name, description, owners, max_jobs, max_slots_per_run, max_backfill_parallel, version, created_at, created_by, updated_at, updated_by FROM app WHERE name = ?;

-- name: AppInsert
INSERT INTO app (name, description, owners, max_jobs, max_slots_per_run, max_backfill_parallel, version, created_at, created_by, updated_at, updated_by)
VALUES (:name, :description, :owners, :max_jobs, :max_slots_per_run, :max_backfill_parallel, 1, {{now_ms}}, :created_by, {{now_ms}}, :created_by);

-- name: AppEnsure
-- The row of an app a job or an executor names, when it has none yet.
{{insert_ignore}} INTO app (name, created_at, updated_at) VALUES (?, {{now_ms}}, {{now_ms}});

-- name: AppUpdate
-- A guarded edit: the version read must still be the row's.
UPDATE app SET description = :description, owners = :owners, max_jobs = :max_jobs, max_slots_per_run = :max_slots_per_run,
  max_backfill_parallel = :max_backfill_parallel, version = version + 1, updated_at = {{now_ms}}, updated_by = :updated_by
WHERE name = :name AND version = :version;
