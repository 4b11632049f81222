-- Users renamed by the up migration keep their new names.
ALTER TABLE app_user MODIFY username VARCHAR(64) NOT NULL;
ALTER TABLE api_token DROP INDEX idx_api_token_parent, DROP COLUMN parent_id;
ALTER TABLE alarm_event DROP COLUMN app;
ALTER TABLE audit_log DROP COLUMN app, DROP COLUMN owner_id;
