-- migrate up
-- Inline workflow nodes and small results (issue 22, docs/workflows.md).
-- job.workflow_id: the workflow that owns the job (NULL for an ordinary
-- job). Each inline node of a workflow is run through a job the workflow
-- owns, written with the workflow's definition; such jobs are not listed
-- with the ordinary ones and are deleted with their workflow.
-- slot_attempt.result: the JSON result a succeeded slot's handler returned
-- (at most 16 KiB; NULL: none).
ALTER TABLE job ADD COLUMN workflow_id BIGINT NULL,
  ADD KEY idx_job_workflow (workflow_id);
ALTER TABLE slot_attempt ADD COLUMN result TEXT NULL;

-- migrate down
ALTER TABLE slot_attempt DROP COLUMN result;
ALTER TABLE job DROP KEY idx_job_workflow, DROP COLUMN workflow_id;
