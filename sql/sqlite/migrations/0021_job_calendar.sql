-- migrate up
-- A job's business calendar: see the MySQL migration of the same version.
ALTER TABLE job ADD COLUMN calendar_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job ADD COLUMN calendar_rule TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN calendar_shift TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_job_calendar ON job (calendar_id);
ALTER TABLE job_run ADD COLUMN calendar_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_run ADD COLUMN calendar_version TEXT NOT NULL DEFAULT '';
ALTER TABLE job_run ADD COLUMN shifted_from INTEGER NULL;

-- migrate down
ALTER TABLE job_run DROP COLUMN shifted_from;
ALTER TABLE job_run DROP COLUMN calendar_version;
ALTER TABLE job_run DROP COLUMN calendar_id;
DROP INDEX idx_job_calendar;
ALTER TABLE job DROP COLUMN calendar_shift;
ALTER TABLE job DROP COLUMN calendar_rule;
ALTER TABLE job DROP COLUMN calendar_id;
