-- migrate up
-- audit_log.token_id is the API token the actor acted with; NULL for a
-- console session, a login, or an entry written before this migration.
-- idx_audit_actor serves the audit log's filter by actor.
ALTER TABLE audit_log ADD COLUMN token_id BIGINT NULL, ADD KEY idx_audit_actor (actor, id);

-- migrate down
ALTER TABLE audit_log DROP INDEX idx_audit_actor, DROP COLUMN token_id;
