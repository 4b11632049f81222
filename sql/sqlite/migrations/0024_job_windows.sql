-- migrate up
-- Windows and one-offs of a job: see the MySQL migration of the same version.
ALTER TABLE job ADD COLUMN start_at INTEGER NULL;
ALTER TABLE job ADD COLUMN end_at INTEGER NULL;
ALTER TABLE job ADD COLUMN max_runs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job ADD COLUMN completed_at INTEGER NULL;
ALTER TABLE job ADD COLUMN completed_msg TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN pause_until INTEGER NULL;
CREATE INDEX idx_job_pause_until ON job (pause_until);

-- migrate down
DROP INDEX idx_job_pause_until;
ALTER TABLE job DROP COLUMN pause_until;
ALTER TABLE job DROP COLUMN completed_msg;
ALTER TABLE job DROP COLUMN completed_at;
ALTER TABLE job DROP COLUMN max_runs;
ALTER TABLE job DROP COLUMN end_at;
ALTER TABLE job DROP COLUMN start_at;
