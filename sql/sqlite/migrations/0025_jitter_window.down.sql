DROP INDEX idx_run_start_after;
ALTER TABLE job_run DROP COLUMN start_after;
ALTER TABLE job DROP COLUMN jitter_window;
