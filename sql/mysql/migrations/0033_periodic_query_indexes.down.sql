DROP TABLE app_job_count;
ALTER TABLE workflow_run DROP INDEX idx_workflow_run_scheduled;
ALTER TABLE job_run DROP INDEX idx_run_scheduled;
ALTER TABLE job DROP INDEX idx_job_handler, DROP INDEX idx_job_due, ADD KEY idx_job_due (enabled, next_fire_at);
