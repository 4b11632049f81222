-- migrate up
-- A job's jitter window and its runs' start_after: see the MySQL migration
-- of the same version.
ALTER TABLE job ADD COLUMN jitter_window TEXT NOT NULL DEFAULT '';
ALTER TABLE job_run ADD COLUMN start_after INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_run_start_after ON job_run (status, start_after);

-- migrate down
DROP INDEX idx_run_start_after;
ALTER TABLE job_run DROP COLUMN start_after;
ALTER TABLE job DROP COLUMN jitter_window;
