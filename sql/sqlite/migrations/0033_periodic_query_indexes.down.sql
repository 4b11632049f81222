DROP TABLE app_job_count;
DROP INDEX idx_workflow_run_scheduled;
DROP INDEX idx_run_scheduled;
DROP INDEX idx_job_handler;
DROP INDEX idx_job_due;
CREATE INDEX idx_job_due ON job (enabled, next_fire_at);
