ALTER TABLE job_run DROP COLUMN shifted_from, DROP COLUMN calendar_version, DROP COLUMN calendar_id;
ALTER TABLE job DROP KEY idx_job_calendar, DROP COLUMN calendar_shift, DROP COLUMN calendar_rule, DROP COLUMN calendar_id;
