ALTER TABLE job DROP COLUMN record_max_attempts;
ALTER TABLE job DROP COLUMN uncertain_policy;
ALTER TABLE job DROP COLUMN dedup_scope;
