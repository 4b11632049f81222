-- migrate up
-- Scheduling partitions: see the MySQL migration of the same version.
CREATE TABLE scheduler_partition (
  id         INT           NOT NULL PRIMARY KEY,
  epoch      BIGINT        NOT NULL DEFAULT 0,
  holder     TEXT          NOT NULL DEFAULT '',
  claimed_ms BIGINT        NOT NULL DEFAULT 0
);

-- migrate down
DROP TABLE scheduler_partition;
