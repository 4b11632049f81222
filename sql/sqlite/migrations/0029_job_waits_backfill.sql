-- migrate up
-- Plain jobs that wait, and backfills of a plain job: see the MySQL
-- migration of the same version.
ALTER TABLE job ADD COLUMN wait_for TEXT NULL;
ALTER TABLE job ADD COLUMN wait_timeout TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN on_timeout TEXT NOT NULL DEFAULT '';
ALTER TABLE job_run ADD COLUMN held_until INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_run ADD COLUMN backfill_id INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_run_held_until ON job_run (status, held_until);
CREATE INDEX idx_run_backfill ON job_run (backfill_id, status);
CREATE TABLE job_backfill (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  job_id        BIGINT       NOT NULL,
  app           VARCHAR(64)  NOT NULL,
  from_date     VARCHAR(10)  NOT NULL,
  to_date       VARCHAR(10)  NOT NULL,
  newest_first  INTEGER      NOT NULL DEFAULT 0,
  parallel      INTEGER      NOT NULL,
  only_missing  INTEGER      NOT NULL DEFAULT 0,
  created_by    VARCHAR(64)  NOT NULL DEFAULT '',
  created_at    BIGINT       NOT NULL
);
CREATE INDEX idx_job_backfill ON job_backfill (job_id, id);

-- migrate down
DROP TABLE job_backfill;
DROP INDEX idx_run_backfill;
DROP INDEX idx_run_held_until;
ALTER TABLE job_run DROP COLUMN backfill_id;
ALTER TABLE job_run DROP COLUMN held_until;
ALTER TABLE job DROP COLUMN on_timeout;
ALTER TABLE job DROP COLUMN wait_timeout;
ALTER TABLE job DROP COLUMN wait_for;
