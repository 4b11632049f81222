-- migrate up
-- The dashboard's rollup of every app together: see the MySQL migration of
-- the same number.
CREATE TABLE run_stat_minute_all (
  minute     BIGINT NOT NULL PRIMARY KEY,
  started    BIGINT NOT NULL DEFAULT 0,
  succeeded  BIGINT NOT NULL DEFAULT 0,
  failed     BIGINT NOT NULL DEFAULT 0,
  cancelled  BIGINT NOT NULL DEFAULT 0,
  skipped    BIGINT NOT NULL DEFAULT 0,
  lag_0      BIGINT NOT NULL DEFAULT 0,
  lag_1      BIGINT NOT NULL DEFAULT 0,
  lag_2      BIGINT NOT NULL DEFAULT 0,
  lag_3      BIGINT NOT NULL DEFAULT 0,
  lag_4      BIGINT NOT NULL DEFAULT 0,
  lag_5      BIGINT NOT NULL DEFAULT 0,
  lag_6      BIGINT NOT NULL DEFAULT 0,
  lag_7      BIGINT NOT NULL DEFAULT 0,
  lag_8      BIGINT NOT NULL DEFAULT 0,
  lag_9      BIGINT NOT NULL DEFAULT 0,
  lag_10     BIGINT NOT NULL DEFAULT 0,
  lag_11     BIGINT NOT NULL DEFAULT 0
);
INSERT INTO run_stat_minute_all (minute, started, succeeded, failed, cancelled, skipped, lag_0, lag_1, lag_2, lag_3, lag_4, lag_5, lag_6, lag_7, lag_8, lag_9, lag_10, lag_11)
SELECT minute, SUM(started), SUM(succeeded), SUM(failed), SUM(cancelled), SUM(skipped), SUM(lag_0), SUM(lag_1), SUM(lag_2), SUM(lag_3), SUM(lag_4), SUM(lag_5), SUM(lag_6), SUM(lag_7), SUM(lag_8), SUM(lag_9), SUM(lag_10), SUM(lag_11)
FROM run_stat_minute GROUP BY minute;

-- migrate down
DROP TABLE run_stat_minute_all;
