-- migrate up
-- Users who sign in through a directory (issue 35): where a user comes from
-- (local: a password here; oidc; ldap), the subject the directory knows them
-- by (NULL for local users; one user per source and subject), their e-mail,
-- when the directory last answered for them and when an admin last began
-- to ask (Unix ms), why they are refused
-- ('' = not refused) and, for OIDC, the refresh token the admin rechecks
-- them with (sealed with a key derived from the executor secret).
-- sso_login holds the pending OIDC sign-ins by the hash of their state.
ALTER TABLE app_user ADD COLUMN source VARCHAR(16) NOT NULL DEFAULT 'local';
ALTER TABLE app_user ADD COLUMN subject VARCHAR(255) NULL;
ALTER TABLE app_user ADD COLUMN email VARCHAR(255) NOT NULL DEFAULT '';
ALTER TABLE app_user ADD COLUMN checked_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE app_user ADD COLUMN recheck_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE app_user ADD COLUMN refused VARCHAR(255) NOT NULL DEFAULT '';
ALTER TABLE app_user ADD COLUMN refresh_token TEXT NULL;
CREATE UNIQUE INDEX uk_user_subject ON app_user (source, subject);
CREATE TABLE sso_login (
  state_hash  CHAR(64)     NOT NULL PRIMARY KEY,
  nonce       VARCHAR(64)  NOT NULL,
  verifier    VARCHAR(128) NOT NULL,
  return_to   VARCHAR(512) NOT NULL,
  expires_at  BIGINT       NOT NULL,
  KEY idx_sso_login_expiry (expires_at)
) ENGINE=InnoDB;

-- migrate down
DROP TABLE sso_login;
DROP INDEX uk_user_subject ON app_user;
ALTER TABLE app_user DROP COLUMN refresh_token;
ALTER TABLE app_user DROP COLUMN refused;
ALTER TABLE app_user DROP COLUMN recheck_at;
ALTER TABLE app_user DROP COLUMN checked_at;
ALTER TABLE app_user DROP COLUMN email;
ALTER TABLE app_user DROP COLUMN subject;
ALTER TABLE app_user DROP COLUMN source;
