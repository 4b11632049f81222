-- migrate up
-- Apps as objects: see the MySQL migration of the same version.
CREATE TABLE app (
  name         VARCHAR(64)   NOT NULL PRIMARY KEY,
  description  VARCHAR(1000) NOT NULL DEFAULT '',
  owners       VARCHAR(2600) NOT NULL DEFAULT '',
  version      BIGINT        NOT NULL DEFAULT 1,
  created_at   BIGINT        NOT NULL,
  created_by   VARCHAR(64)   NOT NULL DEFAULT '',
  updated_at   BIGINT        NOT NULL,
  updated_by   VARCHAR(64)   NOT NULL DEFAULT ''
);
INSERT OR IGNORE INTO app (name, created_at, updated_at)
SELECT app, CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM app_job_count;
INSERT OR IGNORE INTO app (name, created_at, updated_at)
SELECT DISTINCT app, CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM executor;

-- migrate down
DROP TABLE app;
