-- migrate up
-- A run keeps its job's name as it keeps its app (0008): the run history of a
-- deleted job still says whose runs they were (docs/operations.md, "Deleting
-- a job"). A job's app and name never change, so the copy never goes stale.
ALTER TABLE job_run ADD COLUMN job_name VARCHAR(128) NOT NULL DEFAULT '';
UPDATE job_run r JOIN job j ON j.id = r.job_id SET r.job_name = j.name;
-- Run lists are ordered by scheduled time (ties by id), keyset-paged on
-- (scheduled_at, id): these indexes give that order without a sort, for all
-- runs and per app; per job uk_run_key and per status idx_run_status do
-- (a secondary index ends with the primary key).
ALTER TABLE job_run ADD INDEX idx_run_sched_id (scheduled_at, id), ADD INDEX idx_run_app_sched (app, scheduled_at, id);

-- migrate down
ALTER TABLE job_run DROP INDEX idx_run_app_sched, DROP INDEX idx_run_sched_id;
ALTER TABLE job_run DROP COLUMN job_name;
