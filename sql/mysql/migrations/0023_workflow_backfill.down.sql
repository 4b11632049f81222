ALTER TABLE workflow_run DROP KEY idx_workflow_run_backfill, DROP COLUMN rerun_nodes, DROP COLUMN backfill_id;
DROP TABLE workflow_backfill;
