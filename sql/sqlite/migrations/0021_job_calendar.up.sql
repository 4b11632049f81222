-- A job's business calendar: see the MySQL migration of the same version.
ALTER TABLE job ADD COLUMN calendar_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job ADD COLUMN calendar_rule TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN calendar_shift TEXT NOT NULL DEFAULT '';
CREATE INDEX idx_job_calendar ON job (calendar_id);
ALTER TABLE job_run ADD COLUMN calendar_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_run ADD COLUMN calendar_version TEXT NOT NULL DEFAULT '';
ALTER TABLE job_run ADD COLUMN shifted_from INTEGER NULL;
