-- migrate up
-- The dashboard's per-minute rollup of runs (admin/runstats, docs/metrics.md
-- "Dashboard"): the leader folds each closed minute once into one row per
-- app, so that GET /api/v1/dashboard reads minutes × apps rows instead of
-- the window's runs.
--
-- run_stat_minute: minute is the start of the minute (Unix ms). started
-- counts the runs whose started_at falls in the minute; succeeded, failed
-- (failed and partially_failed), cancelled and skipped count the runs whose
-- finished_at falls in it, so that a run that ends twenty minutes after its
-- firing is counted in the minute it ended. lag_0 … lag_11 are the start-lag
-- histogram of the runs finished in the minute (scheduled_at → first slot
-- started on an executor; retries and runs that started no slot are not in
-- it), bucket i holding the lags up to runstats bound i: 100 ms, 250 ms,
-- 500 ms, 1 s, 2.5 s, 5 s, 10 s, 30 s, 1 min, 5 min, 15 min, and beyond.
-- Summing the buckets over any window gives that window's percentiles.
--
-- run_stat_cursor (one row, id 1): every minute before folded_until is
-- folded. A fold moves it by one minute with a conditional update in the
-- transaction that inserts the minute's rows, so that each minute is folded
-- exactly once, across restarts and a leader hand-over.
--
-- idx_run_started and idx_run_finished give a fold the runs of its minute
-- (O(runs of the minute)); without them it would read all of job_run. On a
-- large installation they are built online, in minutes at millions of rows
-- (docs/operations.md, "Upgrading").
CREATE TABLE run_stat_minute (
  minute     BIGINT      NOT NULL,
  app        VARCHAR(64) NOT NULL,
  started    BIGINT      NOT NULL DEFAULT 0,
  succeeded  BIGINT      NOT NULL DEFAULT 0,
  failed     BIGINT      NOT NULL DEFAULT 0,
  cancelled  BIGINT      NOT NULL DEFAULT 0,
  skipped    BIGINT      NOT NULL DEFAULT 0,
  lag_0      BIGINT      NOT NULL DEFAULT 0,
  lag_1      BIGINT      NOT NULL DEFAULT 0,
  lag_2      BIGINT      NOT NULL DEFAULT 0,
  lag_3      BIGINT      NOT NULL DEFAULT 0,
  lag_4      BIGINT      NOT NULL DEFAULT 0,
  lag_5      BIGINT      NOT NULL DEFAULT 0,
  lag_6      BIGINT      NOT NULL DEFAULT 0,
  lag_7      BIGINT      NOT NULL DEFAULT 0,
  lag_8      BIGINT      NOT NULL DEFAULT 0,
  lag_9      BIGINT      NOT NULL DEFAULT 0,
  lag_10     BIGINT      NOT NULL DEFAULT 0,
  lag_11     BIGINT      NOT NULL DEFAULT 0,
  PRIMARY KEY (minute, app),
  KEY idx_run_stat_app (app, minute)
) ENGINE=InnoDB;
CREATE TABLE run_stat_cursor (
  id            INT    NOT NULL PRIMARY KEY,
  folded_until  BIGINT NOT NULL
) ENGINE=InnoDB;
ALTER TABLE job_run ADD KEY idx_run_started (started_at), ADD KEY idx_run_finished (finished_at);

-- migrate down
ALTER TABLE job_run DROP INDEX idx_run_finished, DROP INDEX idx_run_started;
DROP TABLE run_stat_cursor;
DROP TABLE run_stat_minute;
