-- Users renamed by the up migration keep their new names.
CREATE TABLE app_user_case (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  username      VARCHAR(64)  NOT NULL,
  password_hash VARCHAR(255) NOT NULL,
  role          VARCHAR(16)  NOT NULL,
  created_at    BIGINT       NOT NULL,
  apps          VARCHAR(2000) NOT NULL DEFAULT ''
);
INSERT INTO app_user_case (id, username, password_hash, role, created_at, apps)
SELECT id, username, password_hash, role, created_at, apps FROM app_user;
DELETE FROM sqlite_sequence WHERE name = 'app_user_case';
INSERT INTO sqlite_sequence (name, seq) SELECT 'app_user_case', seq FROM sqlite_sequence WHERE name = 'app_user';
DROP TABLE app_user;
ALTER TABLE app_user_case RENAME TO app_user;
CREATE UNIQUE INDEX uk_user_name ON app_user (username);

DROP INDEX idx_api_token_parent;
ALTER TABLE api_token DROP COLUMN parent_id;
ALTER TABLE alarm_event DROP COLUMN app;
ALTER TABLE audit_log DROP COLUMN owner_id;
ALTER TABLE audit_log DROP COLUMN app;
