-- migrate up
-- Run lists page newest first by id (keyset: id < before): see the MySQL
-- migration.
ALTER TABLE job_run ADD COLUMN app VARCHAR(64) NOT NULL DEFAULT '';
UPDATE job_run SET app = COALESCE((SELECT j.app FROM job j WHERE j.id = job_run.job_id), '');
CREATE INDEX idx_run_job_id ON job_run (job_id, id);
CREATE INDEX idx_run_status_id ON job_run (status, id);
CREATE INDEX idx_run_app_id ON job_run (app, id);

-- migrate down
DROP INDEX idx_run_job_id;
DROP INDEX idx_run_status_id;
DROP INDEX idx_run_app_id;
ALTER TABLE job_run DROP COLUMN app;
