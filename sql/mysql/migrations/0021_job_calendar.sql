-- migrate up
-- A job may reference a business calendar (docs/schedules.md, "A job on a
-- business calendar"): calendar_id (0: none; a global calendar or one of
-- the job's app), calendar_rule (business_days_only, skip_holidays, shift;
-- '' without a calendar) and calendar_shift (next, previous; only with
-- shift). Each run keeps the calendar it was decided with: its id and
-- version (business_calendar.version, the content hash that changes with
-- every edit of the days or the week), and, for a firing the rule shift
-- moved to another day, the instant the cron expression gave (shifted_from;
-- the run key is the moved instant).
ALTER TABLE job ADD COLUMN calendar_id BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN calendar_rule VARCHAR(32) NOT NULL DEFAULT '',
  ADD COLUMN calendar_shift VARCHAR(16) NOT NULL DEFAULT '',
  ADD KEY idx_job_calendar (calendar_id);
ALTER TABLE job_run ADD COLUMN calendar_id BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN calendar_version VARCHAR(64) NOT NULL DEFAULT '',
  ADD COLUMN shifted_from BIGINT NULL;

-- migrate down
ALTER TABLE job_run DROP COLUMN shifted_from, DROP COLUMN calendar_version, DROP COLUMN calendar_id;
ALTER TABLE job DROP KEY idx_job_calendar, DROP COLUMN calendar_shift, DROP COLUMN calendar_rule, DROP COLUMN calendar_id;
