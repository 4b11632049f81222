-- migrate up
-- Deadlines (docs/schedules.md, "Deadlines"). A job states them
-- (start_deadline: a duration; finish_deadline: a duration or a local time
-- "HH:MM"; deadline_action: alarm or cancel); each run keeps them as
-- instants computed when it is created, as it keeps the time zone.
-- deadline_check_at is the earliest deadline of the run that the leader has
-- not checked yet, NULL once none is left: the leader reads the runs past it
-- by idx_run_deadline_check, whose range holds only unchecked ones.
ALTER TABLE job ADD COLUMN start_deadline VARCHAR(32) NOT NULL DEFAULT '',
  ADD COLUMN finish_deadline VARCHAR(32) NOT NULL DEFAULT '',
  ADD COLUMN deadline_action VARCHAR(16) NOT NULL DEFAULT 'alarm';
ALTER TABLE job_run ADD COLUMN start_deadline_at BIGINT NULL,
  ADD COLUMN finish_deadline_at BIGINT NULL,
  ADD COLUMN deadline_action VARCHAR(16) NOT NULL DEFAULT '',
  ADD COLUMN deadline_check_at BIGINT NULL,
  ADD KEY idx_run_deadline_check (deadline_check_at);

-- migrate down
ALTER TABLE job_run DROP KEY idx_run_deadline_check, DROP COLUMN deadline_check_at, DROP COLUMN deadline_action,
  DROP COLUMN finish_deadline_at, DROP COLUMN start_deadline_at;
ALTER TABLE job DROP COLUMN deadline_action, DROP COLUMN finish_deadline, DROP COLUMN start_deadline;
