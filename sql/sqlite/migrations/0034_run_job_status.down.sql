DROP INDEX idx_run_job_status;
CREATE INDEX idx_run_job_id ON job_run (job_id, id);
