DROP INDEX idx_workflow_run_of_schedule;
DROP TABLE workflow_audit;
DROP TABLE job_audit;
