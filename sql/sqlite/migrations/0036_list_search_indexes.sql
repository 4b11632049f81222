-- migrate up
-- Server-side search, filters, sort and keyset paging of the job and run
-- lists: see the MySQL migration of the same version.
ALTER TABLE job ADD COLUMN state TEXT GENERATED ALWAYS AS (CASE WHEN enabled = 0 THEN 'disabled' WHEN completed_at IS NOT NULL THEN 'completed'
                                                              WHEN paused = 1 THEN 'paused' ELSE 'scheduled' END) VIRTUAL;
CREATE INDEX idx_job_name ON job (name, id);
CREATE INDEX idx_job_state_name ON job (state, name, id);
CREATE INDEX idx_job_app_state_name ON job (app, state, name, id);
CREATE INDEX idx_job_next ON job (next_fire_at, id);
CREATE INDEX idx_run_trigger_sched ON job_run (trigger_kind, scheduled_at, id);

-- migrate down
DROP INDEX idx_run_trigger_sched;
DROP INDEX idx_job_next;
DROP INDEX idx_job_app_state_name;
DROP INDEX idx_job_state_name;
DROP INDEX idx_job_name;
ALTER TABLE job DROP COLUMN state;
