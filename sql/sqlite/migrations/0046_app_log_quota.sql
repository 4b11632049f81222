-- migrate up
-- A quota on run-log bytes per app and day: see the MySQL migration of the
-- same version.
ALTER TABLE app ADD COLUMN max_log_bytes_per_day BIGINT NULL;
ALTER TABLE run_log_state ADD COLUMN dropped_quota BIGINT NOT NULL DEFAULT 0;
CREATE TABLE app_log_day (
  app     TEXT    NOT NULL,
  day     TEXT    NOT NULL,
  bytes   INTEGER NOT NULL DEFAULT 0,
  dropped INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (app, day)
);

-- migrate down
DROP TABLE app_log_day;
ALTER TABLE run_log_state DROP COLUMN dropped_quota;
ALTER TABLE app DROP COLUMN max_log_bytes_per_day;
