-- migrate up
-- Backfills of a workflow: see the MySQL migration of the same version.
CREATE TABLE workflow_backfill (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  workflow_id   BIGINT       NOT NULL,
  app           VARCHAR(64)  NOT NULL,
  from_date     VARCHAR(10)  NOT NULL,
  to_date       VARCHAR(10)  NOT NULL,
  newest_first  INTEGER      NOT NULL DEFAULT 0,
  parallel      INTEGER      NOT NULL,
  only_missing  INTEGER      NOT NULL DEFAULT 0,
  created_by    VARCHAR(64)  NOT NULL DEFAULT '',
  created_at    BIGINT       NOT NULL
);
CREATE INDEX idx_workflow_backfill ON workflow_backfill (workflow_id, id);
ALTER TABLE workflow_run ADD COLUMN backfill_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflow_run ADD COLUMN rerun_nodes TEXT NULL;
CREATE INDEX idx_workflow_run_backfill ON workflow_run (backfill_id, status);

-- migrate down
DROP INDEX idx_workflow_run_backfill;
ALTER TABLE workflow_run DROP COLUMN rerun_nodes;
ALTER TABLE workflow_run DROP COLUMN backfill_id;
DROP TABLE workflow_backfill;
