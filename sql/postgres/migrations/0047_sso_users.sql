-- migrate up
-- Users who sign in through a directory: see the MySQL migration of the
-- same version.
ALTER TABLE app_user ADD COLUMN source TEXT NOT NULL DEFAULT 'local';
ALTER TABLE app_user ADD COLUMN subject TEXT NULL;
ALTER TABLE app_user ADD COLUMN email TEXT NOT NULL DEFAULT '';
ALTER TABLE app_user ADD COLUMN checked_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE app_user ADD COLUMN recheck_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE app_user ADD COLUMN refused TEXT NOT NULL DEFAULT '';
ALTER TABLE app_user ADD COLUMN refresh_token TEXT NULL;
CREATE UNIQUE INDEX uk_user_subject ON app_user (source, subject);
CREATE TABLE sso_login (
  state_hash  TEXT   NOT NULL PRIMARY KEY,
  nonce       TEXT   NOT NULL,
  verifier    TEXT   NOT NULL,
  return_to   TEXT   NOT NULL,
  expires_at  BIGINT NOT NULL
);
CREATE INDEX idx_sso_login_expiry ON sso_login (expires_at);

-- migrate down
DROP TABLE sso_login;
DROP INDEX uk_user_subject;
ALTER TABLE app_user DROP COLUMN refresh_token;
ALTER TABLE app_user DROP COLUMN refused;
ALTER TABLE app_user DROP COLUMN recheck_at;
ALTER TABLE app_user DROP COLUMN checked_at;
ALTER TABLE app_user DROP COLUMN email;
ALTER TABLE app_user DROP COLUMN subject;
ALTER TABLE app_user DROP COLUMN source;
