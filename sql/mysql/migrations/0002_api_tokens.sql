-- migrate up
-- Personal API tokens for the CLI and automation (issue #7).
--
-- A token is "sjt_" followed by 52 base32 characters (256 random bits). It is
-- shown once, when it is created; the database keeps only its SHA-256 hash.
-- A fast hash is enough here, unlike for passwords: the secret is a long
-- random value, not something a person chose, so there is nothing to guess
-- by brute force, and a lookup by hash stays one indexed read per request.
--
-- prefix is the start of the token ("sjt_" + 8 characters) so that people
-- can tell their tokens apart in lists and audit entries; it does not
-- authenticate anything. role_cap, when not empty, limits the token to a
-- role below its user's (the token never has more rights than its user has
-- now). revoked_at is set instead of deleting the row, so that lists and
-- error messages can say when a token was revoked.
CREATE TABLE api_token (
  id            BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id       BIGINT       NOT NULL,
  name          VARCHAR(64)  NOT NULL,
  prefix        VARCHAR(16)  NOT NULL,
  hash          CHAR(64)     NOT NULL,
  role_cap      VARCHAR(16)  NOT NULL DEFAULT '',
  created_at    BIGINT       NOT NULL,
  last_used_at  BIGINT       NULL,
  expires_at    BIGINT       NULL,
  revoked_at    BIGINT       NULL,
  UNIQUE KEY uk_api_token_hash (hash),
  KEY idx_api_token_user (user_id, id)
) ENGINE=InnoDB;

-- migrate down
DROP TABLE IF EXISTS api_token;
