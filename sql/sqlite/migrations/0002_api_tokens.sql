-- migrate up
-- Personal API tokens for the CLI and automation (issue #7). See the MySQL
-- migration of the same version for the meaning of each column; in short:
-- only the SHA-256 hash of the token is stored (a fast hash is enough for a
-- long random secret, unlike for passwords), prefix is for display only,
-- role_cap optionally limits the token below its user's role, and
-- revoked_at marks a revoked token instead of deleting it.
CREATE TABLE api_token (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  user_id       BIGINT       NOT NULL,
  name          VARCHAR(64)  NOT NULL,
  prefix        VARCHAR(16)  NOT NULL,
  hash          CHAR(64)     NOT NULL,
  role_cap      VARCHAR(16)  NOT NULL DEFAULT '',
  created_at    BIGINT       NOT NULL,
  last_used_at  BIGINT       NULL,
  expires_at    BIGINT       NULL,
  revoked_at    BIGINT       NULL
);
CREATE UNIQUE INDEX uk_api_token_hash ON api_token (hash);
CREATE INDEX idx_api_token_user ON api_token (user_id, id);

-- migrate down
DROP TABLE IF EXISTS api_token;
