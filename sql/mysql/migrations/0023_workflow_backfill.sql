-- migrate up
-- Backfills of a workflow (docs/workflows.md, "Backfill"): the runs of a
-- range of business dates, each keyed date:YYYY-MM-DD like any other run of
-- that date, started by the leader at most parallel at a time, oldest or
-- newest date first (the order of their ids). workflow_run.backfill_id is
-- the backfill a run belongs to (0: none). rerun_nodes are the nodes a
-- rerun from a node runs again (a JSON array of node keys; NULL before the
-- first rerun): the others keep their state.
CREATE TABLE workflow_backfill (
  id            BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
  workflow_id   BIGINT       NOT NULL,
  app           VARCHAR(64)  NOT NULL,
  from_date     VARCHAR(10)  NOT NULL,
  to_date       VARCHAR(10)  NOT NULL,
  newest_first  TINYINT      NOT NULL DEFAULT 0,
  parallel      INT          NOT NULL,
  only_missing  TINYINT      NOT NULL DEFAULT 0,
  created_by    VARCHAR(64)  NOT NULL DEFAULT '',
  created_at    BIGINT       NOT NULL,
  KEY idx_workflow_backfill (workflow_id, id)
) ENGINE=InnoDB;
ALTER TABLE workflow_run ADD COLUMN backfill_id BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN rerun_nodes MEDIUMTEXT NULL,
  ADD KEY idx_workflow_run_backfill (backfill_id, status);

-- migrate down
ALTER TABLE workflow_run DROP KEY idx_workflow_run_backfill, DROP COLUMN rerun_nodes, DROP COLUMN backfill_id;
DROP TABLE workflow_backfill;
