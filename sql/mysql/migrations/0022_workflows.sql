-- migrate up
-- Workflows (issue 22, docs/workflows.md): a named DAG of nodes per app,
-- its runs and the runs of its nodes.
--
-- workflow holds the current definition as one JSON document (definition:
-- admin/workflow.Definition with its defaults), not as node and edge rows:
-- it is validated, decided on and laid out as a whole, an update replaces
-- the whole graph at once (the version bumped), and a run reads the graph
-- it started with from workflow_version. The columns the scheduler selects
-- on (enabled, next_fire_at) and the list shows (cron_expr, time_zone,
-- failure_policy, node_count) are columns of their own.
CREATE TABLE workflow (
  id             BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
  app            VARCHAR(64)   NOT NULL,
  name           VARCHAR(128)  NOT NULL,
  description    VARCHAR(1024) NOT NULL DEFAULT '',
  cron_expr      VARCHAR(255)  NOT NULL DEFAULT '',
  time_zone      VARCHAR(64)   NOT NULL DEFAULT 'UTC',
  calendar       VARCHAR(64)   NOT NULL DEFAULT '',
  enabled        TINYINT       NOT NULL DEFAULT 1,
  failure_policy VARCHAR(16)   NOT NULL DEFAULT 'stop',
  definition     MEDIUMTEXT    NOT NULL,
  node_count     INT           NOT NULL DEFAULT 0,
  version        BIGINT        NOT NULL DEFAULT 1,
  next_fire_at   BIGINT        NULL,
  created_at     BIGINT        NOT NULL,
  created_by     VARCHAR(64)   NOT NULL DEFAULT '',
  updated_at     BIGINT        NOT NULL,
  updated_by     VARCHAR(64)   NOT NULL DEFAULT '',
  UNIQUE KEY uk_workflow_app_name (app, name),
  KEY idx_workflow_due (enabled, next_fire_at)
) ENGINE=InnoDB;

-- Every version of every definition, written with it: a run draws and
-- decides on the graph of the version it started with, whatever was saved
-- since. Kept when the workflow is deleted, as job runs are.
CREATE TABLE workflow_version (
  workflow_id BIGINT      NOT NULL,
  version     BIGINT      NOT NULL,
  definition  MEDIUMTEXT  NOT NULL,
  created_at  BIGINT      NOT NULL,
  created_by  VARCHAR(64) NOT NULL DEFAULT '',
  PRIMARY KEY (workflow_id, version)
) ENGINE=InnoDB;

-- One run of a workflow, keyed (workflow_id, run_key): the run key is the
-- scheduled instant of a firing or the business date of a backfill (see
-- admin/store.WorkflowRunKeyAt and WorkflowRunKeyDate), so a second
-- creation of the same run, by a leader after failover or a second click,
-- finds the first. reason and reason_msg say why it ended so (English and
-- admin/msg code, as job_run.error and error_msg). reruns counts the
-- reruns from a node: node runs are keyed by it.
CREATE TABLE workflow_run (
  id                 BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
  workflow_id        BIGINT        NOT NULL,
  app                VARCHAR(64)   NOT NULL,
  run_key            VARCHAR(64)   NOT NULL,
  workflow_version   BIGINT        NOT NULL,
  scheduled_at       BIGINT        NOT NULL,
  business_date      VARCHAR(10)   NOT NULL,
  trigger_kind       VARCHAR(16)   NOT NULL,
  status             VARCHAR(24)   NOT NULL,
  params             MEDIUMTEXT    NOT NULL,
  reason             VARCHAR(2048) NOT NULL DEFAULT '',
  reason_msg         VARCHAR(2048) NOT NULL DEFAULT '',
  reruns             INT           NOT NULL DEFAULT 0,
  epoch              BIGINT        NOT NULL,
  created_by         VARCHAR(64)   NOT NULL DEFAULT '',
  created_at         BIGINT        NOT NULL,
  started_at         BIGINT        NULL,
  finished_at        BIGINT        NULL,
  UNIQUE KEY uk_workflow_run_key (workflow_id, run_key),
  KEY idx_workflow_run_history (workflow_id, id),
  KEY idx_workflow_run_date (workflow_id, business_date),
  KEY idx_workflow_run_status (status)
) ENGINE=InnoDB;

-- One run of one node in one workflow run, keyed (workflow_run_id,
-- node_key, rerun): created once, whatever the leader does; rerun is 0
-- but for the nodes of a rerun (the workflow run's reruns then). It links
-- to the job run it created (NULL for a node skipped, or before the job
-- run exists).
CREATE TABLE workflow_node_run (
  id              BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
  workflow_run_id BIGINT        NOT NULL,
  node_key        VARCHAR(128)  NOT NULL,
  rerun           INT           NOT NULL DEFAULT 0,
  status          VARCHAR(24)   NOT NULL,
  job_run_id      BIGINT        NULL,
  reason          VARCHAR(2048) NOT NULL DEFAULT '',
  reason_msg      VARCHAR(2048) NOT NULL DEFAULT '',
  epoch           BIGINT        NOT NULL,
  created_at      BIGINT        NOT NULL,
  finished_at     BIGINT        NULL,
  UNIQUE KEY uk_workflow_node_run_key (workflow_run_id, node_key, rerun),
  KEY idx_workflow_node_run_job_run (job_run_id)
) ENGINE=InnoDB;

-- migrate down
DROP TABLE workflow_node_run;
DROP TABLE workflow_run;
DROP TABLE workflow_version;
DROP TABLE workflow;
