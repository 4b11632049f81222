DROP TABLE job_backfill;
DROP INDEX idx_run_backfill;
DROP INDEX idx_run_held_until;
ALTER TABLE job_run DROP COLUMN backfill_id;
ALTER TABLE job_run DROP COLUMN held_until;
ALTER TABLE job DROP COLUMN on_timeout;
ALTER TABLE job DROP COLUMN wait_timeout;
ALTER TABLE job DROP COLUMN wait_for;
