-- migrate up
-- The dashboard's per-minute rollup of runs: see the MySQL migration of the
-- same version.
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
  PRIMARY KEY (minute, app)
);
CREATE INDEX idx_run_stat_app ON run_stat_minute (app, minute);
CREATE TABLE run_stat_cursor (
  id            INT    NOT NULL PRIMARY KEY,
  folded_until  BIGINT NOT NULL
);
CREATE INDEX idx_run_started ON job_run (started_at);
CREATE INDEX idx_run_finished ON job_run (finished_at);

-- migrate down
DROP INDEX idx_run_finished;
DROP INDEX idx_run_started;
DROP TABLE run_stat_cursor;
DROP TABLE run_stat_minute;
