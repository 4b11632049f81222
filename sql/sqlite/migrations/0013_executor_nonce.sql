-- migrate up
-- executor_nonce: the nonces of accepted signed executor requests, so that a
-- captured request cannot be replayed to another admin replica: see the
-- MySQL migration.
CREATE TABLE executor_nonce (
  nonce      VARCHAR(64) NOT NULL PRIMARY KEY,
  expires_at BIGINT      NOT NULL
);
CREATE INDEX idx_nonce_expires ON executor_nonce (expires_at);

-- Executors are looked up by address (address ownership, pushes).
CREATE INDEX idx_executor_address ON executor (address);

-- migrate down
DROP INDEX idx_executor_address;
DROP TABLE executor_nonce;
