-- migrate up
-- Server-side search, filters, sort and keyset paging of the job and run
-- lists (GET /api/v1/jobs, /api/v1/runs; docs/performance.md, "Lists at a
-- million jobs"): every page reads an index range in the page's order.
--
-- job.state is the job's state as the API names it (apitypes.Job.State:
-- disabled, completed, paused, scheduled), a virtual column computed from
-- enabled, completed_at and paused, so that "jobs of an app in a state, by
-- name" is one index range (idx_job_app_state_name) and no writer has to
-- keep it.
--
-- idx_job_name (name, id): the first page by name and the name-prefix
-- search over every app. idx_job_state_name: a state over every app, by
-- name. idx_job_next (next_fire_at, id): the list by next firing.
-- idx_run_trigger_sched (trigger_kind, scheduled_at, id): runs of one
-- trigger kind, latest first.
--
-- On a large installation these build indexes on job and job_run: online,
-- but minutes at millions of rows (docs/operations.md, "Upgrading").
ALTER TABLE job ADD COLUMN state VARCHAR(16) AS (CASE WHEN enabled = 0 THEN 'disabled' WHEN completed_at IS NOT NULL THEN 'completed'
                                                     WHEN paused = 1 THEN 'paused' ELSE 'scheduled' END) VIRTUAL;
ALTER TABLE job ADD KEY idx_job_name (name, id), ADD KEY idx_job_state_name (state, name, id),
  ADD KEY idx_job_app_state_name (app, state, name, id), ADD KEY idx_job_next (next_fire_at, id);
ALTER TABLE job_run ADD KEY idx_run_trigger_sched (trigger_kind, scheduled_at, id);

-- migrate down
ALTER TABLE job_run DROP INDEX idx_run_trigger_sched;
ALTER TABLE job DROP INDEX idx_job_next, DROP INDEX idx_job_app_state_name, DROP INDEX idx_job_state_name, DROP INDEX idx_job_name;
ALTER TABLE job DROP COLUMN state;
