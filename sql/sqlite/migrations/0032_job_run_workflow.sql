-- migrate up
-- The workflow context of a workflow node's job run: see the MySQL
-- migration of the same version.
ALTER TABLE job_run ADD COLUMN workflow TEXT NULL;

-- migrate down
ALTER TABLE job_run DROP COLUMN workflow;
