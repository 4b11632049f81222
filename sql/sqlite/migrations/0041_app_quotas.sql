-- migrate up
-- Quotas of an app: see the MySQL migration of the same version.
ALTER TABLE app ADD COLUMN max_jobs BIGINT NULL;
ALTER TABLE app ADD COLUMN max_slots_per_run INT NULL;
ALTER TABLE app ADD COLUMN max_backfill_parallel INT NULL;

-- migrate down
ALTER TABLE app DROP COLUMN max_jobs;
ALTER TABLE app DROP COLUMN max_slots_per_run;
ALTER TABLE app DROP COLUMN max_backfill_parallel;
