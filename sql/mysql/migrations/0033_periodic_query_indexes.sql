-- migrate up
-- Every periodic query O(its work) (docs/performance.md, "Periodic queries
-- at a million jobs"; TestPeriodicQueriesExamineOnlyTheirWork).
--
-- idx_job_due gains paused: the leader's next-due wake-up, its pre-read
-- count, the claim and the watchdog's overdue check ask for enabled = 1 AND
-- paused = 0 by next_fire_at; on (enabled, next_fire_at) they read past
-- every paused job (whose next_fire_at stays where pausing left it), and
-- MIN(next_fire_at) read every enabled job.
--
-- idx_run_scheduled (scheduled_at, trigger_kind, job_id) answers the
-- watchdog's per-minute count of cron runs in a window from the index
-- alone; without it the count read all of job_run. idx_workflow_run_scheduled
-- does the same for its count of workflow runs.
--
-- idx_job_handler (handler, id) finds the jobs of one handler (the hourly
-- check of the dedup-archive jobs) without paging every job.
--
-- app_job_count holds the number of ordinary jobs (not a workflow's inline
-- node) of each app, kept by CreateJob and DeleteJob in the transaction
-- that adds or removes the job: GET /api/v1/apps reads it instead of
-- counting every job. Filled here from the jobs there are.
--
-- On a large installation these statements build indexes on job and
-- job_run: online (the tables stay writable), but they take minutes at
-- millions of rows (docs/operations.md, "Upgrading").
ALTER TABLE job DROP INDEX idx_job_due, ADD KEY idx_job_due (enabled, paused, next_fire_at),
  ADD KEY idx_job_handler (handler, id);
ALTER TABLE job_run ADD KEY idx_run_scheduled (scheduled_at, trigger_kind, job_id);
ALTER TABLE workflow_run ADD KEY idx_workflow_run_scheduled (scheduled_at, trigger_kind, workflow_id);
CREATE TABLE app_job_count (
  app   VARCHAR(64) NOT NULL PRIMARY KEY,
  jobs  BIGINT      NOT NULL DEFAULT 0
) ENGINE=InnoDB;
INSERT INTO app_job_count (app, jobs) SELECT app, COUNT(*) FROM job WHERE workflow_id IS NULL GROUP BY app;

-- migrate down
DROP TABLE app_job_count;
ALTER TABLE workflow_run DROP INDEX idx_workflow_run_scheduled;
ALTER TABLE job_run DROP INDEX idx_run_scheduled;
ALTER TABLE job DROP INDEX idx_job_handler, DROP INDEX idx_job_due, ADD KEY idx_job_due (enabled, next_fire_at);
