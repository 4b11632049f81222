-- migrate up
-- Two indexes of job_run that no query reads any more: see the MySQL
-- migration of the same version.
DROP INDEX IF EXISTS idx_run_status_id;
DROP INDEX IF EXISTS idx_run_app_id;

-- migrate down
CREATE INDEX idx_run_status_id ON job_run (status, id);
CREATE INDEX idx_run_app_id ON job_run (app, id);
