-- migrate up
-- Log lines shipped by executors (issue #9). See the MySQL migration of the
-- same version for the meaning of each column.
CREATE TABLE run_log (
  run_id    BIGINT       NOT NULL,
  seq       BIGINT       NOT NULL,
  slot      INT          NOT NULL,
  token     BIGINT       NOT NULL,
  attempt   INT          NOT NULL,
  at        BIGINT       NOT NULL,
  level     INT          NOT NULL,
  message   TEXT         NOT NULL,
  attrs     TEXT         NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX idx_run_log_slot ON run_log (run_id, slot, seq);

CREATE TABLE run_log_state (
  run_id           BIGINT   NOT NULL PRIMARY KEY,
  next_seq         BIGINT   NOT NULL DEFAULT 1,
  stored_lines     BIGINT   NOT NULL DEFAULT 0,
  stored_bytes     BIGINT   NOT NULL DEFAULT 0,
  dropped_executor BIGINT   NOT NULL DEFAULT 0,
  dropped_cap      BIGINT   NOT NULL DEFAULT 0
);

-- migrate down
DROP TABLE IF EXISTS run_log_state;
DROP TABLE IF EXISTS run_log;
