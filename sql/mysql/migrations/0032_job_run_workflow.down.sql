ALTER TABLE job_run DROP COLUMN workflow;
