DROP INDEX idx_workflow_run_backfill;
ALTER TABLE workflow_run DROP COLUMN rerun_nodes;
ALTER TABLE workflow_run DROP COLUMN backfill_id;
DROP TABLE workflow_backfill;
