-- migrate up
-- Priorities: see the MySQL migration of the same version.
ALTER TABLE job ADD COLUMN priority INTEGER NOT NULL DEFAULT 1;
ALTER TABLE job_run ADD COLUMN priority INTEGER NULL;

-- migrate down
ALTER TABLE job_run DROP COLUMN priority;
ALTER TABLE job DROP COLUMN priority;
