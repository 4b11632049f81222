-- migrate up
-- Every periodic query O(its work): see the MySQL migration of the same
-- version.
DROP INDEX idx_job_due;
CREATE INDEX idx_job_due ON job (enabled, paused, next_fire_at);
CREATE INDEX idx_job_handler ON job (handler, id);
CREATE INDEX idx_run_scheduled ON job_run (scheduled_at, trigger_kind, job_id);
CREATE INDEX idx_workflow_run_scheduled ON workflow_run (scheduled_at, trigger_kind, workflow_id);
CREATE TABLE app_job_count (
  app   VARCHAR(64) NOT NULL PRIMARY KEY,
  jobs  BIGINT      NOT NULL DEFAULT 0
);
INSERT INTO app_job_count (app, jobs) SELECT app, COUNT(*) FROM job WHERE workflow_id IS NULL GROUP BY app;

-- migrate down
DROP TABLE app_job_count;
DROP INDEX idx_workflow_run_scheduled;
DROP INDEX idx_run_scheduled;
DROP INDEX idx_job_handler;
DROP INDEX idx_job_due;
CREATE INDEX idx_job_due ON job (enabled, next_fire_at);
