ALTER TABLE job_run DROP KEY idx_run_deadline_check, DROP COLUMN deadline_check_at, DROP COLUMN deadline_action,
  DROP COLUMN finish_deadline_at, DROP COLUMN start_deadline_at;
ALTER TABLE job DROP COLUMN deadline_action, DROP COLUMN finish_deadline, DROP COLUMN start_deadline;
