-- migrate up
-- Two indexes of job_run that no query reads any more (issue 31, per-run
-- cost of issue 36): idx_run_status_id (status, id) and idx_run_app_id
-- (app, id) served run lists newest first by id (migration 0008); the lists
-- page by scheduled time since migration 0030 (idx_run_status and
-- idx_run_app_sched, whose entries end with the primary key). Every status
-- change of a run rewrote an entry of idx_run_status_id: a run changes
-- status at least twice. BenchmarkStartRuns and BenchmarkFinishResults
-- measure the starts and settles with and without them side by side.
ALTER TABLE job_run DROP INDEX idx_run_status_id, DROP INDEX idx_run_app_id;

-- migrate down
ALTER TABLE job_run ADD INDEX idx_run_status_id (status, id), ADD INDEX idx_run_app_id (app, id);
