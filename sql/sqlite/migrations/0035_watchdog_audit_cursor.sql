-- migrate up
-- The watchdog's incremental gap audit: see the MySQL migration of the same
-- version.
CREATE TABLE job_audit (
  job_id         BIGINT NOT NULL PRIMARY KEY,
  audit_next_at  BIGINT NULL
);
CREATE INDEX idx_job_audit_next ON job_audit (audit_next_at, job_id);
INSERT INTO job_audit (job_id, audit_next_at)
SELECT id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM job WHERE workflow_id IS NULL;
CREATE TABLE workflow_audit (
  workflow_id    BIGINT NOT NULL PRIMARY KEY,
  audit_next_at  BIGINT NULL
);
CREATE INDEX idx_workflow_audit_next ON workflow_audit (audit_next_at, workflow_id);
INSERT INTO workflow_audit (workflow_id, audit_next_at)
SELECT id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM workflow;
CREATE INDEX idx_workflow_run_of_schedule ON workflow_run (workflow_id, scheduled_at);

-- migrate down
DROP INDEX idx_workflow_run_of_schedule;
DROP TABLE workflow_audit;
DROP TABLE job_audit;
