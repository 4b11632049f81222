-- migrate up
-- Apps as objects (issue 33): an app was only a name on jobs and executors.
-- A row holds what a team says of its app (a description, its owners) and
-- its version for guarded edits; the limits of issue 33 come as columns
-- of this table. Every app that has a job or an executor gets its row here,
-- with nothing said yet; the admin creates the row of a new app when a job
-- or an executor first names it (store.EnsureApp), so the table lists every
-- app from now on.
CREATE TABLE app (
  name         VARCHAR(64)   NOT NULL PRIMARY KEY,
  description  VARCHAR(1000) NOT NULL DEFAULT '',
  owners       VARCHAR(2600) NOT NULL DEFAULT '',
  version      BIGINT        NOT NULL DEFAULT 1,
  created_at   BIGINT        NOT NULL,
  created_by   VARCHAR(64)   NOT NULL DEFAULT '',
  updated_at   BIGINT        NOT NULL,
  updated_by   VARCHAR(64)   NOT NULL DEFAULT ''
) ENGINE=InnoDB;
INSERT IGNORE INTO app (name, created_at, updated_at)
SELECT app, CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED), CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) FROM app_job_count;
INSERT IGNORE INTO app (name, created_at, updated_at)
SELECT DISTINCT app, CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED), CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) FROM executor;

-- migrate down
DROP TABLE app;
