ALTER TABLE job_run DROP COLUMN shifted_from;
ALTER TABLE job_run DROP COLUMN calendar_version;
ALTER TABLE job_run DROP COLUMN calendar_id;
DROP INDEX idx_job_calendar;
ALTER TABLE job DROP COLUMN calendar_shift;
ALTER TABLE job DROP COLUMN calendar_rule;
ALTER TABLE job DROP COLUMN calendar_id;
