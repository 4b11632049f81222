-- migrate up
-- A job's runs by status in one index range (docs/performance.md,
-- "Periodic queries at a million jobs").
--
-- idx_run_job_status (job_id, status, finished_at) replaces
-- idx_run_job_id (job_id, id), whose order no query uses any more (a job's
-- runs are listed by scheduled time, uk_run_key). Every "runs of this job
-- in this state" question reads only those runs: the start round's overlap
-- check of a queue or replace job (its running runs), a job's active runs,
-- DeleteJob's pending and running runs, and a job's last success
-- (MAX(finished_at): one entry). On idx_run_job_id they read the job's whole
-- history, or, on idx_run_status_id, every running run of every job.
--
-- The index count of job_run stays the same. Building it takes minutes at
-- millions of runs (online: docs/operations.md, "Upgrading").
ALTER TABLE job_run DROP INDEX idx_run_job_id, ADD KEY idx_run_job_status (job_id, status, finished_at);

-- migrate down
ALTER TABLE job_run DROP INDEX idx_run_job_status, ADD INDEX idx_run_job_id (job_id, id);
