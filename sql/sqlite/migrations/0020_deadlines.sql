-- migrate up
-- Deadlines: see the MySQL migration of the same version.
ALTER TABLE job ADD COLUMN start_deadline TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN finish_deadline TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN deadline_action TEXT NOT NULL DEFAULT 'alarm';
ALTER TABLE job_run ADD COLUMN start_deadline_at INTEGER NULL;
ALTER TABLE job_run ADD COLUMN finish_deadline_at INTEGER NULL;
ALTER TABLE job_run ADD COLUMN deadline_action TEXT NOT NULL DEFAULT '';
ALTER TABLE job_run ADD COLUMN deadline_check_at INTEGER NULL;
CREATE INDEX idx_run_deadline_check ON job_run (deadline_check_at);

-- migrate down
DROP INDEX idx_run_deadline_check;
ALTER TABLE job_run DROP COLUMN deadline_check_at;
ALTER TABLE job_run DROP COLUMN deadline_action;
ALTER TABLE job_run DROP COLUMN finish_deadline_at;
ALTER TABLE job_run DROP COLUMN start_deadline_at;
ALTER TABLE job DROP COLUMN deadline_action;
ALTER TABLE job DROP COLUMN finish_deadline;
ALTER TABLE job DROP COLUMN start_deadline;
