-- migrate up
-- A run keeps its job's name, and run lists are ordered by scheduled time:
-- see the MySQL migration of the same version.
ALTER TABLE job_run ADD COLUMN job_name VARCHAR(128) NOT NULL DEFAULT '';
UPDATE job_run SET job_name = COALESCE((SELECT j.name FROM job j WHERE j.id = job_run.job_id), '');
CREATE INDEX idx_run_sched_id ON job_run (scheduled_at, id);
CREATE INDEX idx_run_app_sched ON job_run (app, scheduled_at, id);

-- migrate down
DROP INDEX idx_run_app_sched;
DROP INDEX idx_run_sched_id;
ALTER TABLE job_run DROP COLUMN job_name;
