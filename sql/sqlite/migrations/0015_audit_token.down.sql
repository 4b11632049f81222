DROP INDEX idx_audit_actor;
ALTER TABLE audit_log DROP COLUMN token_id;
