DROP INDEX idx_run_job_id;
DROP INDEX idx_run_status_id;
DROP INDEX idx_run_app_id;
ALTER TABLE job_run DROP COLUMN app;
