-- Inline workflow nodes and small results: see the MySQL migration of the
-- same version.
ALTER TABLE job ADD COLUMN workflow_id INTEGER NULL;
CREATE INDEX idx_job_workflow ON job (workflow_id);
ALTER TABLE slot_attempt ADD COLUMN result TEXT NULL;
