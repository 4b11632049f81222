-- migrate up
-- The workflow context of a workflow node's job run (docs/workflows.md,
-- "Parameters"): a JSON object {"run_id", "node", "business_date",
-- "upstream"} that the executors receive next to the params
-- (protocol.WorkflowContext), NULL for a run that is no workflow node's.
-- Before it, those fields were added to the run's params, which the
-- built-in handlers' strict params refused.
ALTER TABLE job_run ADD COLUMN workflow MEDIUMTEXT NULL;

-- migrate down
ALTER TABLE job_run DROP COLUMN workflow;
