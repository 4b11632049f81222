-- migrate up
-- Run lists page newest first by id (keyset: id < before). With a job, a
-- status or an app filter (per-app permissions) these indexes give the rows
-- in that order directly instead of sorting every run of the job, status or
-- app (millions of runs). job_run.app is its job's app, which never changes.
ALTER TABLE job_run ADD COLUMN app VARCHAR(64) NOT NULL DEFAULT '',
  ADD INDEX idx_run_job_id (job_id, id), ADD INDEX idx_run_status_id (status, id), ADD INDEX idx_run_app_id (app, id);
UPDATE job_run r JOIN job j ON j.id = r.job_id SET r.app = j.app;

-- migrate down
ALTER TABLE job_run DROP INDEX idx_run_job_id, DROP INDEX idx_run_status_id, DROP INDEX idx_run_app_id, DROP COLUMN app;
