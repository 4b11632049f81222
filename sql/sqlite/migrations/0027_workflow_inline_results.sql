-- migrate up
-- Inline workflow nodes and small results: see the MySQL migration of the
-- same version.
ALTER TABLE job ADD COLUMN workflow_id INTEGER NULL;
CREATE INDEX idx_job_workflow ON job (workflow_id);
ALTER TABLE slot_attempt ADD COLUMN result TEXT NULL;

-- migrate down
ALTER TABLE slot_attempt DROP COLUMN result;
DROP INDEX idx_job_workflow;
ALTER TABLE job DROP COLUMN workflow_id;
