DROP INDEX idx_run_deadline_check;
ALTER TABLE job_run DROP COLUMN deadline_check_at;
ALTER TABLE job_run DROP COLUMN deadline_action;
ALTER TABLE job_run DROP COLUMN finish_deadline_at;
ALTER TABLE job_run DROP COLUMN start_deadline_at;
ALTER TABLE job DROP COLUMN deadline_action;
ALTER TABLE job DROP COLUMN finish_deadline;
ALTER TABLE job DROP COLUMN start_deadline;
