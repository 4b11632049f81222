ALTER TABLE slot_attempt DROP COLUMN result;
ALTER TABLE job DROP KEY idx_job_workflow, DROP COLUMN workflow_id;
