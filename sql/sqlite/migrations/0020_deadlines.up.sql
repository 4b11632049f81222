-- Deadlines: see the MySQL migration of the same version.
ALTER TABLE job ADD COLUMN start_deadline TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN finish_deadline TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN deadline_action TEXT NOT NULL DEFAULT 'alarm';
ALTER TABLE job_run ADD COLUMN start_deadline_at INTEGER NULL;
ALTER TABLE job_run ADD COLUMN finish_deadline_at INTEGER NULL;
ALTER TABLE job_run ADD COLUMN deadline_action TEXT NOT NULL DEFAULT '';
ALTER TABLE job_run ADD COLUMN deadline_check_at INTEGER NULL;
CREATE INDEX idx_run_deadline_check ON job_run (deadline_check_at);
