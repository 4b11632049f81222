ALTER TABLE audit_log DROP INDEX idx_audit_actor, DROP COLUMN token_id;
