-- migrate up
-- The records policy of a job (package sdk/records), decided by whoever
-- defines the job rather than by the handler's code:
--   dedup_scope          '' / 'run': each run handles each record once;
--                        'job': once per job, across runs (up to the dedup
--                        horizon); any other text names a scope shared by the
--                        runs that resolve to the same name, with {date}
--                        {month} {year} replaced by the run's scheduled time
--                        in the job's time zone (e.g. 'settle:{date}').
--   uncertain_policy     '' (the handler's Config decides), 'retry', 'skip'.
--   record_max_attempts  0 (the handler's Config decides) or 1..100.
ALTER TABLE job
  ADD COLUMN dedup_scope VARCHAR(160) NOT NULL DEFAULT '',
  ADD COLUMN uncertain_policy VARCHAR(8) NOT NULL DEFAULT '',
  ADD COLUMN record_max_attempts INT NOT NULL DEFAULT 0;
-- A run keeps the policy (and the time zone its scope's placeholders are
-- resolved in) its job had when the run was created, as it keeps params and
-- slot_count: an edit of the job while a run is active must not move the
-- run's later attempts (retries, moved slots) to another dedup scope.
ALTER TABLE job_run
  ADD COLUMN time_zone VARCHAR(64) NOT NULL DEFAULT 'UTC',
  ADD COLUMN dedup_scope VARCHAR(160) NOT NULL DEFAULT '',
  ADD COLUMN uncertain_policy VARCHAR(8) NOT NULL DEFAULT '',
  ADD COLUMN record_max_attempts INT NOT NULL DEFAULT 0;

-- migrate down
ALTER TABLE job_run DROP COLUMN record_max_attempts, DROP COLUMN uncertain_policy, DROP COLUMN dedup_scope, DROP COLUMN time_zone;
ALTER TABLE job DROP COLUMN record_max_attempts, DROP COLUMN uncertain_policy, DROP COLUMN dedup_scope;
