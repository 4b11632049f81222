-- migrate up
-- A quota on the run-log bytes an app stores a day (issue 33): the limit on
-- the app (NULL: none), the bytes stored and the lines dropped per app and
-- UTC day, and the lines of a run dropped for it.
ALTER TABLE app ADD COLUMN max_log_bytes_per_day BIGINT NULL;
ALTER TABLE run_log_state ADD COLUMN dropped_quota BIGINT NOT NULL DEFAULT 0;
CREATE TABLE app_log_day (
  app     VARCHAR(64) NOT NULL,
  day     CHAR(10)    NOT NULL,
  bytes   BIGINT      NOT NULL DEFAULT 0,
  dropped BIGINT      NOT NULL DEFAULT 0,
  PRIMARY KEY (app, day)
) ENGINE=InnoDB;

-- migrate down
DROP TABLE app_log_day;
ALTER TABLE run_log_state DROP COLUMN dropped_quota;
ALTER TABLE app DROP COLUMN max_log_bytes_per_day;
