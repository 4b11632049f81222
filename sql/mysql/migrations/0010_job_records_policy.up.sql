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
ALTER TABLE job ADD COLUMN dedup_scope VARCHAR(160) NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN uncertain_policy VARCHAR(8) NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN record_max_attempts INT NOT NULL DEFAULT 0;
