-- migrate up
-- Executor utilization over time (issue 20, item 3): every sample interval
-- (--sample-interval, default 30s) the leader records one row per app that
-- has executors (admin/utilization). at is the database clock, Unix ms; the
-- counts are of that moment:
--   executors  online executors of the app
--   capacity   their slots (the sum of their capacities)
--   busy       slots working on them: running, or dispatched and not yet
--              acknowledged (the dashboard's busy = active - queued)
--   queued     slots acknowledged by them and waiting for a free slot
-- Retention deletes rows past their horizon (default 7 days) by idx_util_at,
-- which also serves GET /api/v1/stats/utilization's time range.
CREATE TABLE utilization_sample (
  id         BIGINT      NOT NULL AUTO_INCREMENT PRIMARY KEY,
  at         BIGINT      NOT NULL,
  app        VARCHAR(64) NOT NULL,
  executors  INT         NOT NULL,
  capacity   INT         NOT NULL,
  busy       INT         NOT NULL,
  queued     INT         NOT NULL,
  KEY idx_util_at (at, id)
) ENGINE=InnoDB;

-- migrate down
DROP TABLE utilization_sample;
