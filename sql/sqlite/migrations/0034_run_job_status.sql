-- migrate up
-- A job's runs by status in one index range: see the MySQL migration of
-- the same version.
DROP INDEX idx_run_job_id;
CREATE INDEX idx_run_job_status ON job_run (job_id, status, finished_at);

-- migrate down
DROP INDEX idx_run_job_status;
CREATE INDEX idx_run_job_id ON job_run (job_id, id);
