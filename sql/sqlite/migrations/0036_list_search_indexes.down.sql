DROP INDEX idx_run_trigger_sched;
DROP INDEX idx_job_next;
DROP INDEX idx_job_app_state_name;
DROP INDEX idx_job_state_name;
DROP INDEX idx_job_name;
ALTER TABLE job DROP COLUMN state;
