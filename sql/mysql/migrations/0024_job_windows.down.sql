ALTER TABLE job DROP KEY idx_job_pause_until, DROP COLUMN pause_until, DROP COLUMN completed_msg, DROP COLUMN completed_at, DROP COLUMN max_runs, DROP COLUMN end_at, DROP COLUMN start_at;
