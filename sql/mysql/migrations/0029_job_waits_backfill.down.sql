DROP TABLE job_backfill;
ALTER TABLE job_run DROP INDEX idx_run_backfill, DROP INDEX idx_run_held_until, DROP COLUMN backfill_id, DROP COLUMN held_until;
ALTER TABLE job DROP COLUMN on_timeout, DROP COLUMN wait_timeout, DROP COLUMN wait_for;
