DROP INDEX idx_job_pause_until;
ALTER TABLE job DROP COLUMN pause_until;
ALTER TABLE job DROP COLUMN completed_msg;
ALTER TABLE job DROP COLUMN completed_at;
ALTER TABLE job DROP COLUMN max_runs;
ALTER TABLE job DROP COLUMN end_at;
ALTER TABLE job DROP COLUMN start_at;
