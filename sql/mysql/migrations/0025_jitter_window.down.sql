ALTER TABLE job_run DROP INDEX idx_run_start_after, DROP COLUMN start_after;
ALTER TABLE job DROP COLUMN jitter_window;
