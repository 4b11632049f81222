-- migrate up
-- Plain jobs that wait, and backfills of a plain job (docs/workflows.md,
-- "Waits of a plain job" and "Backfill of a plain job").
--
-- job.wait_for is the runs of the same business date, of other jobs or
-- workflows, that each run of the job waits for before its slots are handed
-- out (a JSON array like a workflow node's wait_for; NULL for none);
-- wait_timeout (a duration, '' for the default) and on_timeout ('fail' or
-- 'skip', '' for fail) say how long, and what the run does then.
--
-- job_run.held_until is the instant (Unix ms) before which the leader does
-- not look at a pending run again: a run whose waits are not met, or a
-- backfill's run waiting for its turn, is held (its reason in error) and
-- re-checked then. 0: not held. idx_run_held_until finds the next one to
-- wake for.
--
-- job_backfill is a backfill of a job: one run per business date of
-- [from_date, to_date], oldest or newest first (the order of their ids), at
-- most parallel running at once. job_run.backfill_id is the backfill a run
-- belongs to (0: none).
ALTER TABLE job ADD COLUMN wait_for MEDIUMTEXT NULL,
  ADD COLUMN wait_timeout VARCHAR(32) NOT NULL DEFAULT '',
  ADD COLUMN on_timeout VARCHAR(8) NOT NULL DEFAULT '';
ALTER TABLE job_run ADD COLUMN held_until BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN backfill_id BIGINT NOT NULL DEFAULT 0,
  ADD KEY idx_run_held_until (status, held_until),
  ADD KEY idx_run_backfill (backfill_id, status);
CREATE TABLE job_backfill (
  id            BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
  job_id        BIGINT       NOT NULL,
  app           VARCHAR(64)  NOT NULL,
  from_date     VARCHAR(10)  NOT NULL,
  to_date       VARCHAR(10)  NOT NULL,
  newest_first  TINYINT      NOT NULL DEFAULT 0,
  parallel      INT          NOT NULL,
  only_missing  TINYINT      NOT NULL DEFAULT 0,
  created_by    VARCHAR(64)  NOT NULL DEFAULT '',
  created_at    BIGINT       NOT NULL,
  KEY idx_job_backfill (job_id, id)
) ENGINE=InnoDB;

-- migrate down
DROP TABLE job_backfill;
ALTER TABLE job_run DROP INDEX idx_run_backfill, DROP INDEX idx_run_held_until, DROP COLUMN backfill_id, DROP COLUMN held_until;
ALTER TABLE job DROP COLUMN on_timeout, DROP COLUMN wait_timeout, DROP COLUMN wait_for;
