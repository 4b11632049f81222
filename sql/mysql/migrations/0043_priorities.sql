-- migrate up
-- Priorities (issue 33): a job's priority (0 low, 1 normal, 2 high, 3
-- critical; every job normal after this migration), and a run's when its
-- trigger or backfill lowered it (NULL: its job's). Both instant on
-- MariaDB; no index: the leader orders each page of due runs it reads.
ALTER TABLE job ADD COLUMN priority SMALLINT NOT NULL DEFAULT 1;
ALTER TABLE job_run ADD COLUMN priority SMALLINT NULL;

-- migrate down
ALTER TABLE job_run DROP COLUMN priority;
ALTER TABLE job DROP COLUMN priority;
