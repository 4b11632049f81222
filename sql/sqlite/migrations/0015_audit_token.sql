-- migrate up
-- audit_log.token_id: see the MySQL migration of the same version.
ALTER TABLE audit_log ADD COLUMN token_id BIGINT NULL;
CREATE INDEX idx_audit_actor ON audit_log (actor, id);

-- migrate down
DROP INDEX idx_audit_actor;
ALTER TABLE audit_log DROP COLUMN token_id;
