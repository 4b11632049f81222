-- migrate up
-- Executor utilization over time: see the MySQL migration of the same
-- version for the meaning of each column.
CREATE TABLE utilization_sample (
  id         INTEGER     PRIMARY KEY AUTOINCREMENT,
  at         BIGINT      NOT NULL,
  app        VARCHAR(64) NOT NULL,
  executors  INT         NOT NULL,
  capacity   INT         NOT NULL,
  busy       INT         NOT NULL,
  queued     INT         NOT NULL
);
CREATE INDEX idx_util_at ON utilization_sample (at, id);

-- migrate down
DROP TABLE utilization_sample;
