-- migrate up
-- Dead letters (issue 37): a slot whose attempt failed permanently or used
-- up its retries, kept with what it ran with — the run key (job_id,
-- scheduled_at), the dead attempt's token and number, the run's params and
-- the slot's param, its error and class, its record counters — written in
-- the transaction that records the failure. A replay (by hand) gives the
-- slot a new attempt of the same run and records who replayed it, when,
-- the new token and how many times. Kept --dead-retention after died_at,
-- whatever happens to the run (admin/retention).
CREATE TABLE dead_letter (
  id            BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
  app           VARCHAR(64)   NOT NULL,
  job_id        BIGINT        NOT NULL,
  job_name      VARCHAR(128)  NOT NULL,
  handler       VARCHAR(128)  NOT NULL,
  run_id        BIGINT        NOT NULL,
  scheduled_at  BIGINT        NOT NULL,
  slot          INT           NOT NULL,
  token         BIGINT        NOT NULL,
  attempt       INT           NOT NULL,
  params        TEXT          NOT NULL,
  slot_param    TEXT          NOT NULL,
  error         TEXT          NOT NULL,
  error_msg     TEXT          NOT NULL,
  error_class   VARCHAR(16)   NOT NULL,
  processed     BIGINT        NOT NULL DEFAULT 0,
  skipped       BIGINT        NOT NULL DEFAULT 0,
  failed        BIGINT        NOT NULL DEFAULT 0,
  uncertain     BIGINT        NOT NULL DEFAULT 0,
  died_at       BIGINT        NOT NULL,
  replayed_at   BIGINT        NULL,
  replayed_by   VARCHAR(64)   NOT NULL DEFAULT '',
  replay_token  BIGINT        NULL,
  replays       INT           NOT NULL DEFAULT 0,
  UNIQUE KEY uk_dead_token (token),
  KEY idx_dead_app (app, id),
  KEY idx_dead_job (job_id, id),
  KEY idx_dead_handler (handler, id),
  KEY idx_dead_class (error_class, id),
  KEY idx_dead_died (died_at, id)
) ENGINE=InnoDB;

-- The params a replay gave a slot of a run instead of the run's (every
-- later attempt of that slot in the run runs with them: retries, moves);
-- deleted with the run.
CREATE TABLE slot_replay_params (
  run_id  BIGINT  NOT NULL,
  slot    INT     NOT NULL,
  params  TEXT    NOT NULL,
  PRIMARY KEY (run_id, slot)
) ENGINE=InnoDB;

-- migrate down
DROP TABLE slot_replay_params;
DROP TABLE dead_letter;
