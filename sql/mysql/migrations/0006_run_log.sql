-- migrate up
-- Log lines shipped by executors (sdk: Task.Logger, issue #9), kept per run
-- up to a cap (api.RunLogLimits): lines beyond it are counted in
-- run_log_state.dropped_cap, not stored.
--   seq      orders the lines of a run, from 1. It is taken from
--            run_log_state.next_seq under that row's lock, in the transaction
--            that inserts the lines, so the lines of a run commit in seq order
--            and a reader following "seq > last seen" never skips one.
--   slot, token, attempt  the slot attempt that logged it (token = slot_attempt.id)
--   at       the executor's clock when the line was logged, Unix ms
--   level    slog level: -4 debug, 0 info, 4 warn, 8 error
--   attrs    the line's attributes as a JSON object ('' for none)
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
  PRIMARY KEY (run_id, seq),
  KEY idx_run_log_slot (run_id, slot, seq)
) ENGINE=InnoDB;

-- One row per run with logs: the next seq, what is stored (against the
-- cap), and the lines dropped by executors (their buffer was full) and by
-- the admin (over the cap).
CREATE TABLE run_log_state (
  run_id           BIGINT   NOT NULL PRIMARY KEY,
  next_seq         BIGINT   NOT NULL DEFAULT 1,
  stored_lines     BIGINT   NOT NULL DEFAULT 0,
  stored_bytes     BIGINT   NOT NULL DEFAULT 0,
  dropped_executor BIGINT   NOT NULL DEFAULT 0,
  dropped_cap      BIGINT   NOT NULL DEFAULT 0
) ENGINE=InnoDB;

-- migrate down
DROP TABLE IF EXISTS run_log_state;
DROP TABLE IF EXISTS run_log;
