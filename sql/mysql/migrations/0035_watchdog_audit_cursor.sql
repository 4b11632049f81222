-- migrate up
-- The watchdog's incremental gap audit (admin/watchdog, docs/guarantees.md):
-- one cursor per job (job_audit) and per scheduled workflow
-- (workflow_audit), the next expected instant not audited yet. Each pass
-- reads the cursors that came due (idx_*_audit_next, a range in cursor
-- order), checks those instants against the run rows and moves the cursors
-- on, with an update conditional on the value it read, so that replicas
-- auditing at once check each instant once. NULL: nothing to audit (the
-- job is disabled, paused, completed or has no schedule) until an edit of
-- the job or workflow sets the cursor to the edit.
--
-- Tables of their own rather than columns of job and workflow: the
-- leader's claim never reads or writes them, and a cursor moving on does
-- not lock a job row the claim wants.
--
-- idx_workflow_run_of_schedule (workflow_id, scheduled_at): the audit counts the
-- runs of each workflow in its own range of instants (workflow_run had no
-- such key; job_run has its run key uk_run_key).
--
-- Filled with now: the audit starts from the upgrade, as the old per-minute
-- window did from its first run.
CREATE TABLE job_audit (
  job_id         BIGINT NOT NULL PRIMARY KEY,
  audit_next_at  BIGINT NULL,
  KEY idx_job_audit_next (audit_next_at, job_id)
) ENGINE=InnoDB;
INSERT INTO job_audit (job_id, audit_next_at)
SELECT id, CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) FROM job WHERE workflow_id IS NULL;
CREATE TABLE workflow_audit (
  workflow_id    BIGINT NOT NULL PRIMARY KEY,
  audit_next_at  BIGINT NULL,
  KEY idx_workflow_audit_next (audit_next_at, workflow_id)
) ENGINE=InnoDB;
INSERT INTO workflow_audit (workflow_id, audit_next_at)
SELECT id, CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) FROM workflow;
ALTER TABLE workflow_run ADD KEY idx_workflow_run_of_schedule (workflow_id, scheduled_at);

-- migrate down
ALTER TABLE workflow_run DROP KEY idx_workflow_run_of_schedule;
DROP TABLE workflow_audit;
DROP TABLE job_audit;
