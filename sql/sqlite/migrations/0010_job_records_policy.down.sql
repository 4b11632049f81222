ALTER TABLE job_run DROP COLUMN record_max_attempts;
ALTER TABLE job_run DROP COLUMN uncertain_policy;
ALTER TABLE job_run DROP COLUMN dedup_scope;
ALTER TABLE job_run DROP COLUMN time_zone;
ALTER TABLE job DROP COLUMN record_max_attempts;
ALTER TABLE job DROP COLUMN uncertain_policy;
ALTER TABLE job DROP COLUMN dedup_scope;
