ALTER TABLE slot_attempt DROP COLUMN result;
DROP INDEX idx_job_workflow;
ALTER TABLE job DROP COLUMN workflow_id;
