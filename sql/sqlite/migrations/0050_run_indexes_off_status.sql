-- migrate up
-- Indexes of job_run that a run's status changes do not rewrite: see the
-- MySQL migration of the same version. SQLite adds a generated column only
-- as VIRTUAL; its index holds the computed value.
DROP INDEX idx_run_start_after;
DROP INDEX idx_run_held_until;
DROP INDEX idx_run_backfill;
ALTER TABLE job_run ADD COLUMN backfill_status VARCHAR(24) GENERATED ALWAYS AS (CASE WHEN backfill_id = 0 THEN NULL ELSE status END) VIRTUAL;
CREATE INDEX idx_run_start_after ON job_run (start_after);
CREATE INDEX idx_run_held_until ON job_run (held_until);
CREATE INDEX idx_run_backfill ON job_run (backfill_id, backfill_status);

-- migrate down
DROP INDEX idx_run_backfill;
DROP INDEX idx_run_held_until;
DROP INDEX idx_run_start_after;
ALTER TABLE job_run DROP COLUMN backfill_status;
CREATE INDEX idx_run_start_after ON job_run (status, start_after);
CREATE INDEX idx_run_held_until ON job_run (status, held_until);
CREATE INDEX idx_run_backfill ON job_run (backfill_id, status);
