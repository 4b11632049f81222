ALTER TABLE job_run DROP INDEX idx_run_app_sched, DROP INDEX idx_run_sched_id;
ALTER TABLE job_run DROP COLUMN job_name;
