-- migrate up
-- Quotas of an app (issue 33), set by admins: the most ordinary jobs it
-- may have, the most slots one run of its jobs (or of its workflows'
-- inline nodes) may have, the most runs one of its backfills may run at
-- once. NULL: no limit (every app after this migration).
ALTER TABLE app ADD COLUMN max_jobs BIGINT NULL, ADD COLUMN max_slots_per_run INT NULL, ADD COLUMN max_backfill_parallel INT NULL;

-- migrate down
ALTER TABLE app DROP COLUMN max_jobs, DROP COLUMN max_slots_per_run, DROP COLUMN max_backfill_parallel;
