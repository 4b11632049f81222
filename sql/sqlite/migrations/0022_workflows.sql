-- migrate up
-- Workflows: see the MySQL migration of the same version.
CREATE TABLE workflow (
  id             INTEGER       PRIMARY KEY AUTOINCREMENT,
  app            VARCHAR(64)   NOT NULL,
  name           VARCHAR(128)  NOT NULL,
  description    VARCHAR(1024) NOT NULL DEFAULT '',
  cron_expr      VARCHAR(255)  NOT NULL DEFAULT '',
  time_zone      VARCHAR(64)   NOT NULL DEFAULT 'UTC',
  calendar       VARCHAR(64)   NOT NULL DEFAULT '',
  enabled        TINYINT       NOT NULL DEFAULT 1,
  failure_policy VARCHAR(16)   NOT NULL DEFAULT 'stop',
  definition     TEXT          NOT NULL,
  node_count     INTEGER       NOT NULL DEFAULT 0,
  version        BIGINT        NOT NULL DEFAULT 1,
  next_fire_at   BIGINT        NULL,
  created_at     BIGINT        NOT NULL,
  created_by     VARCHAR(64)   NOT NULL DEFAULT '',
  updated_at     BIGINT        NOT NULL,
  updated_by     VARCHAR(64)   NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX uk_workflow_app_name ON workflow (app, name);
CREATE INDEX idx_workflow_due ON workflow (enabled, next_fire_at);

CREATE TABLE workflow_version (
  workflow_id BIGINT      NOT NULL,
  version     BIGINT      NOT NULL,
  definition  TEXT        NOT NULL,
  created_at  BIGINT      NOT NULL,
  created_by  VARCHAR(64) NOT NULL DEFAULT '',
  PRIMARY KEY (workflow_id, version)
);

CREATE TABLE workflow_run (
  id                 INTEGER       PRIMARY KEY AUTOINCREMENT,
  workflow_id        BIGINT        NOT NULL,
  app                VARCHAR(64)   NOT NULL,
  run_key            VARCHAR(64)   NOT NULL,
  workflow_version   BIGINT        NOT NULL,
  scheduled_at       BIGINT        NOT NULL,
  business_date      VARCHAR(10)   NOT NULL,
  trigger_kind       VARCHAR(16)   NOT NULL,
  status             VARCHAR(24)   NOT NULL,
  params             TEXT          NOT NULL,
  reason             VARCHAR(2048) NOT NULL DEFAULT '',
  reason_msg         VARCHAR(2048) NOT NULL DEFAULT '',
  reruns             INTEGER       NOT NULL DEFAULT 0,
  epoch              BIGINT        NOT NULL,
  created_by         VARCHAR(64)   NOT NULL DEFAULT '',
  created_at         BIGINT        NOT NULL,
  started_at         BIGINT        NULL,
  finished_at        BIGINT        NULL
);
CREATE UNIQUE INDEX uk_workflow_run_key ON workflow_run (workflow_id, run_key);
CREATE INDEX idx_workflow_run_history ON workflow_run (workflow_id, id);
CREATE INDEX idx_workflow_run_date ON workflow_run (workflow_id, business_date);
CREATE INDEX idx_workflow_run_status ON workflow_run (status);

CREATE TABLE workflow_node_run (
  id              INTEGER       PRIMARY KEY AUTOINCREMENT,
  workflow_run_id BIGINT        NOT NULL,
  node_key        VARCHAR(128)  NOT NULL,
  rerun           INTEGER       NOT NULL DEFAULT 0,
  status          VARCHAR(24)   NOT NULL,
  job_run_id      BIGINT        NULL,
  reason          VARCHAR(2048) NOT NULL DEFAULT '',
  reason_msg      VARCHAR(2048) NOT NULL DEFAULT '',
  epoch           BIGINT        NOT NULL,
  created_at      BIGINT        NOT NULL,
  finished_at     BIGINT        NULL
);
CREATE UNIQUE INDEX uk_workflow_node_run_key ON workflow_node_run (workflow_run_id, node_key, rerun);
CREATE INDEX idx_workflow_node_run_job_run ON workflow_node_run (job_run_id);

-- migrate down
DROP TABLE workflow_node_run;
DROP TABLE workflow_run;
DROP TABLE workflow_version;
DROP TABLE workflow;
