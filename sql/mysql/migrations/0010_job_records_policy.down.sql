ALTER TABLE job_run DROP COLUMN record_max_attempts, DROP COLUMN uncertain_policy, DROP COLUMN dedup_scope, DROP COLUMN time_zone;
ALTER TABLE job DROP COLUMN record_max_attempts, DROP COLUMN uncertain_policy, DROP COLUMN dedup_scope;
