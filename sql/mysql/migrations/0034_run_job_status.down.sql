ALTER TABLE job_run DROP INDEX idx_run_job_status, ADD INDEX idx_run_job_id (job_id, id);
