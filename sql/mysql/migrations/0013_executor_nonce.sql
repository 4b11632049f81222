-- migrate up
-- executor_nonce: the nonces of the signed executor requests (heartbeats,
-- results, logs, deregistration) that an admin replica accepted, so that a
-- request captured on the wire cannot be replayed to another replica within
-- the ±30 s clock window (each replica used to remember only its own).
-- A nonce is inserted once (the primary key refuses a second one) and kept
-- until expires_at (Unix ms: the request's timestamp + the window), plus a
-- margin for the replicas' clock skew; the replicas purge expired rows.
CREATE TABLE executor_nonce (
  nonce      VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  expires_at BIGINT      NOT NULL,
  KEY idx_nonce_expires (expires_at)
) ENGINE=InnoDB;

-- An address belongs to one executor identity at a time (an XXL-JOB
-- registration of a live executor's address is refused, admin/xxljob), and
-- pushes find the executor at an address: both look executors up by address.
ALTER TABLE executor ADD INDEX idx_executor_address (address);

-- migrate down
ALTER TABLE executor DROP INDEX idx_executor_address;
DROP TABLE executor_nonce;
