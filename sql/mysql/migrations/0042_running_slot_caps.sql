-- migrate up
-- Concurrency caps (issue 33): the most slots of an app's runs, or of one
-- job's runs, placed on executors at once (assigned, queued or running).
-- NULL: no cap (every app and job after this migration). The leader counts
-- an app's placed slots through its executors (idx_attempt_executor) and
-- a job's through its running runs (idx_run_job_status): no new index.
ALTER TABLE app ADD COLUMN max_running_slots INT NULL;
ALTER TABLE job ADD COLUMN max_running_slots INT NULL;

-- migrate down
ALTER TABLE job DROP COLUMN max_running_slots;
ALTER TABLE app DROP COLUMN max_running_slots;
